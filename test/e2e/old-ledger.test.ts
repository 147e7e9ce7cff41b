import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes } from '../support/cli.js';

/**
 * A ledger written by an earlier carbon opens, migrates and answers as it did. The fixture was made
 * by 7bc2789 (better-sqlite3 on Node 20, schema version 2): purchases in both modes, one placed,
 * one waiting for review, one refunded, a revoked key, a read-only key, an Idempotency-Key, and a
 * moved clock. Beside it are the JSON answers that build gave on it.
 */

const FIXTURE = join(import.meta.dirname, '..', 'service', 'fixtures', 'ledger-7bc2789');
const newHome = homes();

function homeWithFixture(): string {
  const home = newHome();
  mkdirSync(join(home, 'data'), { recursive: true, mode: 0o700 });
  for (const file of ['ledger.db', 'sandbox-keys.json']) cpSync(join(FIXTURE, file), join(home, 'data', file));
  return home;
}

/** JSON, or NDJSON (`list --all --json`) as an array of its lines. */
const parse = (text: string): unknown => {
  const lines = text.trim().split('\n');
  return lines.length > 1 && lines.every((l) => l.startsWith('{') && l.endsWith('}')) ? lines.map((l) => JSON.parse(l)) : JSON.parse(text);
};

const expected = (name: string): unknown => parse(readFileSync(join(FIXTURE, `${name}.json`), 'utf8'));

async function answer(home: string, args: string[], quiet = true): Promise<unknown> {
  const r = await carbon([...args, '--json'], { home });
  if (quiet) expect(r.stderr, args.join(' ')).toBe('');
  expect(r.exitCode, args.join(' ')).toBe(0);
  return parse(r.stdout);
}

describe('a ledger made by an earlier carbon (better-sqlite3, Node 20)', () => {
  test('answers list, balance, impact, keys and status exactly as the build that wrote it did', async () => {
    const home = homeWithFixture();
    for (const mode of ['live', 'test']) {
      expect(await answer(home, ['list', '--all', `--${mode}`])).toEqual(expected(`list-${mode}`));
      expect(await answer(home, ['balance', `--${mode}`])).toEqual(expected(`balance-${mode}`));
      expect(await answer(home, ['impact', `--${mode}`])).toEqual(expected(`impact-${mode}`));
    }
    expect(await answer(home, ['sandbox', 'keys', 'list'])).toEqual(expected('keys'));
    const status = (await answer(home, ['sandbox', 'status'])) as { clock: { now: string; offset_ms: number } };
    const before = expected('status') as typeof status;
    // The model's time is the real time plus the kept offset: the offset is the ledger's.
    expect({ ...status, clock: status.clock.offset_ms }).toEqual({ ...before, clock: before.clock.offset_ms });
  });

  test('buys on with its keys: an Idempotency-Key used before replays its offset, and a new purchase is charged', async () => {
    const home = homeWithFixture();
    const replay = (await answer(home, ['buy', '--kg', '42', '--idempotency-key', 'fixture-key-1'], false)) as { id: string };
    expect(replay.id).toBe('off_Dko8qxPfhMJrvEkg2wn8kDkl');
    const before = (expected('balance-test') as { available_cents: number }).available_cents;
    expect(await answer(home, ['balance', '--test'])).toMatchObject({ available_cents: before });
    const bought = (await answer(home, ['buy', '--kg', '10'])) as { amount_cents: number };
    expect(await answer(home, ['balance', '--test'])).toMatchObject({ available_cents: before - bought.amount_cents });
  });
});
