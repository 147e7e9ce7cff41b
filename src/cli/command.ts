/**
 * What a command declares about itself (src/cli/commands/<name>/index.ts): its name, arguments,
 * flags, help and examples, and its handler, imported only when the command runs. The registry
 * (registry.ts) builds everything else from these: the commander program, the single-command fast
 * start, the help, and the values shell completion offers.
 *
 * A declaration must stay cheap: it is loaded on every start-up, so it imports nothing but data.
 */

/** A command's implementation: what commander's action gets, after the Context (see `settings`). */
export type Handler = (...args: never[]) => Promise<void>;

/** Where `carbon __complete` finds the values of an argument or flag that has no fixed choices. */
export type CompletionSource = 'offsetIds' | 'reviewIds' | 'processingIds' | 'profiles' | 'savedProfiles' | 'configKeys' | 'keyIds';

/**
 * A source, a fixed list, a list that depends on the command's earlier arguments, or `'files'`: a
 * file name, which the shell completes from the disk itself.
 */
export type Values = CompletionSource | 'files' | readonly string[] | ((args: readonly string[]) => readonly string[]);

/**
 * A commander Option or Argument the registry made, carrying the `values` of its declaration for
 * `carbon __complete`: a property, not an import of the registry, so the completion code loaded
 * at run time does not pull the registry into its own lazily initialised part of the bundle.
 */
export interface Completable {
  completionValues?: Values;
}

export interface FlagSpec {
  /** As commander writes them: '-q, --quiet', '--kg <n>', '--no-color'. */
  flags: string;
  description: string;
  /** The only values accepted (commander refuses others, and completion offers them). */
  choices?: readonly string[];
  default?: string;
  /** What completion offers for the flag's value, when there are no choices. */
  values?: Values;
  /** It says what is bought or what it may cost: given twice with two values, a usage error (registry.ts), not the last winning. */
  once?: true;
}

export interface ArgSpec {
  /** As commander writes it: '<id>', '[dollars]'. */
  name: string;
  description: string;
  choices?: readonly string[];
  values?: Values;
}

/**
 * How a command is run. 'api' resolves every setting (keys, engine, retries) into a Context.
 * 'config' only needs to know where the config lives and which profile is meant: a broken
 * CARBON_API_KEY or a profile that does not exist yet must not stop `carbon config` from inspecting
 * or fixing things. 'bare' gets commander's arguments as they are, with no settings at all (the
 * shell completion commands: a broken config never breaks them). 'journal' resolves as 'api' does,
 * but --live and --test filter what is read instead of choosing the key: a key of the other mode
 * is used as it is (`carbon logs`: a sandbox's journal is read with any of its keys). 'ledger'
 * resolves as 'api' does, and reads the ledger's settings (--database, CARBON_BUSY_TIMEOUT_MS,
 * CARBON_JOURNAL…) whatever the engine, as the command opens this machine's ledger even where a
 * base URL names a remote API (`carbon serve`); under the others, a command on the remote engine
 * never opens it, and they are not read. Subcommands inherit it.
 */
export type SettingsKind = 'api' | 'config' | 'bare' | 'journal' | 'ledger';

export interface CommandSpec {
  name: string;
  /** One line, in the list of commands and at the top of the command's help. */
  description: string;
  args?: readonly ArgSpec[];
  flags?: readonly FlagSpec[];
  /** Help text after the flags and before the examples. */
  notes?: string;
  /** Command lines, shown after `$ ` under "Examples:". */
  examples?: readonly string[];
  /** Help text after the examples. */
  epilogue?: string;
  settings?: SettingsKind;
  /** The handler, imported when the command runs (never at start-up). */
  load?: () => Promise<Handler>;
  subcommands?: readonly CommandSpec[];
  /** The subcommand that runs when the parent is given alone (`carbon sandbox keys`). */
  isDefault?: boolean;
  /** Left out of help and completion (not for people). */
  hidden?: boolean;
  /** No --help, and any option or argument is taken as it is (`carbon __complete`). */
  lenient?: boolean;
}

/** The program itself: its global flags and its help. */
export interface RootSpec {
  description: string;
  flags: readonly FlagSpec[];
  examples: readonly string[];
  epilogue: string;
}
