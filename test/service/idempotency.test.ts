import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { entrySums, expectError, openWorld, T0, type OffsetBody, type World } from './helpers.js';

const DAY = 24 * 60 * 60 * 1000;

let w: World;
beforeEach(() => {
  w = openWorld();
  w.sandbox.topUp('live', 100_000);
});
afterEach(() => w.close());

const post = (idem: string, body: unknown, key?: string) =>
  w.call<OffsetBody>('POST', '/offsets', { idem, body, ...(key ? { key } : {}) });
const offsets = () => w.rows<{ id: string }>('SELECT id FROM offsets');

describe('replay: the same key and the same body', () => {
  test('returns the first offset with Idempotent-Replayed: true and never charges twice', () => {
    const first = post('order-1', { kg: 500, reference: 'po-1' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const again = post('order-1', { kg: 500, reference: 'po-1' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    }
    expect(offsets()).toHaveLength(1);
    expect(w.sandbox.status().balances.test).toBe(100_000 - 2000);
    expect(entrySums(w, 'test')).toEqual({ topup: 100_000, charge: -2000, refund: 0, total: 98_000 });
  });

  test.each([
    ['whitespace', '{"kg":5,"reference":"a"}', ' {\n  "kg" : 5 ,\t"reference": "a"\n}\n'],
    ['key order', '{"kg":5,"reference":"a"}', '{"reference":"a","kg":5}'],
    ['an escaped character', '{"kg":5,"reference":"a"}', '{"kg":5,"reference":"\\u0061"}'],
    ['a zero fraction', '{"kg":5}', '{"kg":5.0}'],
    ['an explicit null reference', '{"kg":5}', '{"kg":5,"reference":null}'],
    ['an explicit null for the unused field', '{"amount_cents":100}', '{"kg":null,"amount_cents":100}'],
  ])('bodies that differ only in %s are the same request', (_name, a, b) => {
    const first = post('same', a);
    const second = post('same', b);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect(offsets()).toHaveLength(1);
  });

  test('the replay shows the offset as it is now (placed, or refunded), and charges nothing', () => {
    const first = post('k', { kg: 10 }).body;
    w.sandbox.advanceClock(3000);
    expect(post('k', { kg: 10 }).body).toMatchObject({ id: first.id, status: 'placed' });
    const second = post('k2', { kg: 20 }).body;
    w.sandbox.fail(second.id);
    expect(post('k2', { kg: 20 }).body).toMatchObject({ id: second.id, status: 'refunded' });
    expect(w.sandbox.status().balances.test).toBe(100_000 - 40);
  });

  test('a replay needs no balance and ignores later rate changes', () => {
    const first = post('k', { amount_cents: 100_000 }).body;
    expect(w.sandbox.status().balances.test).toBe(0);
    w.sandbox.setRate(1);
    const again = post('k', { amount_cents: 100_000 });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({ id: first.id, kg: 25_000, rate_millicents_per_kg: 4000 });
  });

  test('keys are case-sensitive', () => {
    const a = post('Key-A', { kg: 1 }).body;
    const b = post('key-a', { kg: 1 });
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
  ])('%s → 409, nothing charged, the first offset untouched', (_name, body) => {
    const first = post('dup', { kg: 5 }).body;
    const before = { balance: w.sandbox.status().balances.test, entries: w.rows('SELECT * FROM entries') };
    const err = expectError(post('dup', body), 409, 'idempotency_key_reused');
    expect(err.type).toBe('invalid_request_error');
    expect({ balance: w.sandbox.status().balances.test, entries: w.rows('SELECT * FROM entries') }).toEqual(before);
    expect(offsets().map((o) => o.id)).toEqual([first.id]);
    // The key still replays its own body.
    expect(post('dup', { kg: 5 }).headers['idempotent-replayed']).toBe('true');
  });

  test('the conflict is reported before the balance is looked at', () => {
    post('dup', { amount_cents: 100_000 });
    expectError(post('dup', { kg: 1 }), 409, 'idempotency_key_reused');
  });
});

describe('scope: per mode, 24 hours, successful purchases only', () => {
  test('one key in test and in live mode makes two purchases; a different body in the other mode is no conflict', () => {
    const t = post('shared', { kg: 5 });
    const l = post('shared', { kg: 5 }, w.keys.live);
    expect(l.status).toBe(201);
    expect(l.headers['idempotent-replayed']).toBeUndefined();
    expect(l.body.id).not.toBe(t.body.id);
    expect(l.body.livemode).toBe(true);
    expect(post('shared', { kg: 7 }, w.keys.live).status).toBe(409);
    const t2 = post('other', { kg: 1 });
    expect(post('other', { kg: 2 }, w.keys.live).status).toBe(201);
    expect(post('other', { kg: 1 }).body.id).toBe(t2.body.id);
    expect(w.sandbox.status().balances).toEqual({ test: 100_000 - 20 - 4, live: 100_000 - 20 - 8 });
  });

  test('within a mode the scope is the account, not the API key: another test key replays the same purchase', () => {
    const second = w.sandbox.createKey('test', 'purchase').secret;
    const a = post('acct', { kg: 3 });
    const b = post('acct', { kg: 3 }, second);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.body.id).toBe(a.body.id);
    expectError(post('acct', { kg: 4 }, second), 409, 'idempotency_key_reused');
  });

  test('a key is remembered for 24 hours of model time: replayed at 24 h − 1 ms, a new purchase at 24 h', () => {
    const first = post('day', { kg: 5 }).body;
    w.clock.now = T0 + DAY - 1;
    expect(post('day', { kg: 5 }).body.id).toBe(first.id);
    expectError(post('day', { kg: 6 }), 409, 'idempotency_key_reused');
    w.clock.now = T0 + DAY;
    const fresh = post('day', { kg: 5 });
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.id).not.toBe(first.id);
    expect(w.sandbox.status().balances.test).toBe(100_000 - 40);
    // The key now names the new purchase, for another 24 hours.
    w.clock.now = T0 + 2 * DAY - 1;
    expect(post('day', { kg: 5 }).body.id).toBe(fresh.body.id);
  });

  test('the sandbox clock counts too, and after expiry a different body is a new purchase rather than a 409', () => {
    post('exp', { kg: 5 });
    w.sandbox.advanceClock(DAY);
    const other = post('exp', { kg: 9 });
    expect(other.status).toBe(201);
    expect(other.body.kg).toBe(9);
    expect(offsets()).toHaveLength(2);
  });

  test('a 402 is not remembered: after a top-up the same key and body buy, once', () => {
    const err = expectError(post('retry-me', { kg: 30_000 }, w.keys.live), 402, 'insufficient_balance');
    expect(err).toMatchObject({ balance_cents: 100_000, required_cents: 120_000 });
    expect(w.rows('SELECT * FROM idempotency')).toHaveLength(0);
    w.sandbox.topUp('live', 25_000);
    const bought = post('retry-me', { kg: 30_000 }, w.keys.live);
    expect(bought.status).toBe(201);
    expect(bought.headers['idempotent-replayed']).toBeUndefined();
    expect(post('retry-me', { kg: 30_000 }, w.keys.live).headers['idempotent-replayed']).toBe('true');
    expect(w.sandbox.status().balances.live).toBe(5_000);
  });

  test('a 422 is not remembered either: the key may then carry a corrected body', () => {
    expectError(post('fix-me', { amount_cents: 2 }), 422, 'amount_too_small', 'amount_cents');
    expectError(post('fix-me', { kg: 0 }), 422, 'validation_error', 'kg');
    const ok = post('fix-me', { amount_cents: 200 });
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });
});
