import type { Argument, Command, Option } from 'commander';
import type { Completable, Values } from '../../command.js';
import type { GlobalOptions } from '../../settings.js';
import { stdout } from '../../stdio.js';
import { type Candidate, DEADLINE_MS, FILE_NAMES, realSources, type Sources } from './sources.js';

/**
 * `carbon __complete -- WORD… CURRENT` (hidden): the one brain behind the bash, zsh and fish
 * scripts in completions/. It gets the words typed after `carbon` (the last one is the word
 * being completed, possibly empty) and prints what may come next, one per line, as
 * `VALUE<TAB>DESCRIPTION` (the description is optional; bash drops it, zsh and fish show it).
 * The shells filter by what was typed; this prints every candidate for the position. Where a file
 * name goes (`buy --from-csv`, `snapshot load`), it prints the one line `:files` instead, and the
 * shell completes paths from the disk itself, as cobra's default directive has gh's shells do (no
 * value carbon offers starts with `:`).
 *
 * It reads the command tree from commander at run time, so a command or option declared in
 * commands/ completes with no change here or in any script. Values come from, in order: an
 * option's or argument's choices (`--format`), then the `values` its declaration names: a fixed
 * list, or a source (sources.ts: offset ids from the configured engine, profile names from the
 * config file, config keys, key ids).
 *
 * Completion must never break a shell: any error prints nothing and exits 0, and the whole
 * answer is bounded in time.
 */

interface Position {
  command: Command;
  globals: GlobalOptions & Record<string, unknown>;
  used: Set<Option>;
  positionals: number;
  /** The command's arguments typed so far. */
  args: string[];
  afterDashDash: boolean;
  /** `carbon help …`: the next words name commands. */
  helpMode: boolean;
  /** The option whose value is the current word. */
  pending: Option | undefined;
}

const findCommand = (cmd: Command, name: string): Command | undefined =>
  cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));

/**
 * The option `name` (long or short) on the command, its default subcommand (`carbon logs --status`
 * is `logs list`'s, and its value is not an argument) or any command above it (global options).
 */
function findOption(cmd: Command, name: string): Option | undefined {
  const named = (c: Command | undefined) => c?.options.find((o) => o.long === name || o.short === name);
  const own = named(cmd) ?? named(defaultCommand(cmd));
  if (own) return own;
  for (let c: Command | null = cmd.parent; c !== null; c = c.parent) {
    const found = named(c);
    if (found) return found;
  }
  return undefined;
}

const takesValue = (o: Option): boolean => o.required || o.optional;
const isOptionWord = (w: string): boolean => w.length > 1 && w.startsWith('-');

/** Follows the words typed before the current one through the command tree, as commander would. */
function locate(program: Command, prior: readonly string[]): Position {
  const pos: Position = {
    command: program,
    globals: {},
    used: new Set(),
    positionals: 0,
    args: [],
    afterDashDash: false,
    helpMode: false,
    pending: undefined,
  };
  for (let i = 0; i < prior.length; i++) {
    const word = prior[i]!;
    if (!pos.afterDashDash && word === '--') {
      pos.afterDashDash = true;
      continue;
    }
    if (!pos.afterDashDash && isOptionWord(word)) {
      const eq = word.startsWith('--') ? word.indexOf('=') : -1;
      const name = eq === -1 ? word : word.slice(0, eq);
      const option = findOption(pos.command, name);
      if (option === undefined) continue;
      pos.used.add(option);
      let value: unknown = !option.negate;
      if (eq !== -1) value = word.slice(eq + 1);
      else if (takesValue(option)) {
        const next = prior[i + 1];
        if (next === undefined) pos.pending = option;
        else if (option.required || !isOptionWord(next)) {
          value = next;
          i++;
        }
      }
      if (isGlobal(program, option)) pos.globals[option.attributeName()] = value;
      continue;
    }
    if (pos.helpMode) {
      const sub = findCommand(pos.command, word);
      if (sub) pos.command = sub;
      continue;
    }
    const sub = !pos.afterDashDash && pos.positionals === 0 ? findCommand(pos.command, word) : undefined;
    if (sub) {
      pos.command = sub;
      pos.args = [];
      pos.positionals = 0;
    } else if (word === 'help' && pos.positionals === 0 && pos.command.commands.length > 0) {
      pos.helpMode = true;
    } else {
      pos.positionals++;
      pos.args.push(word);
    }
  }
  return pos;
}

const isGlobal = (program: Command, option: Option): boolean => program.options.includes(option);

/** One line of help text, as a description. */
const describe = (text: string | undefined): string | undefined => {
  const line = text?.split('\n')[0]?.trim();
  return line ? line : undefined;
};

function subcommands(cmd: Command): Candidate[] {
  const help = cmd.createHelp();
  return help.visibleCommands(cmd).map((c) => ({ value: c.name(), description: describe(c.summary() || c.description()) }));
}

/** Commander's private bookkeeping, read only: the default subcommand and the version flag. */
interface CommanderInternals {
  _defaultCommandName?: string | null;
  _versionOptionName?: string;
}

/** The subcommand a group runs when given none (`carbon logs` is `logs list`). */
function defaultCommand(cmd: Command): Command | undefined {
  const name = (cmd as unknown as CommanderInternals)._defaultCommandName;
  return name ? findCommand(cmd, name) : undefined;
}

function options(pos: Position): Candidate[] {
  const cmd = pos.command;
  const help = cmd.createHelp();
  help.showGlobalOptions = true;
  const all = [...help.visibleOptions(cmd)];
  // `carbon sandbox keys --reveal` runs the default subcommand (`keys list`): offer its options too.
  const fallback = pos.positionals === 0 ? defaultCommand(cmd) : undefined;
  if (fallback) all.push(...help.visibleOptions(fallback));
  let root = cmd;
  while (root.parent) root = root.parent;
  // --version belongs to `carbon` alone.
  const version = (root as unknown as CommanderInternals)._versionOptionName;
  all.push(...help.visibleGlobalOptions(cmd).filter((o) => version === undefined || o.attributeName() !== version));
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const o of all) {
    if (pos.used.has(o) && !o.variadic) continue;
    const value = o.long ?? o.short;
    if (value === undefined || seen.has(value)) continue;
    seen.add(value);
    out.push({ value, description: describe(o.description) });
  }
  return out;
}

async function valuesFrom(
  entry: Values | undefined,
  choices: readonly string[] | undefined,
  pos: Position,
  sources: Sources,
): Promise<Candidate[]> {
  if (choices !== undefined && choices.length > 0) return choices.map((value) => ({ value }));
  if (entry === undefined) return [];
  if (entry === 'files') return [FILE_NAMES];
  if (typeof entry === 'function') return entry(pos.args).map((value) => ({ value }));
  if (typeof entry !== 'string') return entry.map((value) => ({ value }));
  return entry === 'configKeys' ? sources.configKeys() : sources[entry](pos.globals);
}

function optionValues(option: Option, pos: Position, sources: Sources): Promise<Candidate[]> {
  return valuesFrom((option as Completable).completionValues, option.argChoices, pos, sources);
}

function argumentValues(pos: Position, sources: Sources): Promise<Candidate[]> | undefined {
  const args = pos.command.registeredArguments;
  const last = args.at(-1);
  const arg: Argument | undefined = args[pos.positionals] ?? (last?.variadic ? last : undefined);
  if (arg === undefined) return undefined;
  return valuesFrom((arg as Completable).completionValues, arg.argChoices, pos, sources);
}

/** What may come at the current word: the heart of `__complete`, free of I/O but `sources`. */
export async function candidates(program: Command, words: readonly string[], sources: Sources): Promise<Candidate[]> {
  const current = words.at(-1) ?? '';
  const pos = locate(program, words.slice(0, -1));

  const out: Candidate[] = [];
  if (pos.pending) {
    out.push(...(await optionValues(pos.pending, pos, sources)));
    // An option with an optional value may also be followed by anything else.
    if (pos.pending.required) return out;
  }
  if (!pos.afterDashDash && current.startsWith('--') && current.includes('=')) {
    const name = current.slice(0, current.indexOf('='));
    const option = findOption(pos.command, name);
    if (option === undefined || !takesValue(option)) return [];
    const values = await optionValues(option, pos, sources);
    // The shells take `--from-csv=` off the word before they complete the path after it.
    if (values.includes(FILE_NAMES)) return [FILE_NAMES];
    return values.map((c) => ({ ...c, value: `${name}=${c.value}` }));
  }
  if (!pos.afterDashDash && current.startsWith('-')) return [...out, ...options(pos)];
  if (pos.helpMode) return subcommands(pos.command);

  if (pos.positionals === 0 && !pos.afterDashDash && pos.command.commands.length > 0) out.push(...subcommands(pos.command));
  const values = argumentValues(pos, sources);
  if (values !== undefined) out.push(...(await values));
  // A command that takes nothing more: its options are all that can come next.
  if (out.length === 0 && values === undefined && pos.command.commands.length === 0 && !pos.afterDashDash) out.push(...options(pos));
  return out;
}

/** The protocol's lines: `VALUE` or `VALUE<TAB>DESCRIPTION`, nothing that could split a line. */
export function formatCandidates(list: readonly Candidate[]): string {
  const clean = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return list
    .filter((c) => c.value !== '' && !/[\u0000-\u001f\u007f]/.test(c.value))
    .map((c) => (c.description ? `${c.value}\t${clean(c.description)}\n` : `${c.value}\n`))
    .join('');
}

/** Resolves to `fallback` if `work` takes longer than `ms`. */
async function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The hidden command's action: prints the candidates, or nothing at all on any error. */
export async function run(_flags: unknown, command: Command): Promise<void> {
  try {
    let program = command;
    while (program.parent) program = program.parent;
    const found = await within(candidates(program, command.args, realSources()), DEADLINE_MS, []);
    stdout().write(formatCandidates(found));
  } catch {
    // Completion never prints an error into someone's prompt.
  }
}
