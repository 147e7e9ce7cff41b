import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { entrySums, expectError, type OffsetBody, openWorld, T0, type World } from '../support/world.js';

const DAY = 24 * 60 * 60 * 1000;

let w: World;
beforeEach(async () => {
  w = await openWorld();
  await w.sandbox.topUp('live', 100_000);
});
afterEach(() => w.close());

const post = (idem: string, body: unknown, key?: string) => w.call<OffsetBody>('POST', '/offsets', { idem, body, ...(key ? { key } : {}) });
const offsets = () => w.rows<{ id: string }>('SELECT id FROM offsets');

describe('replay: the same key and the same body', () => {
  test('returns the first offset with Idempotent-Replayed: true and never charges twice', async () => {
    const first = await post('order-1', { kg: 500, reference: 'po-1' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const again = await post('order-1', { kg: 500, reference: 'po-1' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    }
    expect(offsets()).toHaveLength(1);
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - 2000);
    expect(entrySums(w, 'test')).toEqual({ topup: 100_000, charge: -2000, refund: 0, total: 98_000 });
  });

  test.each([
    ['whitespace', '{"kg":5,"reference":"a"}', ' {\n  "kg" : 5 ,\t"reference": "a"\n}\n'],
    ['key order', '{"kg":5,"reference":"a"}', '{"reference":"a","kg":5}'],
    ['an escaped character', '{"kg":5,"reference":"a"}', '{"kg":5,"reference":"\\u0061"}'],
    ['a zero fraction', '{"kg":5}', '{"kg":5.0}'],
    ['an explicit null reference', '{"kg":5}', '{"kg":5,"reference":null}'],
    ['an explicit null for the unused field', '{"amount_cents":100}', '{"kg":null,"amount_cents":100}'],
  ])('bodies that differ only in %s are the same request', async (_name, a, b) => {
    const first = await post('same', a);
    const second = await post('same', b);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect(offsets()).toHaveLength(1);
  });

  test('the replay shows the offset as it is now (placed, or refunded), and charges nothing', async () => {
    const first = (await post('k', { kg: 10 })).body;
    await w.sandbox.advanceClock(3000);
    expect((await post('k', { kg: 10 })).body).toMatchObject({ id: first.id, status: 'placed' });
    const second = (await post('k2', { kg: 20 })).body;
    await w.sandbox.fail(second.id);
    expect((await post('k2', { kg: 20 })).body).toMatchObject({ id: second.id, status: 'refunded' });
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - 40);
  });

  test('a replay needs no balance and ignores later rate changes', async () => {
    const first = (await post('k', { amount_cents: 100_000 })).body;
    expect((await w.sandbox.status()).balances.test).toBe(0);
    await w.sandbox.setRate(1);
    const again = await post('k', { amount_cents: 100_000 });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({ id: first.id, kg: 25_000, rate_millicents_per_kg: 4000 });
  });

  test('keys are case-sensitive', async () => {
    const a = (await post('Key-A', { kg: 1 })).body;
    const b = await post('key-a', { kg: 1 });
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.id);
  });
});

describe('409 idempotency_key_reused: the same key with a different body', () => {
  test.each([
    ['another kg', { kg: 6 }],
    ['another reference', { kg: 5, reference: 'b' }],
    ['a reference added', { kg: 5, reference: 'a' }],
    ['the same purchase by price instead', { amount_cents: 20 }],
  ])('%s → 409, nothing charged, the first offset untouched', async (_name, body) => {
    const first = (await post('dup', { kg: 5 })).body;
    const before = { balance: (await w.sandbox.status()).balances.test, entries: w.rows('SELECT * FROM entries') };
    const err = expectError(await post('dup', body), 409, 'idempotency_key_reused');
    expect(err.type).toBe('invalid_request_error');
    expect({ balance: (await w.sandbox.status()).balances.test, entries: w.rows('SELECT * FROM entries') }).toEqual(before);
    expect(offsets().map((o) => o.id)).toEqual([first.id]);
    // The key still replays its own body.
    expect((await post('dup', { kg: 5 })).headers['idempotent-replayed']).toBe('true');
  });

  test('the conflict is reported before the balance is looked at', async () => {
    await post('dup', { amount_cents: 100_000 });
    expectError(await post('dup', { kg: 1 }), 409, 'idempotency_key_reused');
  });
});

describe('scope: per mode, for the life of the ledger, successful purchases only', () => {
  test('one key in test and in live mode makes two purchases; a different body in the other mode is no conflict', async () => {
    const t = await post('shared', { kg: 5 });
    const l = await post('shared', { kg: 5 }, w.keys.live);
    expect(l.status).toBe(201);
    expect(l.headers['idempotent-replayed']).toBeUndefined();
    expect(l.body.id).not.toBe(t.body.id);
    expect(l.body.livemode).toBe(true);
    expect((await post('shared', { kg: 7 }, w.keys.live)).status).toBe(409);
    const t2 = await post('other', { kg: 1 });
    expect((await post('other', { kg: 2 }, w.keys.live)).status).toBe(201);
    expect((await post('other', { kg: 1 })).body.id).toBe(t2.body.id);
    expect((await w.sandbox.status()).balances).toEqual({ test: 100_000 - 20 - 4, live: 100_000 - 20 - 8 });
  });

  test('within a mode the scope is the account, not the API key: another test key replays the same purchase', async () => {
    const second = (await w.sandbox.createKey('test', 'purchase')).secret;
    const a = await post('acct', { kg: 3 });
    const b = await post('acct', { kg: 3 }, second);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.body.id).toBe(a.body.id);
    expectError(await post('acct', { kg: 4 }, second), 409, 'idempotency_key_reused');
  });

  test('a key does not expire: at 24 h, and a year on, it still replays its purchase and charges nothing', async () => {
    const first = (await post('day', { kg: 5 })).body;
    for (const at of [T0 + DAY - 1, T0 + DAY, T0 + 2 * DAY, T0 + 365 * DAY]) {
      w.clock.now = at;
      const again = await post('day', { kg: 5 });
      expect([again.status, again.headers['idempotent-replayed'], again.body.id]).toEqual([201, 'true', first.id]);
      expectError(await post('day', { kg: 6 }), 409, 'idempotency_key_reused');
    }
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - 20);
    expect(offsets()).toHaveLength(1);
  });

  test('the sandbox clock changes nothing either: a different body days later is still a 409, not a new purchase', async () => {
    await post('exp', { kg: 5 });
    await w.sandbox.advanceClock(3 * DAY);
    expectError(await post('exp', { kg: 9 }), 409, 'idempotency_key_reused');
    expect(offsets()).toHaveLength(1);
  });

  test('a 402 is not remembered: after a top-up the same key and body buy, once', async () => {
    const err = expectError(await post('retry-me', { kg: 30_000 }, w.keys.live), 402, 'insufficient_balance');
    expect(err).toMatchObject({ balance_cents: 100_000, required_cents: 120_000 });
    expect(w.rows('SELECT * FROM idempotency')).toHaveLength(0);
    await w.sandbox.topUp('live', 25_000);
    const bought = await post('retry-me', { kg: 30_000 }, w.keys.live);
    expect(bought.status).toBe(201);
    expect(bought.headers['idempotent-replayed']).toBeUndefined();
    expect((await post('retry-me', { kg: 30_000 }, w.keys.live)).headers['idempotent-replayed']).toBe('true');
    expect((await w.sandbox.status()).balances.live).toBe(5_000);
  });

  test('a 422 is not remembered either: the key may then carry a corrected body', async () => {
    expectError(await post('fix-me', { amount_cents: 2 }), 422, 'amount_too_small', 'amount_cents');
    expectError(await post('fix-me', { kg: 0 }), 422, 'validation_error', 'kg');
    const ok = await post('fix-me', { amount_cents: 200 });
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });
});
