import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok } from '../support/cli.js';

/** How options are read: a value that is itself an option, and numbers read the same way in every option. */

const newHome = homes();

describe('an option value that is another option', () => {
  test('--reference --wait is a usage error (exit 2) and buys nothing; --reference=--wait is that reference', async () => {
    const home = newHome();
    const r = await carbon(['buy', '--kg', '5', '--reference', '--wait'], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      'error: --reference needs a value, but "--wait" is an option. Give the value after --reference (or write --reference=--wait if that is the value).',
    );
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ reference: string }>(['buy', '--kg', '5', '--reference=--wait'], { home })).reference).toBe('--wait');
  });
});

describe('numbers read the same way in every option', () => {
  test('1,000 is a thousand for --kg, --max-cents and a top-up; 1e3 is refused by each, saying why, and nothing changes', async () => {
    const home = newHome();
    const bought = await json<{ kg: number; amount_cents: number }>(['buy', '--kg', '1,000', '--max-cents', '4,000', '--json'], { home });
    expect(bought).toMatchObject({ kg: 1000, amount_cents: 4000 });
    expect((await ok(['sandbox', 'topup', '1,000.50'], { home })).stderr).toContain('$1,000.50');
    const before = (await ok(['balance', '--json'], { home })).stdout;
    for (const args of [
      ['buy', '--kg', '1e3'],
      ['buy', '--amount', '1e3'],
      ['buy', '--kg', '5', '--max-cents', '1e3'],
      ['sandbox', 'topup', '1e3'],
      ['list', '--limit', '1e3'],
    ]) {
      const r = await carbon(args, { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .* not "1e3" \(write the digits out: no exponents\)\.$/m);
    }
    expect((await ok(['balance', '--json'], { home })).stdout).toBe(before);
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toHaveLength(1);
  });
});
