import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, FORMATS, LIST_OPTIONS, makeFixture, TOP_COMMANDS } from '../support/completion-fixture.js';
import { carbon, lines, run, SCRIPT } from '../support/shells.js';

/**
 * completions/carbon.bash in a real bash: sourced, then `_carbon` called the way bash calls it
 * on TAB (COMP_WORDS split as bash splits them, `=` being a word break), COMPREPLY printed.
 * Plain bash first; then through the bash-completion package's loader, as installed.
 */

const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';
const HAS_BASH_COMPLETION = existsSync(BASH_COMPLETION);
// A test skipped says why, in one line; in CI (.ci/run installs it) its absence is a failure.
if (!HAS_BASH_COMPLETION) {
  if (process.env.CI === 'true')
    throw new Error(`bash-completion is missing (${BASH_COMPLETION}): in CI the completion tests must run (.ci/run installs it).`);
  process.stderr.write(`bash-completion loader test skipped: no ${BASH_COMPLETION} (apt-get install bash-completion).\n`);
}

/**
 * Loads the script (a path; `printed` for `source <(carbon completion bash)`; `loader` for
 * bash-completion's on-demand loader), completes the words after it, prints COMPREPLY.
 */
const HARNESS = [
  'load=$1; shift',
  'if [[ $load == printed ]]; then source <(carbon completion bash)',
  `elif [[ $load == loader ]]; then source ${BASH_COMPLETION}; _completion_loader carbon`,
  'else source "$load"; fi',
  '[[ $(complete -p carbon) == "complete -F _carbon carbon" ]] || { echo "not registered" >&2; exit 3; }',
  'COMP_WORDS=("$@")',
  'COMP_CWORD=$(($# - 1))',
  'COMP_LINE="$*"',
  'COMP_POINT=${#COMP_LINE}',
  'COMPREPLY=()',
  '_carbon carbon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
  'status=$?',
  '(( ${#COMPREPLY[@]} == 0 )) || printf "%s\\n" "${COMPREPLY[@]}"',
  'exit $status',
].join('\n');

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
}, 180_000);
afterAll(() => fx?.sandbox.cleanup());

async function complete(words: string[], load: string = SCRIPT.bash, env: Record<string, string> = {}): Promise<string[]> {
  const r = await run(fx.sandbox, 'bash', ['--norc', '--noprofile', '-c', HARNESS, 'bash', load, 'carbon', ...words], env);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return lines(r.stdout);
}

describe('bash', () => {
  it('is valid bash', async () => {
    const r = await run(fx.sandbox, 'bash', ['-n', SCRIPT.bash]);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
  });

  it('offers the subcommands, filtered by what was typed', async () => {
    expect(await complete([''])).toEqual(expect.arrayContaining(TOP_COMMANDS));
    expect(await complete(['sh'])).toEqual(['show']);
    expect(await complete(['config', ''])).toEqual(expect.arrayContaining(['set', 'get', 'unset', 'list', 'use']));
    expect(await complete(['sandbox', 'cl'])).toEqual(['clock']);
  });

  it('offers the options of a command', async () => {
    const options = await complete(['list', '--']);
    expect(options).toEqual(expect.arrayContaining([...LIST_OPTIONS, '--json', '--profile', '--help']));
    expect(options).not.toContain('--kg');
    expect(await complete(['buy', '--id'])).toEqual(['--idempotency-key']);
  });

  it('offers --format values, after a space and after = (which bash splits off)', async () => {
    expect(await complete(['list', '--format', ''])).toEqual(FORMATS);
    expect(await complete(['list', '--format', 'c'])).toEqual(['csv']);
    expect(await complete(['list', '--format', '='])).toEqual(FORMATS);
    expect(await complete(['list', '--format', '=', 'j'])).toEqual(['json']);
  });

  it('offers shells and profiles', async () => {
    expect(await complete(['completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(await complete(['--profile', 'st'])).toEqual(['staging']);
  });

  it('quotes what it inserts: a hand-edited profile named with a space or $(…) is one word, never code', async () => {
    // config set refuses such names, but a hand-edited config.json is read whatever it holds.
    const home = mkdtempSync(join(fx.sandbox.home, 'odd-profiles-'));
    const profiles = { 'my prod': {}, 'a$(touch pwned)b': {}, "it's": {} };
    writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
    const env = { CARBON_HOME: home };
    // Bash puts COMPREPLY into the line as it is: each must be the word the shell reads back as the name.
    // `default` first: always there to use (`carbon config use default`), in the file or not.
    expect(await complete(['--profile', ''], SCRIPT.bash, env)).toEqual(['default', 'my\\ prod', 'a\\$\\(touch\\ pwned\\)b', "it\\'s"]);
    expect(await complete(['--profile', 'my'], SCRIPT.bash, env)).toEqual(['my\\ prod']);
    // What was typed already escaped still matches.
    expect(await complete(['--profile', 'my\\ p'], SCRIPT.bash, env)).toEqual(['my\\ prod']);
    expect(await complete(['--profile', '=', 'a'], SCRIPT.bash, env)).toEqual(['a\\$\\(touch\\ pwned\\)b']);
    expect(await complete(['show', '--profile', ''], SCRIPT.bash, env)).toEqual([
      'default',
      'my\\ prod',
      'a\\$\\(touch\\ pwned\\)b',
      "it\\'s",
    ]);
  });

  it('offers the offset ids for show after a purchase, newest first', async () => {
    expect(await complete(['show', ''])).toEqual(fx.offsetIds);
    expect(await complete(['show', fx.offsetIds[1]!.slice(0, 8)])).toEqual(expect.arrayContaining([fx.offsetIds[1]]));
  });

  it("completes file names from the disk where a file goes, after a space and after = (bash's own paths)", async () => {
    writeFileSync(join(fx.sandbox.home, 'flights.csv'), 'kg\n5\n');
    mkdirSync(join(fx.sandbox.home, 'seeds'), { recursive: true });
    expect(await complete(['buy', '--from-csv', 'fl'])).toEqual(['flights.csv']);
    expect(await complete(['buy', '--from-csv', '=', 'fl'])).toEqual(['flights.csv']);
    expect(await complete(['sandbox', 'snapshot', 'load', 'see'])).toEqual(['seeds']);
    expect(await complete(['watch', '--cursor', 'fl'], 'printed')).toEqual(['flights.csv']);
    // Where no file goes, none is offered.
    expect(await complete(['buy', '--kg', 'fl'])).toEqual([]);
  });

  it('works the same from `source <(carbon completion bash)`', async () => {
    expect(await complete(['list', '--format', ''], 'printed')).toEqual(FORMATS);
  });

  it('leaves the prompt alone when carbon fails: no reply, no output, status 0', async () => {
    const r = await run(fx.sandbox, 'bash', ['--norc', '--noprofile', '-c', HARNESS, 'bash', SCRIPT.bash, 'carbon', 'show', ''], {
      // No carbon on PATH at all.
      PATH: '/usr/bin:/bin',
    });
    expect(r).toEqual({ stdout: '', stderr: '', exitCode: 0 });
  });

  it.skipIf(!HAS_BASH_COMPLETION)('loads from ~/.local/share/bash-completion/completions/carbon through bash-completion', async () => {
    const dir = join(fx.sandbox.env.XDG_DATA_HOME!, 'bash-completion', 'completions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'carbon'), (await carbon(fx.sandbox, ['completion', 'bash'])).stdout);
    expect(await complete(['list', '--format', ''], 'loader')).toEqual(FORMATS);
    expect(await complete(['show', ''], 'loader')).toEqual(fx.offsetIds);
  });
});
