import { describe, expect, test } from 'vitest';
import { carbon, homes, ok } from '../support/cli.js';

/** `-q, --quiet`: the ids alone, one a line, for scripts. */

const newHome = homes();

describe('-q, --quiet: ids only, one a line', () => {
  test('buy, list (a page and --all) and show print ids alone; with --json it is a usage error', async () => {
    const home = newHome();
    const ids: string[] = [];
    for (const kg of [1, 2, 3]) {
      const r = await ok(['buy', '--kg', String(kg), '-q'], { home });
      expect(r.stdout).toMatch(/^off_sandbox[A-Za-z0-9]{17}\n$/);
      expect(r.stderr).toBe('');
      ids.push(r.stdout.trim());
    }
    expect((await ok(['list', '-q'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['list', '--all', '--quiet', '--page-size', '1'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['show', ids[0]!, '-q'], { home })).stdout).toBe(`${ids[0]}\n`);
    const both = await carbon(['list', '-q', '--json'], { home });
    expect([both.exitCode, both.stdout]).toEqual([2, '']);
  });

  test('-q with --json is one refusal, worded alike by buy, list and show; list names --format too', async () => {
    const home = newHome();
    const refused = async (args: string[]) => {
      const r = await carbon(args, { home });
      expect([r.exitCode, r.stdout], r.stderr).toEqual([2, '']);
      return r.stderr;
    };
    const message = (stderr: string) => JSON.parse(stderr).error.message as string;
    const withJson = '--quiet prints only the offset ids: leave out --json.';
    expect(message(await refused(['buy', '--kg', '5', '-q', '--json']))).toBe(withJson);
    expect(message(await refused(['list', '--json', '--quiet']))).toBe(withJson);
    expect(message(await refused(['show', 'off_000000000000000000000000', '-q', '--json']))).toBe(withJson);
    expect(await refused(['list', '-q', '--format', 'csv'])).toBe('error: --quiet prints only the offset ids: leave out --format.\n');
    expect(message(await refused(['list', '-q', '--format', 'json', '--json']))).toBe(
      '--quiet prints only the offset ids: leave out --json and --format.',
    );
    expect((await carbon(['list', '--json'], { home })).stdout).toContain('"data": []');
  });
});
