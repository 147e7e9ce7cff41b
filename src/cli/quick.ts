import type { CommandSpec } from './command.js';
import { balance } from './commands/balance/index.js';
import { impact } from './commands/impact/index.js';
import { show } from './commands/show/index.js';
import { invoke } from './invoke.js';
import { runToExit } from './run-to-exit.js';
import { type GlobalOptions, resolveSettings, type Settings } from './settings.js';

/**
 * The quick start: `carbon balance`, `carbon impact` and `carbon show <id>`, the reads scripts and
 * prompts run most often (a script waiting on an offset shows it again and again), given only the
 * everyday global flags, run without commander and the rest of the CLI. bin/carbon.cjs loads
 * dist/quick.cjs, a bundle of its own a third the size of cli.cjs, for these names. Anything else in
 * the arguments (--help, a flag of the command's own, a mistake) is the whole CLI's to
 * answer, as is a remote API or a PostgreSQL ledger: the quick bundle holds the local engine on
 * SQLite only (scripts/build.mjs). What runs is the same either way: the command's handler with
 * its Context (invoke.ts), and the same errors and exit codes (run-to-exit.ts).
 * test/cli/quick.test.ts holds the flags read here to commander's reading of them, and
 * test/e2e/quick-parity.test.ts runs a table of flags, variables, configs and terminals both ways
 * and compares exit codes, stdout and stderr byte for byte.
 */
export const QUICK_COMMANDS: readonly CommandSpec[] = [balance, impact, show];

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
 * The command, its global flags and its arguments, when `argv` is one the quick start takes;
 * undefined otherwise. A command takes as many arguments as it declares (show: its `<id>`), all of
 * them: one missing, or one more, is the CLI's to refuse.
 */
export function quickArgs(
  argv: readonly string[],
): { spec: CommandSpec; globals: GlobalOptions; positionals: readonly string[] } | undefined {
  const spec = QUICK_COMMANDS.find((c) => c.name === argv[0]);
  if (spec === undefined) return undefined;
  // commander's default for a flag declared only as --no-color.
  const globals: GlobalOptions = { color: true };
  const positionals: string[] = [];
  const wanted = spec.args?.length ?? 0;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    const set = SWITCHES.get(arg);
    if (set !== undefined) {
      Object.assign(globals, set);
      continue;
    }
    if (!arg.startsWith('-') && positionals.length < wanted) {
      positionals.push(arg);
      continue;
    }
    const profile = arg === '--profile' ? argv[++i] : arg.startsWith('--profile=') ? arg.slice('--profile='.length) : undefined;
    // A missing or empty name, or one that looks like a flag, is for the CLI to refuse.
    if (profile === undefined || profile === '' || profile.startsWith('-')) return undefined;
    globals.profile = profile;
  }
  return positionals.length === wanted ? { spec, globals, positionals } : undefined;
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
    invoke(load, 'api', { globals: quick.globals, positionals: quick.positionals, flags: {}, settings }, opened),
  );
  return true;
}
