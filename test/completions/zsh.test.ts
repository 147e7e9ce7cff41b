import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, FORMATS, LIST_OPTIONS, makeFixture, TOP_COMMANDS } from '../support/completion-fixture.js';
import { COMPLETIONS, lines, run, SCRIPT } from '../support/shells.js';

/**
 * completions/_carbon in a real zsh (`zsh -f`, no zpty): loaded the two ways a user installs it
 * (autoloaded from $fpath as compinit does; `source <(carbon completion zsh)` after compinit),
 * then `_carbon` run with `words` and CURRENT set as the completion system sets them, and
 * `compadd` replaced by a function that prints what it was given: VALUE<TAB>DISPLAY a line.
 * zsh itself filters by the typed prefix; these tests check what `_carbon` hands it.
 */

const HARNESS = [
  'mode=$1 dir=$2; shift 2',
  'if [[ $mode == fpath ]]; then',
  '  fpath=($dir $fpath); autoload -Uz compinit && compinit -u -D',
  'else',
  '  autoload -Uz compinit && compinit -u -D',
  '  source <(carbon completion zsh)',
  'fi',
  // Registered for `carbon` either way.
  '[[ $_comps[carbon] == _carbon ]] || { print -u2 "not registered: $_comps[carbon]"; exit 3 }',
  'compadd() {',
  '  local -a vals disp; local isarray=0 dname',
  '  while (( $# )); do',
  '    case $1 in',
  '      -a) isarray=1 ;;',
  '      -d) dname=$2; shift ;;',
  '      -[JVXxPSpsIiWFrRMOAEDo]) shift ;;',
  '      --) shift; break ;;',
  '      -*) ;;',
  '      *) break ;;',
  '    esac',
  '    shift',
  '  done',
  '  if (( isarray )); then local n; for n in "$@"; do vals+=("${(@P)n}"); done; else vals=("$@"); fi',
  '  [[ -n $dname ]] && disp=("${(@P)dname}")',
  '  local i; for (( i = 1; i <= ${#vals}; i++ )); do print -r -- "${vals[i]}"$\'\\t\'"${disp[i]:-${vals[i]}}"; done',
  '}',
  'words=("$@")',
  'CURRENT=$#',
  '_carbon',
].join('\n');

/**
 * The script in a real zle, for what only a completion widget can do (`_files`, `compset`): an
 * interactive `zsh -f` on a pseudo-terminal (zpty) with the script on $fpath, the line typed, TAB,
 * then a key whose widget prints the line between two markers. `zpty -r -m` waits for them: no sleep.
 */
const PTY_HARNESS = [
  'dir=$1 line=$2',
  'zmodload zsh/zpty || exit 4',
  'zpty z "zsh -f -i" || exit 5',
  `zpty -w z "PS1='%% '; fpath=($dir \\$fpath); autoload -Uz compinit; compinit -u -D"`,
  `zpty -w z 'show-buffer() { zle -I; print -r -- $'"'"'\\x40\\x40'"'"'"$BUFFER"$'"'"'\\x40\\x40'"'"' }; zle -N show-buffer; bindkey "^X" show-buffer'`,
  `zpty -w -n z "$line"$'\\t\\x18'`,
  "zpty -r -m z out '*@@*@@*' || exit 6",
  'out=${out#*@@}',
  'print -r -- "${out%%@@*}"',
  'zpty -d z',
].join('\n');

/** The line as zle leaves it after TAB. */
async function afterTab(line: string): Promise<string> {
  const r = await run(fx.sandbox, 'zsh', ['-f', '-c', PTY_HARNESS, 'zsh', COMPLETIONS, line]);
  expect(r).toMatchObject({ exitCode: 0, stderr: '' });
  return r.stdout.replace(/\r/g, '');
}

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
}, 180_000);
afterAll(() => fx?.sandbox.cleanup());

interface Offered {
  values: string[];
  displays: string[];
}

async function complete(words: string[], mode: 'fpath' | 'source' = 'fpath'): Promise<Offered> {
  const r = await run(fx.sandbox, 'zsh', ['-f', '-c', HARNESS, 'zsh', mode, COMPLETIONS, 'carbon', ...words]);
  expect(r.stderr).toBe('');
  const rows = lines(r.stdout).map((l) => l.split('\t'));
  return { values: rows.map((row) => row[0]!), displays: rows.map((row) => row[1]!) };
}

describe('zsh', () => {
  it('is valid zsh', async () => {
    const r = await run(fx.sandbox, 'zsh', ['-n', SCRIPT.zsh]);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
  });

  it('offers the subcommands, each with its description', async () => {
    const top = await complete(['']);
    expect(top.values).toEqual(expect.arrayContaining(TOP_COMMANDS));
    expect(top.displays).toContainEqual(expect.stringMatching(/^show +-- show one offset$/));
    expect((await complete(['sandbox', ''])).values).toEqual(expect.arrayContaining(['topup', 'keys', 'clock', 'reset']));
  });

  it('offers the options of a command', async () => {
    const list = await complete(['list', '-']);
    expect(list.values).toEqual(expect.arrayContaining([...LIST_OPTIONS, '--json', '--profile', '--help']));
    expect(list.values).not.toContain('--kg');
  });

  it('offers --format values, also as --format=VALUE in one word', async () => {
    expect((await complete(['list', '--format', ''])).values).toEqual(FORMATS);
    expect((await complete(['list', '--format=c'])).values).toEqual(FORMATS.map((f) => `--format=${f}`));
  });

  it('offers the offset ids for show after a purchase, newest first, described', async () => {
    const ids = await complete(['show', '']);
    expect(ids.values).toEqual(fx.offsetIds);
    expect(ids.displays[0]).toMatch(new RegExp(`^${fx.offsetIds[0]} +-- 20 kg · `));
  });

  it("completes file names from the disk where a file goes, --opt=FILE too (zsh's own _files)", async () => {
    writeFileSync(join(fx.sandbox.home, 'flights.csv'), 'kg\n5\n');
    mkdirSync(join(fx.sandbox.home, 'seeds'), { recursive: true });
    expect(await afterTab('carbon buy --from-csv fl')).toBe('carbon buy --from-csv flights.csv ');
    expect(await afterTab('carbon buy --from-csv=fl')).toBe('carbon buy --from-csv=flights.csv ');
    expect(await afterTab('carbon sandbox snapshot load see')).toBe('carbon sandbox snapshot load seeds/');
    // The rest as before, through the same zle.
    expect(await afterTab('carbon li')).toBe('carbon list ');
  });

  it('works the same from `source <(carbon completion zsh)` after compinit', async () => {
    expect((await complete(['completion', ''], 'source')).values).toEqual(['bash', 'zsh', 'fish']);
    expect((await complete(['--profile', ''], 'source')).values).toEqual(['default', 'staging']);
  });

  it('offers nothing, quietly, when carbon is not there', async () => {
    const r = await run(fx.sandbox, 'zsh', ['-f', '-c', HARNESS, 'zsh', 'fpath', COMPLETIONS, 'carbon', 'show', ''], {
      PATH: '/usr/bin:/bin',
    });
    expect(r).toMatchObject({ stdout: '', stderr: '' });
  });
});
