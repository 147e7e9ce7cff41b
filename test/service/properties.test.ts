import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Impact, Mode, OffsetList, Quote } from '../../src/api/types.js';
import { livemodeOf } from '../../src/store/tables.js';
import { entrySums, errorOf, expectError, type OffsetBody, openWorld, tempDir, type World } from '../support/world.js';

/**
 * Property-based tests of the model against an independent reference written with BigInt:
 * pricing, and the ledger's books under random sequences of operations.
 */

let shared: string;
beforeAll(() => {
  shared = tempDir();
});
afterAll(() => rmSync(shared, { recursive: true, force: true }));

/** The reference charge: ceil(kg × rate / 1000) in exact integer arithmetic. */
function refCharge(kg: number, rate: number): number {
  const milli = BigInt(kg) * BigInt(rate);
  return Number((milli + 999n) / 1000n);
}

const rateArb = fc.oneof(
  fc.integer({ min: 1, max: 10_000 }),
  fc.integer({ min: 1, max: 10_000_000 }),
  fc.constantFrom(1, 999, 1000, 1001, 3333, 4000, 4001, 9999, 10_000_000),
);
const amountArb = fc.oneof(
  fc.integer({ min: 1, max: 5_000_000 }),
  fc.integer({ min: 1, max: 1000 }),
  fc.constantFrom(1, 2, 3, 4, 5, 999, 1000, 1001, 4_000_000, 4_000_001, 5_000_000),
);

describe('pricing properties', () => {
  test('by price: never charges more than asked, and buys the most whole kg that fits (capped at 1,000,000)', async () => {
    const w = await openWorld({ memory: true, dir: shared });
    try {
      await w.sandbox.topUp('test', 100_000_000_000);
      let balance = (await w.sandbox.status()).balances.test;
      let n = 0;
      await fc.assert(
        fc.asyncProperty(rateArb, amountArb, async (rate, amount) => {
          await w.sandbox.setRate(rate);
          const q = await w.call<Quote>('POST', '/quotes', { body: { amount_cents: amount } });
          const res = await w.call<OffsetBody>('POST', '/offsets', { body: { amount_cents: amount }, idem: `price-${++n}` });
          if (refCharge(1, rate) > amount) {
            // Not even 1 kg fits.
            for (const r of [q, res]) {
              expect(r.status).toBe(422);
              expect(errorOf(r)).toMatchObject({ code: 'amount_too_small', param: 'amount_cents' });
            }
            return;
          }
          expect(res.status).toBe(201);
          const { kg, amount_cents: charged } = res.body;
          expect(q.body).toMatchObject({ kg, amount_cents: charged });
          expect(Number.isSafeInteger(kg) && kg >= 1 && kg <= 1_000_000).toBe(true);
          expect(charged).toBe(refCharge(kg, rate));
          expect(charged).toBeLessThanOrEqual(amount);
          if (kg < 1_000_000) expect(refCharge(kg + 1, rate)).toBeGreaterThan(amount);
          expect(res.body.requested).toEqual({ kg: null, amount_cents: amount });
          expect(res.body.rate_millicents_per_kg).toBe(rate);
          balance -= charged;
          expect((await w.sandbox.status()).balances.test).toBe(balance);
        }),
        { numRuns: 300 },
      );
    } finally {
      await w.close();
    }
  });

  test('by volume: the charge is ceil(kg × rate / 1000), and buying that amount by price buys at least that kg', async () => {
    const w = await openWorld({ memory: true, dir: shared });
    try {
      await fc.assert(
        fc.asyncProperty(rateArb, fc.integer({ min: 1, max: 1_000_000 }), async (rate, kg) => {
          await w.sandbox.setRate(rate);
          const q = await w.call<Quote>('POST', '/quotes', { body: { kg } });
          if (refCharge(kg, rate) > 5_000_000) {
            // Above part 8's bound on a purchase's amount_cents: refused, naming kg.
            expectError(q, 422, 'validation_error', 'kg');
            return;
          }
          expect(q.status).toBe(200);
          expect(q.body.amount_cents).toBe(refCharge(kg, rate));
          expect(q.body.amount_cents * 1000).toBeGreaterThanOrEqual(kg * rate);
          expect((q.body.amount_cents - 1) * 1000).toBeLessThan(kg * rate);
          if (q.body.amount_cents <= 5_000_000) {
            const back = await w.call<Quote>('POST', '/quotes', { body: { amount_cents: q.body.amount_cents } });
            expect(back.body.kg).toBeGreaterThanOrEqual(kg);
            expect(back.body.amount_cents).toBeLessThanOrEqual(q.body.amount_cents);
          }
        }),
        { numRuns: 300 },
      );
    } finally {
      await w.close();
    }
  });
});

type Op =
  | { t: 'buy'; mode: Mode; kg?: number; amount?: number; reference?: string }
  | { t: 'replay'; pick: number }
  | { t: 'topup'; mode: Mode; cents: number }
  | { t: 'fail' | 'approve' | 'reject'; pick: number }
  | { t: 'advance'; ms: number }
  | { t: 'tick'; ms: number }
  | { t: 'review'; cents: number }
  | { t: 'rate'; rate: number }
  | { t: 'check' };

const modeArb = fc.constantFrom<Mode>('test', 'live');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      { t: fc.constant('buy' as const), mode: modeArb, kg: fc.integer({ min: 1, max: 60_000 }) },
      { requiredKeys: ['t', 'mode', 'kg'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      { t: fc.constant('buy' as const), mode: modeArb, amount: fc.integer({ min: 1, max: 300_000 }), reference: fc.constantFrom('a', 'b') },
      { requiredKeys: ['t', 'mode', 'amount'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replay' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('topup' as const), mode: modeArb, cents: fc.integer({ min: 25_000, max: 400_000 }) }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constantFrom('fail' as const, 'approve' as const, 'reject' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 90_000 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 4_000 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('review' as const), cents: fc.integer({ min: 0, max: 300_000 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('rate' as const), rate: fc.integer({ min: 500, max: 9_000 }) }) },
  // The books are checked at these points and at the end, not after every step: the checks read
  // (and so apply due placements), and some steps must also run with placements due but unread.
  { weight: 3, arbitrary: fc.constant({ t: 'check' as const }) },
);

/** The reference model's view of one offset. */
interface ModelOffset {
  id: string;
  mode: Mode;
  kg: number;
  amount: number;
  created: number;
  review: boolean;
  outcome: 'open' | 'approved' | 'refunded';
  idem: string;
  body: Record<string, unknown>;
}

const DELAY: Record<Mode, number> = { test: 3_000, live: 60_000 };

function modelStatus(o: ModelOffset, now: number): 'processing' | 'placed' | 'refunded' {
  if (o.outcome === 'refunded') return 'refunded';
  if (o.outcome === 'approved') return 'placed';
  return !o.review && now >= o.created + DELAY[o.mode] ? 'placed' : 'processing';
}

/** Runs one random history against the model and a reference, checking the books after every step. */
async function runHistory(ops: Op[]): Promise<void> {
  const w = await openWorld({ memory: true, dir: shared });
  try {
    const key = (mode: Mode) => w.keys[mode];
    let offset = 0; // the sandbox clock's offset
    const now = () => w.clock.now + offset;
    let rate = 4000;
    let reviewLimit = 500_000;
    const topups: Record<Mode, number> = { test: 100_000, live: 0 };
    const balance: Record<Mode, number> = { test: 100_000, live: 0 };
    const offsets: ModelOffset[] = [];
    let attempts = 0;

    for (const op of ops) {
      switch (op.t) {
        case 'buy': {
          const body: Record<string, unknown> = op.kg !== undefined ? { kg: op.kg } : { amount_cents: op.amount };
          if (op.reference !== undefined) body.reference = op.reference;
          const kg = op.kg ?? Math.min(Math.floor((op.amount! * 1000) / rate), 1_000_000);
          const idem = `h-${++attempts}`;
          const res = await w.call<OffsetBody>('POST', '/offsets', { key: key(op.mode), body, idem });
          if (kg < 1) {
            expect(errorOf(res).code).toBe('amount_too_small');
            break;
          }
          const price = refCharge(kg, rate);
          if (price > balance[op.mode]) {
            expect(res.status).toBe(402);
            expect(errorOf(res)).toMatchObject({ code: 'insufficient_balance', balance_cents: balance[op.mode], required_cents: price });
            break;
          }
          expect(res.status).toBe(201);
          expect(res.body).toMatchObject({ kg, amount_cents: price, status: 'processing', livemode: op.mode === 'live' });
          balance[op.mode] -= price;
          offsets.push({
            id: res.body.id,
            mode: op.mode,
            kg,
            amount: price,
            created: now(),
            review: op.mode === 'live' && price > reviewLimit,
            outcome: 'open',
            idem,
            body,
          });
          break;
        }
        case 'replay': {
          if (offsets.length === 0) break;
          const o = offsets[op.pick % offsets.length]!;
          const res = await w.call<OffsetBody>('POST', '/offsets', { key: key(o.mode), body: o.body, idem: o.idem });
          expect(res.status).toBe(201);
          expect(res.headers['idempotent-replayed']).toBe('true');
          expect(res.body).toMatchObject({ id: o.id, status: modelStatus(o, now()) });
          break;
        }
        case 'topup':
          await w.sandbox.topUp(op.mode, op.cents);
          topups[op.mode] += op.cents;
          balance[op.mode] += op.cents;
          break;
        case 'fail':
        case 'approve':
        case 'reject': {
          if (offsets.length === 0) break;
          const o = offsets[op.pick % offsets.length]!;
          const status = modelStatus(o, now());
          const allowed = status === 'processing' && (op.t === 'fail' || o.review);
          if (!allowed) {
            await expect(w.sandbox[op.t](o.id)).rejects.toThrow();
            break;
          }
          const result = await w.sandbox[op.t](o.id);
          if (op.t === 'approve') {
            o.outcome = 'approved';
            expect(result).toMatchObject({ status: 'placed', placed: new Date(now()).toISOString() });
          } else {
            o.outcome = 'refunded';
            balance[o.mode] += o.amount;
            expect(result.status).toBe('refunded');
          }
          break;
        }
        case 'advance':
          await w.sandbox.advanceClock(op.ms);
          offset += op.ms;
          break;
        case 'tick':
          w.clock.now += op.ms;
          break;
        case 'review':
          await w.sandbox.setReviewLimit(op.cents);
          reviewLimit = op.cents;
          break;
        case 'rate':
          await w.sandbox.setRate(op.rate);
          rate = op.rate;
          break;
        case 'check':
          await checkBooks(w, { offsets, balance, topups, now: now() });
          break;
      }
    }
    await checkBooks(w, { offsets, balance, topups, now: now() });
  } finally {
    await w.close();
  }
}

interface OffsetRowLite {
  id: string;
  status: string;
  kg: number;
  amount_cents: number;
}

async function checkBooks(
  w: World,
  model: { offsets: ModelOffset[]; balance: Record<Mode, number>; topups: Record<Mode, number>; now: number },
): Promise<void> {
  for (const mode of ['test', 'live'] as const) {
    const key = w.keys[mode];
    const mine = model.offsets.filter((o) => o.mode === mode);

    // Every offset, newest first, through the API (which also applies due placements).
    const listed: OffsetBody[] = [];
    let after: string | undefined;
    for (let pages = 0; ; pages++) {
      // Bounded: a cursor bug fails here instead of paging forever.
      if (pages > mine.length / 100 + 2)
        throw new Error(`more pages than ${mine.length} offsets can fill: the cursor does not move (last ${after})`);
      const page = (
        await w.call<OffsetList>('GET', '/offsets', { key, query: { limit: '100', ...(after ? { starting_after: after } : {}) } })
      ).body;
      listed.push(...(page.data as OffsetBody[]));
      if (!page.has_more) break;
      after = page.data.at(-1)!.id;
    }
    // No offset lost, none invented, each in the state the reference expects.
    expect(listed.map((o) => o.id)).toEqual(mine.map((o) => o.id).reverse());
    expect(listed.map((o) => o.status)).toEqual(mine.map((o) => modelStatus(o, model.now)).reverse());
    for (const o of listed) expect(o.certificate_url !== null).toBe(mode === 'live' && o.status === 'placed');

    // The balance, three ways: the reference, the API, and the entries table.
    const api = (await w.call<{ available_cents: number }>('GET', '/balance', { key })).body.available_cents;
    expect(api).toBe(model.balance[mode]);
    const sums = entrySums(w, mode);
    expect(sums.total).toBe(api);
    expect(sums.topup).toBe(model.topups[mode]);

    // … and against the offsets table: charges are every offset's amount, refunds the refunded ones'.
    const rows = w.rows<OffsetRowLite>('SELECT id, status, kg, amount_cents FROM offsets WHERE livemode = ?', livemodeOf(mode));
    expect(rows).toHaveLength(mine.length);
    const total = (pred: (r: OffsetRowLite) => boolean, f: (r: OffsetRowLite) => number) => rows.filter(pred).reduce((s, r) => s + f(r), 0);
    expect(
      sums.charge +
        total(
          () => true,
          (r) => r.amount_cents,
        ),
    ).toBe(0);
    expect(sums.refund).toBe(
      total(
        (r) => r.status === 'refunded',
        (r) => r.amount_cents,
      ),
    );
    expect(api).toBe(
      model.topups[mode] -
        total(
          (r) => r.status !== 'refunded',
          (r) => r.amount_cents,
        ),
    );
    const perOffset = w.rows<{ offset_id: string; n: number }>(
      "SELECT offset_id, COUNT(*) AS n FROM entries WHERE kind = 'charge' AND livemode = ? GROUP BY offset_id HAVING n <> 1",
      livemodeOf(mode),
    );
    expect(perOffset).toEqual([]);

    // Impact equals a recount of the offsets table.
    const impact = (await w.call<Impact>('GET', '/impact', { key })).body;
    expect(impact).toEqual({
      object: 'impact',
      livemode: mode === 'live',
      placed_kg: total(
        (r) => r.status === 'placed',
        (r) => r.kg,
      ),
      processing_kg: total(
        (r) => r.status === 'processing',
        (r) => r.kg,
      ),
      offsets: rows.filter((r) => r.status !== 'refunded').length,
    });
  }
}

describe('ledger properties', () => {
  test('under random buys, replays, top-ups, refunds, reviews, rate changes and clock moves the books always balance', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        await runHistory(ops);
      }),
      { numRuns: 100 },
    );
  });

  test('a history that exercises every branch (a fixed example, so coverage does not depend on luck)', async () => {
    await runHistory([
      { t: 'review', cents: 1000 },
      { t: 'topup', mode: 'live', cents: 25_000 },
      { t: 'buy', mode: 'live', kg: 100 }, // 400 cents: no review
      { t: 'buy', mode: 'live', kg: 1000 }, // 4000 cents: review
      { t: 'buy', mode: 'test', amount: 3 }, // amount_too_small
      { t: 'buy', mode: 'live', kg: 60_000 }, // 402
      { t: 'buy', mode: 'test', amount: 5000, reference: 'a' },
      { t: 'replay', pick: 2 },
      { t: 'approve', pick: 0 }, // not waiting: refused
      { t: 'approve', pick: 1 },
      { t: 'reject', pick: 1 }, // already placed: refused
      { t: 'fail', pick: 2 },
      { t: 'advance', ms: 2_999 },
      { t: 'buy', mode: 'test', kg: 7 },
      { t: 'tick', ms: 1 },
      { t: 'fail', pick: 3 },
      { t: 'check' },
      { t: 'advance', ms: 60_000 },
      { t: 'fail', pick: 0 }, // placed (though unread since): refused
      { t: 'rate', rate: 5_000 },
      { t: 'replay', pick: 0 },
      { t: 'buy', mode: 'live', amount: 20_000 },
    ]);
  });
});
