import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok, pipeline } from '../support/cli.js';

/**
 * Arguments whose bytes are not UTF-8 (Latin-1 from a CI variable): Node would read each such byte
 * as U+FFFD, so `build-\xe9` and `build-\xe8` would be one idempotency key. Refused, exit 2, nothing
 * bought; U+FFFD typed as UTF-8 is a character like any other (src/cli/argv-text.ts).
 */

const newHome = homes();

describe('arguments that are not UTF-8', () => {
  test('an idempotency key, a reference or an id in Latin-1 is a usage error that names where it is; nothing is bought', async () => {
    const home = newHome();
    for (const [line, where] of [
      [`carbon buy --kg 5 --yes --idempotency-key $'build-\\xe9'`, 'The value of --idempotency-key'],
      [`carbon buy --kg 5 --yes --reference=$'caf\\xe9'`, 'The value of --reference'],
      [`carbon show $'off_\\xff'`, 'Argument 2'],
      [`carbon balance --profile $'\\xe9t\\xe9'`, 'The value of --profile'],
    ] as const) {
      const r = await pipeline(line, { home });
      expect([r.exitCode, r.stdout], line).toEqual([2, '']);
      expect(r.stderr.trim().split('\n'), line).toHaveLength(1);
      expect(r.stderr, line).toContain(`${where} is not UTF-8 text`);
      expect(r.stderr).not.toContain('\uFFFD');
    }
    const refused = await pipeline(`carbon buy --kg 5 --yes --json --idempotency-key $'build-\\xe8'`, { home });
    expect(refused.exitCode).toBe(2);
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: { code: 'usage_error' } });
    expect((await json<{ data: unknown[] }>(['list', '--json'], { home })).data).toEqual([]);
  });

  test('U+FFFD sent as UTF-8 is kept, as any character is', async () => {
    const home = newHome();
    const offset = await json<{ id: string; reference: string }>(['buy', '--kg', '5', '--yes', '--json', '--reference', 'caf\uFFFD'], {
      home,
    });
    expect(offset.reference).toBe('caf\uFFFD');
    expect((await ok(['show', offset.id, '--json'], { home })).stdout).toContain('caf\uFFFD');
    const found = await carbon(['list', '--reference', 'caf\uFFFD', '--json'], { home });
    expect([found.exitCode, JSON.parse(found.stdout).data.map((o: { id: string }) => o.id)]).toEqual([0, [offset.id]]);
  });
});
