import { keyShape, redactSecrets } from '../service/keys.js';

/**
 * Commands printed for the user to run next (follow a wait, the next page): the command as it
 * must be typed, with the flags of this run that chose where it went (--live, --profile,
 * --base-url …), so that it acts on the same engine, profile and mode. Never a key (--api-key is
 * left out: it would be printed in full) and never a database password.
 */

/** Flags that choose the engine, profile or mode, and take no value. */
const SWITCHES = new Set(['--live', '--test', '--local', '--allow-insecure-http']);
/** … and those that take one. */
const VALUED = new Set(['--profile', '--base-url', '--database', '--database-schema']);

/** A word as a POSIX shell reads it back: bare when safe, single-quoted otherwise. */
export const shellWord = (word: string): string => (/^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/**
 * The flags of `argv` that choose the engine, profile or mode, in the order they were typed, each
 * once, as commander reads a repeat: a switch given twice is on (`--live --live` is `--live`), a
 * flag given two values has the last.
 */
export function engineFlags(argv: readonly string[] = process.argv.slice(2)): string[] {
  const args = shownArgs(argv);
  const kept = new Map<string, string[]>();
  const keep = (name: string, words: string[]) => {
    if (!SWITCHES.has(name)) kept.delete(name);
    kept.set(name, words);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.split('=', 1)[0]!;
    if (SWITCHES.has(arg)) keep(arg, [arg]);
    else if (VALUED.has(arg) && i + 1 < args.length) keep(arg, [arg, args[++i]!]);
    else if (VALUED.has(name) && arg.includes('=')) keep(name, [arg]);
  }
  return [...kept.values()].flat();
}

/**
 * `argv` as a printed command may repeat it: without `--api-key` and its key, which would be shown
 * in full, but with the mode that key chose (`--live` for a live key), with a database URL's
 * password as ***, and a key in any other word masked (that word then to be typed again).
 */
export function shownArgs(argv: readonly string[] = process.argv.slice(2)): string[] {
  const kept: string[] = [];
  let key: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const name = arg.split('=', 1)[0]!;
    if (arg === '--api-key') key = argv[++i];
    else if (name === '--api-key') key = arg.slice('--api-key='.length);
    else if (VALUED.has(arg) && i + 1 < argv.length) kept.push(arg, argv[++i]!);
    else kept.push(arg);
  }
  const mode = key === undefined ? undefined : keyShape(key)?.mode;
  if (mode !== undefined && !kept.includes('--live') && !kept.includes('--test')) kept.push(`--${mode}`);
  // A database URL's password, and a key typed into any value (`--reference 'deploy ck_live_…'`), masked as the table masks it.
  return kept.map((word) => redactSecrets(word));
}

/** `carbon WORDS…` with this run's engine flags: a command to print for the user to run. */
export function followUp(words: readonly string[], argv: readonly string[] = process.argv.slice(2)): string {
  return ['carbon', ...words, ...engineFlags(argv)].map(shellWord).join(' ');
}
