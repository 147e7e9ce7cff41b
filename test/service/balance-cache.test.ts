import { afterEach, beforeEach, expect, test } from 'vitest';
import { entrySums, openSandbox, openWorld, type World } from '../support/world.js';

// The ledger keeps the balances between reads (as it keeps the account and the keys) and must
// drop them whenever they may have moved: a commit through another connection, or any write of
// its own. Every read below follows a write; none may see the balance from before it.

let w: World;
beforeEach(async () => {
  w = await openWorld();
});
afterEach(() => w.close());

const balance = async (key = w.keys.test) => (await w.call<{ available_cents: number }>('GET', '/balance', { key })).body.available_cents;
/** A new turn of the event loop: the ledger checks for other connections' commits once per turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a balance read again follows writes through this connection and others', async () => {
  const start = await balance();
  expect(start).toBe(entrySums(w, 'test').total);

  // Another connection (another process, as far as SQLite can tell) tops up.
  const other = await openSandbox(w.dir, () => w.clock.now);
  try {
    await other.topUp('test', 25_000);
    await nextTurn();
    expect(await balance()).toBe(start + 25_000);

    // Writes through this connection: a purchase, a top-up, a refund; each seen at once.
    const offset = (await w.buy({ kg: 2 })).body;
    expect(await balance()).toBe(start + 25_000 - offset.amount_cents);
    await w.sandbox.topUp('test', 30_000);
    expect(await balance()).toBe(start + 55_000 - offset.amount_cents);
    await w.sandbox.fail(offset.id);
    expect(await balance()).toBe(start + 55_000);
    expect(await balance()).toBe(entrySums(w, 'test').total);

    // The other connection buys; then this one reads the live balance untouched and the test one moved.
    const live = await balance(w.keys.live);
    const bought = await other.service().handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${w.keys.test}`, 'idempotency-key': 'other-1' },
      body: JSON.stringify({ kg: 1 }),
    });
    expect(bought.status).toBe(201);
    await nextTurn();
    expect(await balance()).toBe(start + 55_000 - (bought.body as { amount_cents: number }).amount_cents);
    expect(await balance(w.keys.live)).toBe(live);
    expect(await balance()).toBe(entrySums(w, 'test').total);
  } finally {
    await other.close();
  }
});

test('a purchase refused for its balance leaves the kept balance right', async () => {
  const start = await balance();
  const res = await w.call('POST', '/offsets', { idem: 'too-much', body: { kg: Math.ceil((start + 1) / 4) + 1 } });
  expect(res.status).toBe(402);
  expect(await balance()).toBe(start);
});
