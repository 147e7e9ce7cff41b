import { afterEach, beforeEach, expect, test } from 'vitest';
import { Sandbox } from '../../src/service/sandbox.js';
import { type World, entrySums, openWorld } from './helpers.js';

// The ledger keeps the balances between reads (as it keeps the account and the keys) and must
// drop them whenever they may have moved: a commit through another connection, or any write of
// its own. Every read below follows a write; none may see the balance from before it.

let w: World;
beforeEach(() => {
  w = openWorld();
});
afterEach(() => w.close());

const balance = (key = w.keys.test) => w.call<{ available_cents: number }>('GET', '/balance', { key }).body.available_cents;
/** A new turn of the event loop: the ledger checks for other connections' commits once per turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a balance read again follows writes through this connection and others', async () => {
  const start = balance();
  expect(start).toBe(entrySums(w, 'test').total);

  // Another connection (another process, as far as SQLite can tell) tops up.
  const other = Sandbox.open(w.dir, () => w.clock.now);
  try {
    other.topUp('test', 25_000);
    await nextTurn();
    expect(balance()).toBe(start + 25_000);

    // Writes through this connection: a purchase, a top-up, a refund; each seen at once.
    const offset = w.buy({ kg: 2 }).body;
    expect(balance()).toBe(start + 25_000 - offset.amount_cents);
    w.sandbox.topUp('test', 30_000);
    expect(balance()).toBe(start + 55_000 - offset.amount_cents);
    w.sandbox.fail(offset.id);
    expect(balance()).toBe(start + 55_000);
    expect(balance()).toBe(entrySums(w, 'test').total);

    // The other connection buys; then this one reads the live balance untouched and the test one moved.
    const live = balance(w.keys.live);
    const bought = other.service().handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${w.keys.test}`, 'idempotency-key': 'other-1' },
      body: JSON.stringify({ kg: 1 }),
    });
    expect(bought.status).toBe(201);
    await nextTurn();
    expect(balance()).toBe(start + 55_000 - (bought.body as { amount_cents: number }).amount_cents);
    expect(balance(w.keys.live)).toBe(live);
    expect(balance()).toBe(entrySums(w, 'test').total);
  } finally {
    other.close();
  }
});

test('a purchase refused for its balance leaves the kept balance right', () => {
  const start = balance();
  const res = w.call('POST', '/offsets', { idem: 'too-much', body: { kg: Math.ceil((start + 1) / 4) + 1 } });
  expect(res.status).toBe(402);
  expect(balance()).toBe(start);
});
