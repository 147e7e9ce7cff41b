import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, FORMATS, LIST_OPTIONS, makeFixture, TOP_COMMANDS } from '../support/completion-fixture.js';
import { carbon, lines, run, SCRIPT } from '../support/shells.js';

/**
 * completions/carbon.fish in a real fish: `complete -C LINE` asks fish for the completions of a
 * command line exactly as a TAB would, prefix filtering included, and prints VALUE<TAB>DESCRIPTION.
 */

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
}, 180_000);
afterAll(() => fx?.sandbox.cleanup());

interface Offered {
  values: string[];
  rows: string[][];
}

/** Sources the script (or, with `autoload`, relies on fish finding it in ~/.config/fish/completions). */
async function complete(line: string, how: 'source' | 'autoload' = 'source', env: Record<string, string> = {}): Promise<Offered> {
  const args =
    how === 'source'
      ? ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', SCRIPT.fish, line]
      : ['-c', 'complete -C $argv[1]', line];
  const r = await run(fx.sandbox, 'fish', args, env);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  const rows = lines(r.stdout).map((l) => l.split('\t'));
  return { values: rows.map((row) => row[0]!), rows };
}

describe('fish', () => {
  it('is valid fish', async () => {
    const r = await run(fx.sandbox, 'fish', ['--no-execute', SCRIPT.fish]);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
  });

  it('offers the subcommands, filtered by what was typed, with descriptions', async () => {
    const top = await complete('carbon ');
    expect(top.values).toEqual(expect.arrayContaining(TOP_COMMANDS));
    expect(top.values).not.toContain('__complete');
    expect((await complete('carbon sh')).rows).toEqual([['show', 'show one offset']]);
    expect((await complete('carbon config u')).values).toEqual(['unset', 'use']);
  });

  it('offers the options of a command', async () => {
    const list = await complete('carbon list --');
    expect(list.values).toEqual(expect.arrayContaining([...LIST_OPTIONS, '--json', '--profile', '--help']));
    expect(list.values).not.toContain('--kg');
    expect((await complete('carbon buy --ma')).values).toEqual(['--max-cents', '--max-retries']);
  });

  it('offers --format values, after a space and after =', async () => {
    expect((await complete('carbon list --format ')).values).toEqual(FORMATS);
    expect((await complete('carbon list --all --format=c')).values).toEqual(['--format=csv']);
  });

  it('offers shells, profiles, and the offset ids for show after a purchase', async () => {
    expect((await complete('carbon completion ')).values).toEqual(['bash', 'zsh', 'fish']);
    expect((await complete('carbon --profile s')).values).toEqual(['staging']);
    const ids = await complete('carbon show ');
    expect(ids.values).toEqual(fx.offsetIds);
    expect(ids.rows[1]).toEqual([fx.offsetIds[1], expect.stringMatching(/^500 kg · /)]);
  });

  it("completes file names from the disk where a file goes, after a space and after = (fish's own paths)", async () => {
    writeFileSync(join(fx.sandbox.home, 'flights.csv'), 'kg\n5\n');
    mkdirSync(join(fx.sandbox.home, 'seeds'), { recursive: true });
    expect((await complete('carbon buy --from-csv fl')).values).toEqual(['flights.csv']);
    expect((await complete('carbon buy --from-csv=fl')).values).toEqual(['--from-csv=flights.csv']);
    expect((await complete('carbon sandbox snapshot save see')).values).toEqual(['seeds/']);
    expect((await complete('carbon watch --cursor ~/fl')).values).toEqual(['~/flights.csv']);
    expect((await complete('carbon buy --kg fl')).values).toEqual([]);
  });

  it('loads by itself from ~/.config/fish/completions/carbon.fish', async () => {
    const dir = join(fx.sandbox.env.XDG_CONFIG_HOME!, 'fish', 'completions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'carbon.fish'), (await carbon(fx.sandbox, ['completion', 'fish'])).stdout);
    expect((await complete('carbon list --format ', 'autoload')).values).toEqual(FORMATS);
  });

  it('offers nothing, quietly, when carbon is not there', async () => {
    expect((await complete('carbon show ', 'source', { PATH: '/usr/bin:/bin' })).values).toEqual([]);
  });
});
