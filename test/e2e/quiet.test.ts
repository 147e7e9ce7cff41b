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
      expect(r.stdout).toMatch(/^off_[A-Za-z0-9]{24}\n$/);
      expect(r.stderr).toBe('');
      ids.push(r.stdout.trim());
    }
    expect((await ok(['list', '-q'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['list', '--all', '--quiet', '--page-size', '1'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['show', ids[0]!, '-q'], { home })).stdout).toBe(`${ids[0]}\n`);
    const both = await carbon(['list', '-q', '--json'], { home });
    expect([both.exitCode, both.stdout]).toEqual([2, '']);
  });
});
