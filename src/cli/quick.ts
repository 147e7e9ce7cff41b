import type { CommandSpec } from './command.js';
import { balance } from './commands/balance/index.js';
import { buy } from './commands/buy/index.js';
import { impact } from './commands/impact/index.js';
import { list } from './commands/list/index.js';
import { quote } from './commands/quote/index.js';
import { show } from './commands/show/index.js';
import { invoke } from './invoke.js';
import { runToExit } from './run-to-exit.js';
import { type GlobalOptions, resolveSettings, type Settings } from './settings.js';

/**
 * The quick start: `carbon balance`, `carbon impact`, `carbon list` and `carbon show <id>`, the reads
 * scripts and prompts run most often (a script waiting on an offset shows it again and again), and
 * `carbon buy` and `carbon quote`, the main job and its price, given only the everyday global flags and the
 * command's own flags listed in OWN_FLAGS, run without commander and the rest of the CLI.
 * bin/carbon.cjs loads dist/quick.cjs, a bundle of its own two fifths the size of cli.cjs, for these
 * names. Anything else in the arguments (--help, another flag of the command's own, a flag given
 * twice or without its value, a mistake) is the whole CLI's to answer, as is a remote API or a
 * PostgreSQL ledger: the quick bundle holds the local engine on SQLite only (scripts/build.mjs).
 * What runs is the same either way: the command's handler with its Context (invoke.ts), and the
 * same errors and exit codes (run-to-exit.ts). test/cli/quick.test.ts holds the flags read here to
 * commander's reading of them, and test/e2e/quick-parity.test.ts runs a table of flags, variables,
 * configs and terminals both ways and compares exit codes, stdout and stderr byte for byte.
 */
export const QUICK_COMMANDS: readonly CommandSpec[] = [balance, impact, list, show, buy, quote];

/**
 * The flags of its own each quick command takes here (by their long names). The others are the
 * CLI's: buy's --wait and --from-csv with the batch's flags, list's --all, and show's --wait and
 * --quiet. Each of those runs long enough for the start not to matter, and a batch and a stream
 * keep their memory bounded from cli.cjs alone (bin/carbon.cjs sends `buy --from-csv` and `list
 * --all` there itself, so neither reads both bundles).
 */
export const OWN_FLAGS: Readonly<Record<string, readonly string[]>> = {
  buy: ['--kg', '--amount-cents', '--amount', '--reference', '--idempotency-key', '--max-cents', '--yes', '--dry-run', '--quiet'],
  quote: ['--kg', '--amount-cents', '--amount', '--reference'],
  list: ['--limit', '--page-size', '--starting-after', '--reference', '--status', '--since', '--until', '--quiet', '--format'],
};

/** One of a command's own flags, as commander reads it: the option's key in the flags, whether it takes a value, and the values it allows. */
interface OwnFlag {
  key: string;
  value: boolean;
  choices: readonly string[] | undefined;
}

/** The command's flags that OWN_FLAGS names, by each of their spellings (`-q` and `--quiet`). */
function ownFlags(spec: CommandSpec): Map<string, OwnFlag> {
  const taken = OWN_FLAGS[spec.name];
  const table = new Map<string, OwnFlag>();
  // A command with none is not asked for its flags (a getter that builds them).
  if (taken === undefined) return table;
  for (const flag of spec.flags ?? []) {
    const names = flag.flags.split(/[ ,]+/).filter((f) => f.startsWith('-'));
    const long = names.find((n) => n.startsWith('--'));
    if (long === undefined || !taken.includes(long)) continue;
    // commander's key for `--amount-cents` is `amountCents`.
    const own = {
      key: long.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()),
      value: flag.flags.includes('<'),
      choices: flag.choices,
    };
    for (const name of names) table.set(name, own);
  }
  return table;
}

/** The global switches the quick start takes, and what each sets (as commander sets it). */
const SWITCHES = new Map<string, Partial<GlobalOptions>>([
  ['--json', { json: true }],
  ['--live', { live: true }],
  ['--test', { test: true }],
  ['--local', { local: true }],
  ['--verbose', { verbose: true }],
  ['--no-color', { color: false }],
]);

/**
 * The command, its global flags, its arguments and its own flags, when `argv` is one the quick
 * start takes; undefined otherwise. A command takes as many arguments as it declares (show: its
 * `<id>`), all of them: one missing, or one more, is the CLI's to refuse. An own flag's value is
 * the next argument or follows `=`; one given twice, an empty value, one that starts with `-` or one
 * its flag's choices do not hold is left to the CLI.
 */
export function quickArgs(
  argv: readonly string[],
): { spec: CommandSpec; globals: GlobalOptions; positionals: readonly string[]; flags: Record<string, string | true> } | undefined {
  const spec = QUICK_COMMANDS.find((c) => c.name === argv[0]);
  // An argument that may not have been UTF-8 is the CLI's to refuse (argv-text.ts).
  if (spec === undefined || argv.some((arg) => arg.includes('\uFFFD'))) return undefined;
  // commander's default for a flag declared only as --no-color.
  const globals: GlobalOptions = { color: true };
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  const own = ownFlags(spec);
  const wanted = spec.args?.length ?? 0;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    const set = SWITCHES.get(arg);
    if (set !== undefined) {
      Object.assign(globals, set);
      continue;
    }
    // An empty one too is the CLI's to refuse (registry.ts: an empty id).
    if (arg.trim() === '') return undefined;
    if (!arg.startsWith('-') && positionals.length < wanted) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = own.get(eq === -1 ? arg : arg.slice(0, eq));
    if (flag !== undefined) {
      if (flag.key in flags) return undefined;
      if (!flag.value) {
        if (eq !== -1) return undefined;
        flags[flag.key] = true;
        continue;
      }
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      // Missing, empty, or read as a flag: commander's to take or refuse.
      if (value === undefined || value === '' || value.startsWith('-')) return undefined;
      // A value its flag's choices do not hold is commander's to refuse, in its words.
      if (flag.choices !== undefined && !flag.choices.includes(value)) return undefined;
      flags[flag.key] = value;
      continue;
    }
    const profile = arg === '--profile' ? argv[++i] : arg.startsWith('--profile=') ? arg.slice('--profile='.length) : undefined;
    // A missing or empty name, or one that looks like a flag, is for the CLI to refuse.
    if (profile === undefined || profile === '' || profile.startsWith('-')) return undefined;
    globals.profile = profile;
  }
  return positionals.length === wanted ? { spec, globals, positionals, flags } : undefined;
}

/**
 * The settings when they name the local engine on SQLite; undefined for a remote API, a PostgreSQL
 * ledger, or settings in error (the CLI reports it, as it would have).
 */
export function localSettings(globals: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Settings | undefined {
  try {
    const settings = resolveSettings(globals, env);
    return settings.engine === 'local' && settings.store.kind === 'sqlite' ? settings : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the command when `argv` is the quick start's (and then ends the process); false, having done nothing, if not. */
export function start(argv: readonly string[]): boolean {
  const quick = quickArgs(argv);
  const load = quick?.spec.load;
  const settings = quick === undefined ? undefined : localSettings(quick.globals);
  if (quick === undefined || load === undefined || settings === undefined) return false;
  void runToExit(argv, (opened) =>
    invoke(load, 'api', { globals: quick.globals, positionals: quick.positionals, flags: quick.flags, settings }, opened),
  );
  return true;
}
