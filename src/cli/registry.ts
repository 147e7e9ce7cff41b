import { Argument, Command, Help, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import type { ArgSpec, CommandSpec, Completable, FlagSpec, Handler, RootSpec, SettingsKind } from './command.js';
import { COMMANDS, ROOT } from './commands/index.js';
import { usage } from './errors.js';
import {
  defaultFlagsNamedAsSuch,
  helpNamesACommand,
  helpWhenBare,
  unknownCommandNamesItsGroup,
  unknownWordsAreCommands,
} from './groups.js';
import { invoke } from './invoke.js';
import { terminalWidth } from './render/fit.js';
import { fitHelpText, wrapCommand } from './render/wrap.js';
import type { ContextOpened } from './run-to-exit.js';
import type { GlobalOptions } from './settings.js';
import { stderr, stdout, writeStdout } from './stdio.js';

/**
 * The registry: builds the carbon command line from the commands' declarations (commands/index.ts):
 * the commander program, the single-command fast start, the help, and the values completion offers.
 * Cheap: commander and the declarations only. A command's handler, and whatever heavy modules it
 * needs, load only when that command runs.
 */

/**
 * The commands a run may get alone (buildProgram's `only`): every one that runs with settings.
 * The bare ones (the completion helpers) and help read the whole tree.
 */
export const STANDALONE_COMMANDS: ReadonlySet<string> = new Set(COMMANDS.filter((c) => c.settings !== 'bare').map((c) => c.name));

/**
 * The program. With `only`, the name of the command a run asks for (main.ts passes it when it is
 * the first word), only that command is registered under the root: building all of them is about
 * a millisecond of every start-up. Help, completion and anything unrecognised get the whole tree.
 */
export function buildProgram(only?: string, opened?: ContextOpened): Command {
  const program = root(ROOT);
  const alone = only !== undefined && STANDALONE_COMMANDS.has(only);
  each(COMMANDS, (spec) => {
    if (!alone || spec.name === only) register(program, spec, 'api', opened);
  });
  // After the commands: a subcommand copies its parent's settings when it is made, and this one
  // (allowExcessArguments) must stay the group's own.
  helpWhenBare(program);
  helpNamesACommand(program);
  unknownCommandNamesItsGroup(program);
  return program;
}

function root(spec: RootSpec): Command {
  const program = new Command('carbon')
    // Set before any subcommand is created: subcommands copy these settings when they are made.
    // Without it a usage error in `carbon buy --nope` called process.exit(1) from inside commander
    // (exit 1 instead of the documented 2, and past main.ts). main.ts reports the error itself,
    // as one line (or the JSON envelope), so commander prints nothing of its own.
    .exitOverride()
    // --help and --version are written with write(2) while process.stdout does not exist (stdio.ts).
    .configureOutput({
      outputError: () => {},
      writeOut: writeStdout,
      getOutHelpWidth: () => helpWidth(false),
      getErrHelpWidth: () => helpWidth(true),
    })
    // A description too narrow for commander to wrap (under 40 cells) would run past the width.
    .configureHelp({ minWidthToWrap: 12 })
    // A command's help is its own usage, flags and examples; the global flags it also takes are
    // named briefly at the end (gh's INHERITED FLAGS) and explained once, in `carbon help`.
    .addHelpText('afterAll', ({ command, error }) => (command.parent === null ? '' : inheritedFlags(command, helpWidth(error))))
    .description(spec.description)
    .version(pkg.version, '-v, --version', 'print the version');
  each(spec.flags, (flag) => program.addOption(option(flag)));
  return program
    .addHelpText('after', ({ error }) => helpAfter(spec, helpWidth(error)))
    .hook('preAction', (_program, action) => {
      refuseOptionAsValue(program, action);
      refuseTwoValues(program, action);
    });
}

/** Adds the command `spec` (and its subcommands) under `parent`. */
function register(parent: Command, spec: CommandSpec, inherited: SettingsKind, opened: ContextOpened | undefined): void {
  const settings = spec.settings ?? inherited;
  const cmd = parent.command(spec.name, { hidden: spec.hidden === true, isDefault: spec.isDefault === true }).description(spec.description);
  each(spec.args, (arg) => cmd.addArgument(argument(arg)));
  each(spec.flags, (flag) => cmd.addOption(option(flag)));
  // Written when the help is shown, not for every command each time the tree is built.
  if (spec.notes !== undefined || spec.examples !== undefined || spec.epilogue !== undefined) {
    cmd.addHelpText('after', ({ error }) => helpAfter(spec, helpWidth(error)));
  }
  if (spec.lenient === true) cmd.helpOption(false).allowUnknownOption().allowExcessArguments();
  if (spec.isDefault === true && spec.args === undefined) unknownWordsAreCommands(cmd, parent);
  if (spec.load !== undefined) cmd.action(settings === 'bare' ? bare(spec.load) : withContext(spec.load, settings, opened));
  each(spec.subcommands, (sub) => register(cmd, sub, settings, opened));
  const fallback = spec.subcommands?.find((sub) => sub.isDefault === true);
  if (fallback !== undefined) {
    const made = cmd.commands.find((c) => c.name() === fallback.name)!;
    helpNamesDefaultFlags(cmd, made);
    defaultFlagsNamedAsSuch(cmd, made);
  } else if (spec.load === undefined) helpWhenBare(cmd);
  if (spec.subcommands !== undefined) {
    helpNamesACommand(cmd);
    unknownCommandNamesItsGroup(cmd);
  }
}

/**
 * A group run with flags runs its default command with them (`carbon logs --status 4xx` is
 * `carbon logs list --status 4xx`), so they are the group's flags too, and its help lists them
 * with its own: the filters of `carbon logs` were shown only by `carbon logs list --help`.
 * Set after the subcommands are made, which would otherwise copy it.
 */
function helpNamesDefaultFlags(group: Command, fallback: Command): void {
  group.configureHelp({
    ...group.configureHelp(),
    visibleOptions(cmd) {
      const shown = Help.prototype.visibleOptions.call(this, cmd);
      // The group's help option stays last, as commander puts it.
      const own = shown.filter((o) => cmd.options.includes(o));
      const extra = fallback.options.filter((o) => !o.hidden && !own.includes(o));
      return [...own, ...extra, ...shown.filter((o) => !own.includes(o))];
    },
  });
}

/**
 * `for…of` without its garbage: at start-up the code runs in V8's interpreter, where every step
 * of an iterator allocates a result object. Building the whole tree that way allocated enough to
 * cost `carbon help X` a young-generation GC (a millisecond) that the hand-written tree never ran.
 */
function each<T>(list: readonly T[] | undefined, use: (item: T) => void): void {
  if (list === undefined) return;
  for (let i = 0; i < list.length; i++) use(list[i]!);
}

function option(flag: FlagSpec): Option {
  const made = new Option(flag.flags, flag.description);
  if (flag.choices !== undefined) made.choices(flag.choices);
  if (flag.default !== undefined) made.default(flag.default);
  if (flag.values !== undefined) (made as Completable).completionValues = flag.values;
  if (flag.once === true) (made as OnceOption).once = true;
  return made;
}

function argument(arg: ArgSpec): Argument {
  const made = new Argument(arg.name, arg.description);
  if (arg.choices !== undefined) made.choices(arg.choices);
  // An id is never empty: `carbon show "$ID"` with $ID unset is the script's mistake, refused as
  // such (exit 2), not looked up (a 404, exit 5, as if the offset might yet exist).
  if (/^<([a-z]+-)?id>$/.test(arg.name)) made.argParser((value: string) => (value.trim() === '' ? emptyId(arg) : value));
  if (arg.values !== undefined) (made as Completable).completionValues = arg.values;
  return made;
}

function emptyId(arg: ArgSpec): never {
  throw usage(`The ${arg.name} given is empty: give ${arg.description}; nothing was done.`);
}

/**
 * The width help is fitted to: the terminal's (or COLUMNS) when it goes to one, else 80. No line
 * is longer, and no word is broken (render/wrap.ts): commander wraps the flags and commands, and
 * carbon its own text.
 */
function helpWidth(error: boolean): number {
  return terminalWidth(error ? stderr() : stdout(), process.env) ?? 80;
}

/** The help after a command's flags: its notes, its examples, then anything after them, fitted to `width`. */
function helpAfter(spec: Pick<CommandSpec, 'notes' | 'examples' | 'epilogue'>, width: number): string {
  const notes = spec.notes === undefined ? '' : `\n${fitHelpText(spec.notes, width)}\n`;
  const examples =
    spec.examples === undefined
      ? ''
      : `\nExamples:\n${spec.examples.flatMap((line) => wrapCommand(line, width, '  $ ', '      ')).join('\n')}\n`;
  const epilogue = spec.epilogue === undefined ? '' : `\n${fitHelpText(spec.epilogue, width)}\n`;
  return `${notes}${examples}${epilogue}`;
}

/** The global flags, by name only, wrapped to `width`: the end of every subcommand's help. */
function inheritedFlags(command: Command, width: number): string {
  let top = command;
  while (top.parent !== null) top = top.parent;
  const names = top.options.filter((o) => o.long !== '--version').map((o) => o.flags.replace(/^-\w, /, ''));
  const lines: string[] = [];
  for (const name of names) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + name.length + 2 <= width) lines[lines.length - 1] = `${last}  ${name}`;
    else lines.push(`  ${name}`);
  }
  return `${fitHelpText('Inherited flags (what each does: carbon help):', width)}\n${lines.join('\n')}\n`;
}

/**
 * `--reference --wait` would take "--wait" as the reference and buy: an option's value that is
 * another option of the command is a usage error instead (a value may still start with a dash:
 * `--reference -x`, or `--reference=--wait` when meant).
 */
function refuseOptionAsValue(program: Command, action: Command): void {
  const options = [...action.options, ...program.options];
  const known = new Set(options.flatMap((o) => [o.long, o.short].filter((n): n is string => n !== undefined)));
  const argv = (program as unknown as { rawArgs: string[] }).rawArgs;
  for (let i = 0; i < argv.length - 1; i++) {
    const option = options.find((o) => o.long === argv[i] || o.short === argv[i]);
    const next = argv[i + 1]!;
    if (option !== undefined && (option.required || option.optional) && known.has(next)) {
      const hint = `Give the value after ${argv[i]} (or write ${argv[i]}=${next} if that is the value).`;
      throw usage(`${argv[i]} needs a value, but "${next}" is an option.`, hint);
    }
  }
}

/**
 * A flag that says what is bought or what it may cost (FlagSpec.once: `--kg`, `--max-cents`, the
 * idempotency key…), given twice with two values (`buy --kg 5 --kg 6`, a `--max-cents` cap given
 * again later in the line), is a usage error: commander would take the last, and which was meant
 * is not for carbon to guess where it is money. The same value twice says one thing. Other flags
 * take the last, as git's and gh's do, so a script's defaults can be overridden. The values are
 * not echoed (one may be a secret). What follows `--` is not a flag.
 */
function refuseTwoValues(program: Command, action: Command): void {
  const options = action.options.filter((o) => (o as OnceOption).once === true);
  if (options.length === 0) return;
  const argv = (program as unknown as { rawArgs: string[] }).rawArgs;
  const given = new Map<Option, string | undefined>();
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const arg = argv[i]!;
    const option = options.find((o) => o.long === arg || o.short === arg || arg.startsWith(`${o.long}=`));
    if (option === undefined) continue;
    // Its value, given apart or after `=`.
    const value = arg === option.long || arg === option.short ? argv[++i] : arg.slice(option.long!.length + 1);
    if (given.has(option) && given.get(option) !== value) throw usage(`${option.long} is given twice, with two values; give it once.`);
    given.set(option, value);
  }
}

/** An Option the registry made from a flag declared `once`. */
interface OnceOption {
  once?: boolean;
}

/** A bare command's action: its handler gets commander's arguments as they are. */
const bare =
  (load: () => Promise<Handler>) =>
  async (...args: unknown[]): Promise<void> =>
    ((await load()) as (...commanderArgs: unknown[]) => Promise<void>)(...args);

/** A command's action: the handler run with its Context (invoke.ts), errors left to runToExit(). */
function withContext(load: () => Promise<Handler>, kind: SettingsKind, opened: ContextOpened | undefined) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    await invoke(
      load,
      kind,
      { globals: command.optsWithGlobals<GlobalOptions>(), positionals: args.slice(0, -2), flags: command.opts() },
      opened,
    );
  };
}
