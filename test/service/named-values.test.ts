import { rmSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/open.js';
import { type StoreKind, storeMatrix, testLedger } from '../support/matrix.js';
import { tempDir } from '../support/world.js';

// Every API request reads the fault setting, so a store keeps its named values between reads,
// as it keeps the account, and must drop them when they may have changed: at once after a write
// of its own, and from the next turn of the event loop after another connection's (another
// instance, another process). Neither side of a change may read the value from before it.

/** A new turn of the event loop: a store checks for other connections' commits once per turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done();
  cleanup = [];
});

async function twoEngines(store: StoreKind): Promise<[Engine, Engine]> {
  const ledger = testLedger(store, 'meta');
  const dir = tempDir('carbon-meta-');
  const a = await openEngine(ledger.target(dir));
  const b = await openEngine(ledger.target(dir));
  cleanup.push(
    async () => rmSync(dir, { recursive: true, force: true }),
    () => ledger.drop(),
    () => a.close(),
    () => b.close(),
  );
  return [a, b];
}

describe.each(storeMatrix())('the fault setting, kept by the $label store', ({ kind: store }) => {
  test("is read again after a write through the same store, and after another store's from the next turn", async () => {
    const [a, b] = await twoEngines(store);
    expect(await a.sandbox.faults()).toBeNull();
    await a.sandbox.setFaults({ error_rate: 0.5, seed: 7 });
    expect((await a.sandbox.faults())?.error_rate).toBe(0.5);
    // The other engine read nothing yet; then it reads, and keeps, the setting.
    expect((await b.sandbox.faults())?.error_rate).toBe(0.5);
    await b.sandbox.clearFaults();
    expect(await b.sandbox.faults()).toBeNull();
    await nextTurn();
    expect(await a.sandbox.faults()).toBeNull();
    await a.sandbox.setFaults({ error_rate: 0.25 });
    await nextTurn();
    expect(JSON.parse((await b.sandbox.faultsText())!).error_rate).toBe(0.25);
    // A reset turns faults off, for the store that made it at once.
    await b.sandbox.reset();
    expect(await b.sandbox.faultsText()).toBeUndefined();
  });
});

describe.runIf(storeMatrix().some((s) => s.kind === 'postgres'))('on PostgreSQL, one check of the ledger version a request', () => {
  test('brings back the fault setting with the key and the account, before and after the version moves', async () => {
    const [a, b] = await twoEngines('postgres');
    const key = (await a.sandbox.defaultKey('test'))!;
    const balance = async () =>
      (await a.service.handle({ method: 'GET', path: '/api/v1/balance', query: {}, headers: { authorization: `Bearer ${key}` }, body: '' }))
        .body as { available_cents: number };
    // As carbon serve answers a request: the fault setting, then the service's reads.
    const request = async () => [(await a.sandbox.faults())?.error_rate ?? null, (await balance()).available_cents];
    // The round trips the store of `a` makes to check the ledger's version, counted on its pool.
    const pool = (a.sandbox as unknown as { ledger: { pool: { query: (...args: unknown[]) => unknown } } }).ledger.pool;
    const query = pool.query.bind(pool);
    let checks = 0;
    pool.query = (...args: unknown[]) => {
      if (String(args[0]).includes('FROM ledger_version')) checks++;
      return query(...args);
    };
    const start = (await request())[1]!; // the key and the setting, now kept
    await nextTurn();

    checks = 0;
    expect(await request()).toEqual([null, start]);
    expect(checks).toBe(1);

    // Commits elsewhere move the version: the next request, in a later turn, sees both in one check.
    await b.sandbox.setFaults({ error_rate: 0.5 });
    await b.sandbox.topUp('test', 25_000);
    await nextTurn();
    checks = 0;
    expect(await request()).toEqual([0.5, start + 25_000]);
    expect(checks).toBe(1);
  });
});
