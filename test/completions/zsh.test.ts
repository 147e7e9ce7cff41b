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
