import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Quote } from '../../src/api/types.js';
import { entrySums, expectError, type OffsetBody, openWorld, type World } from '../support/world.js';

let w: World;
beforeEach(async () => {
  w = await openWorld();
});
afterEach(() => w.close());

const quote = (body: unknown, key?: string) => w.call<Quote>('POST', '/quotes', { body, ...(key ? { key } : {}) });

/** Everything a purchase could have changed. */
async function snapshot() {
  return {
    status: await w.sandbox.status(),
    offsets: w.rows('SELECT * FROM offsets'),
    entries: w.rows('SELECT * FROM entries'),
    idempotency: w.rows('SELECT * FROM idempotency'),
  };
}

describe('defaults of a fresh account', () => {
  test('rate 4000, test balance 100,000 cents, live balance 0, review limit 500,000, rate limit off, active', async () => {
    const s = await w.sandbox.status();
    expect(s.account).toMatchObject({ status: 'active', rate: 4000, review_limit_cents: 500_000, rate_limit_requests: null });
    expect(s.balances).toEqual({ test: 100_000, live: 0 });
    expect((await w.call('GET', '/balance')).body).toEqual({
      object: 'balance',
      livemode: false,
      available_cents: 100_000,
      currency: 'usd',
      rate_millicents_per_kg: 4000,
    });
    expect((await w.call('GET', '/balance', { key: w.keys.live })).body).toEqual({
      object: 'balance',
      livemode: true,
      available_cents: 0,
      currency: 'usd',
      rate_millicents_per_kg: 4000,
    });
    // The starting test balance is a top-up entry like any other, so the ledger adds up from the first row.
    expect(entrySums(w, 'test')).toEqual({ topup: 100_000, charge: 0, refund: 0, total: 100_000 });
  });

  test('the default test balance covers several `--kg 500` purchases', async () => {
    for (let i = 0; i < 5; i++) expect((await w.buy({ kg: 500 })).body.amount_cents).toBe(2000);
  });
});

describe('by volume: charge = ceil(kg × rate / 1000) cents', () => {
  test.each([
    // rate, kg, cents
    [4000, 500, 2000],
    [4000, 1, 4],
    [4001, 1, 5], // 4.001 cents rounds up
    [4999, 1, 5],
    [1, 1, 1], // 0.001 cents still costs a whole cent
    [1, 1000, 1],
    [1, 1001, 2],
    [1234, 777, 959], // 958.818 → 959
    [10_000_000, 1, 10_000],
  ])('rate %i, %i kg → %i cents', async (rate, kg, cents) => {
    await w.sandbox.setRate(rate);
    const q = await quote({ kg });
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ kg, amount_cents: cents, rate_millicents_per_kg: rate });
    const offset = (await w.buy({ kg })).body;
    expect(offset).toMatchObject({
      kg,
      amount_cents: cents,
      rate_millicents_per_kg: rate,
      requested: { kg, amount_cents: null },
      currency: 'usd',
    });
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - cents);
  });

  test('the 1,000,000 kg maximum at the default rate costs 4,000,000 cents', async () => {
    expect((await quote({ kg: 1_000_000 })).body).toMatchObject({ kg: 1_000_000, amount_cents: 4_000_000, sufficient_balance: false });
  });
});

describe('by price: the most whole kg whose charge fits, never more than asked', () => {
  test.each([
    // rate, asked, kg, charged
    [4000, 100, 25, 100],
    [4000, 101, 25, 100], // 25.25 kg → 25 kg; 1 cent stays in the balance
    [4000, 4, 1, 4],
    [4000, 7, 1, 4],
    [3000, 10, 3, 9],
    [4001, 5, 1, 5],
    [4001, 9, 2, 9], // 2 kg = 8.002 → 9 cents fits exactly
    [1, 1, 1000, 1],
    [1, 2, 2000, 2],
    [999, 1, 1, 1],
    [1001, 2, 1, 2], // 1 kg = 1.001 → 2 cents; 2 kg = 2.002 → 3 cents would not fit
  ])('rate %i, %i cents asked → %i kg for %i cents', async (rate, asked, kg, charged) => {
    await w.sandbox.setRate(rate);
    expect((await quote({ amount_cents: asked })).body).toMatchObject({ kg, amount_cents: charged });
    const offset = (await w.buy({ amount_cents: asked })).body;
    expect(offset).toMatchObject({ kg, amount_cents: charged, requested: { kg: null, amount_cents: asked } });
    expect(offset.amount_cents).toBeLessThanOrEqual(asked);
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - charged);
  });

  test('by price is capped at 1,000,000 kg: the charge is for the capped kg, not the amount asked', async () => {
    await w.sandbox.topUp('test', 5_000_000);
    expect((await quote({ amount_cents: 5_000_000 })).body).toMatchObject({ kg: 1_000_000, amount_cents: 4_000_000 });
    const offset = (await w.buy({ amount_cents: 5_000_000 })).body;
    expect(offset).toMatchObject({ kg: 1_000_000, amount_cents: 4_000_000, requested: { kg: null, amount_cents: 5_000_000 } });
    expect((await w.sandbox.status()).balances.test).toBe(5_100_000 - 4_000_000);

    await w.sandbox.setRate(1);
    expect((await quote({ amount_cents: 1000 })).body).toMatchObject({ kg: 1_000_000, amount_cents: 1000 });
    expect((await quote({ amount_cents: 1001 })).body).toMatchObject({ kg: 1_000_000, amount_cents: 1000 });
    expect((await quote({ amount_cents: 999 })).body).toMatchObject({ kg: 999_000, amount_cents: 999 });
  });

  test('an amount that buys less than 1 kg → 422 amount_too_small (param amount_cents) naming the smallest amount', async () => {
    const before = await snapshot();
    for (const send of [(b: unknown) => quote(b), (b: unknown) => w.call('POST', '/offsets', { body: b, idem: 'small' })]) {
      const err = expectError(await send({ amount_cents: 3 }), 422, 'amount_too_small', 'amount_cents');
      expect(err.type).toBe('invalid_request_error');
      expect(err.message).toContain('4 cents');
    }
    expect(await snapshot()).toEqual(before);
    expect((await quote({ amount_cents: 4 })).body.kg).toBe(1);

    await w.sandbox.setRate(4001);
    expect(expectError(await quote({ amount_cents: 4 }), 422, 'amount_too_small', 'amount_cents').message).toContain('5 cents');
    expect((await quote({ amount_cents: 5 })).body).toMatchObject({ kg: 1, amount_cents: 5 });

    await w.sandbox.setRate(250_000); // $2.50 a kg
    expectError(await quote({ amount_cents: 249 }), 422, 'amount_too_small', 'amount_cents');
    expect((await quote({ amount_cents: 250 })).body.kg).toBe(1);
  });

  test('at a rate of 1000 or less every valid amount buys at least 1 kg', async () => {
    await w.sandbox.setRate(1000);
    expect((await quote({ amount_cents: 1 })).body).toMatchObject({ kg: 1, amount_cents: 1 });
  });
});

describe('the rate', () => {
  test('an offset keeps the rate it was bought at; later rate changes do not touch it', async () => {
    const first = (await w.buy({ kg: 100 })).body;
    await w.sandbox.setRate(5000);
    const second = (await w.buy({ kg: 100 })).body;
    expect([first.rate_millicents_per_kg, first.amount_cents]).toEqual([4000, 400]);
    expect([second.rate_millicents_per_kg, second.amount_cents]).toEqual([5000, 500]);
    expect((await w.call<OffsetBody>('GET', `/offsets/${first.id}`)).body).toMatchObject({
      rate_millicents_per_kg: 4000,
      amount_cents: 400,
    });
    expect((await w.call('GET', '/balance')).body).toMatchObject({ rate_millicents_per_kg: 5000 });
  });

  test('the sandbox accepts rates from 1 to 10,000,000 only', async () => {
    for (const bad of [0, -1, 1.5, 10_000_001]) await expect(w.sandbox.setRate(bad)).rejects.toThrow(/rate/);
    expect((await w.sandbox.setRate(10_000_000)).rate).toBe(10_000_000);
  });
});

describe('quotes', () => {
  test('a quote reports what a purchase would buy and cost against the balance, and changes nothing', async () => {
    await w.buy({ kg: 10 });
    const before = await snapshot();
    const q = await quote({ kg: 500, reference: 'just looking' });
    expect(q.status).toBe(200);
    expect(q.body).toEqual({
      object: 'quote',
      livemode: false,
      kg: 500,
      amount_cents: 2000,
      currency: 'usd',
      rate_millicents_per_kg: 4000,
      available_cents: 100_000 - 40,
      sufficient_balance: true,
      requires_review: false,
    });
    for (let i = 0; i < 3; i++) await quote({ amount_cents: 99_000 });
    expect(await snapshot()).toEqual(before);
  });

  test('sufficient_balance is exact: true when the balance equals the cost, false one cent short (and a quote is never a 402)', async () => {
    expect((await quote({ amount_cents: 100_000 })).body).toMatchObject({
      amount_cents: 100_000,
      available_cents: 100_000,
      sufficient_balance: true,
    });
    expect((await quote({ kg: 25_001 })).body).toMatchObject({ amount_cents: 100_004, sufficient_balance: false });
    const live = await quote({ kg: 1 }, w.keys.live);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ livemode: true, available_cents: 0, sufficient_balance: false });
  });

  test('requires_review is amount_cents > review limit, in both modes', async () => {
    await w.sandbox.topUp('live', 1_000_000);
    for (const key of [w.keys.test, w.keys.live]) {
      expect((await quote({ kg: 125_000 }, key)).body).toMatchObject({ amount_cents: 500_000, requires_review: false });
      expect((await quote({ kg: 125_001 }, key)).body).toMatchObject({ amount_cents: 500_004, requires_review: true });
    }
    await w.sandbox.setReviewLimit(0);
    expect((await quote({ kg: 1 })).body.requires_review).toBe(true);
    await w.sandbox.setReviewLimit(4);
    expect((await quote({ kg: 1 })).body.requires_review).toBe(false);
    await expect(w.sandbox.setReviewLimit(-1)).rejects.toThrow(/review limit/);
  });
});

describe('402 insufficient_balance', () => {
  test('carries balance_cents and required_cents, and charges nothing', async () => {
    await w.buy({ kg: 24_000 }); // 96,000 cents; 4,000 left
    const before = await snapshot();
    const res = await w.call('POST', '/offsets', { body: { kg: 1001 }, idem: 'too-much' });
    const err = expectError(res, 402, 'insufficient_balance');
    expect(err).toMatchObject({ type: 'invalid_request_error', balance_cents: 4000, required_cents: 4004 });
    expect(err.param).toBeUndefined();
    expect(await snapshot()).toEqual(before);
    // Exactly the balance is enough, and leaves 0.
    expect((await w.buy({ kg: 1000 })).body.amount_cents).toBe(4000);
    expect((await w.sandbox.status()).balances.test).toBe(0);
    expect(expectError(await w.call('POST', '/offsets', { body: { kg: 1 }, idem: 'empty' }), 402, 'insufficient_balance')).toMatchObject({
      balance_cents: 0,
      required_cents: 4,
    });
  });

  test('by price, required_cents is what the purchase would actually cost, not the amount asked', async () => {
    await w.sandbox.topUp('live', 25_000);
    const err = expectError(
      await w.call('POST', '/offsets', { key: w.keys.live, body: { amount_cents: 30_001 }, idem: 'p' }),
      402,
      'insufficient_balance',
    );
    expect(err).toMatchObject({ balance_cents: 25_000, required_cents: 30_000 });
  });

  test('live starts at 0: the first live purchase is a 402, and the test balance is not touched', async () => {
    const err = expectError(
      await w.call('POST', '/offsets', { key: w.keys.live, body: { kg: 500 }, idem: 'l' }),
      402,
      'insufficient_balance',
    );
    expect(err).toMatchObject({ balance_cents: 0, required_cents: 2000 });
    expect((await w.sandbox.status()).balances).toEqual({ test: 100_000, live: 0 });
    expect(entrySums(w, 'live').total).toBe(0);
  });

  test('each mode spends only its own balance', async () => {
    await w.sandbox.topUp('live', 25_000);
    await w.buy({ kg: 500 }, { key: w.keys.live });
    expect((await w.sandbox.status()).balances).toEqual({ test: 100_000, live: 23_000 });
    await w.buy({ kg: 250 });
    expect((await w.sandbox.status()).balances).toEqual({ test: 99_000, live: 23_000 });
  });
});

describe('top-ups (sandbox)', () => {
  test('the smallest top-up is 25,000 cents; each one is a ledger entry', async () => {
    for (const bad of [24_999, 0, -25_000, 25_000.5]) await expect(w.sandbox.topUp('live', bad)).rejects.toThrow(/top-up/);
    expect(await w.sandbox.topUp('live', 25_000)).toBe(25_000);
    expect(await w.sandbox.topUp('live', 30_001)).toBe(55_001);
    expect(entrySums(w, 'live')).toEqual({ topup: 55_001, charge: 0, refund: 0, total: 55_001 });
    expect((await w.call('GET', '/balance', { key: w.keys.live })).body).toMatchObject({ available_cents: 55_001 });
  });
});
