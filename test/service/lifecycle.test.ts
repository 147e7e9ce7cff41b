import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Impact, OffsetList } from '../../src/api/types.js';
import { entrySums, type OffsetBody, openWorld, T0, type World } from '../support/world.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BASE = 'https://carbon.example';

let w: World;
beforeEach(async () => {
  w = await openWorld({ publicBaseUrl: `${BASE}/` });
  await w.sandbox.topUp('live', 10_000_000);
});
afterEach(() => w.close());

const get = async (id: string, key?: string) => (await w.call<OffsetBody>('GET', `/offsets/${id}`, key ? { key } : {})).body;
const impact = async (key?: string) => (await w.call<Impact>('GET', '/impact', key ? { key } : {})).body;

describe('test offsets: placed 3 s after creation, no certificate', () => {
  test('processing until exactly 3,000 ms, then placed at created + 3 s with certificate_url null', async () => {
    w.clock.now = T0 + 7;
    const created = (await w.buy({ kg: 500 })).body;
    expect(created).toMatchObject({
      status: 'processing',
      placed: null,
      certificate_url: null,
      livemode: false,
      created: '2030-01-15T12:00:00.007Z',
    });
    expect(await impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 0, processing_kg: 500, offsets: 1 });

    w.clock.now += 2_999;
    expect((await get(created.id)).status).toBe('processing');
    w.clock.now += 1;
    const placed = await get(created.id);
    expect(placed).toMatchObject({ status: 'placed', certificate_url: null, placed: '2030-01-15T12:00:03.007Z', created: created.created });
    expect(await impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 500, processing_kg: 0, offsets: 1 });
  });

  test('the placement time is the scheduled one, however late the next read comes', async () => {
    const o = (await w.buy({ kg: 1 })).body;
    await w.sandbox.advanceClock(3 * 24 * 3600 * 1000);
    expect((await get(o.id)).placed).toBe(new Date(T0 + 3000).toISOString());
  });

  test('test offsets above the review limit are still placed after 3 s (no review in test mode)', async () => {
    await w.sandbox.setReviewLimit(0);
    const o = (await w.buy({ kg: 1 })).body;
    await w.sandbox.advanceClock(3000);
    expect((await get(o.id)).status).toBe('placed');
    await expect(w.sandbox.approve(o.id)).rejects.toThrow(/placed, not processing/);
  });

  test('nothing in the test lifecycle touches the live balance or impact', async () => {
    await w.buy({ kg: 10 });
    await w.sandbox.advanceClock(5000);
    expect(await impact(w.keys.live)).toEqual({ object: 'impact', livemode: true, placed_kg: 0, processing_kg: 0, offsets: 0 });
    expect((await w.sandbox.status()).balances.live).toBe(10_000_000);
  });
});

describe('live offsets: placed 60 s after creation, with a certificate', () => {
  test('processing until 60,000 ms, then placed with certificate_url under the public base URL', async () => {
    const o = (await w.buy({ kg: 500 }, { key: w.keys.live })).body;
    expect(o).toMatchObject({ status: 'processing', livemode: true, certificate_url: null, placed: null, amount_cents: 2000 });
    expect((await w.sandbox.status()).balances.live).toBe(10_000_000 - 2000);
    await w.sandbox.advanceClock(59_999);
    expect((await get(o.id, w.keys.live)).status).toBe('processing');
    w.clock.now += 1;
    const placed = await get(o.id, w.keys.live);
    expect(placed.status).toBe('placed');
    expect(placed.placed).toBe(new Date(T0 + 60_000).toISOString());
    expect(placed.certificate_url).toMatch(new RegExp(`^${BASE}/certificates/cert_[0-9a-f]{24}$`));
    expect(await impact(w.keys.live)).toMatchObject({ placed_kg: 500, processing_kg: 0, offsets: 1 });
    // The certificate address is stable across reads.
    expect((await get(o.id, w.keys.live)).certificate_url).toBe(placed.certificate_url);
    expect((await w.service.offsetByCertificate(placed.certificate_url!.split('/').pop()!))?.id).toBe(o.id);
  });

  test('every placed live offset gets its own certificate; the default base URL is the local server', async () => {
    const other = await openWorld();
    try {
      await other.sandbox.topUp('live', 25_000);
      const a = (await other.buy({ kg: 1 }, { key: other.keys.live })).body;
      const b = (await other.buy({ kg: 1 }, { key: other.keys.live })).body;
      await other.sandbox.advanceClock(60_000);
      const [ca, cb] = await Promise.all(
        [a, b].map(async (o) => (await other.call<OffsetBody>('GET', `/offsets/${o.id}`, { key: other.keys.live })).body.certificate_url),
      );
      expect(ca).toMatch(/^http:\/\/127\.0\.0\.1:4010\/certificates\/cert_[0-9a-f]{24}$/);
      expect(ca).not.toBe(cb);
    } finally {
      await other.close();
    }
  });

  test('above the review limit: processing until approved, however long; approval places it now, with a certificate', async () => {
    await w.sandbox.setReviewLimit(1999);
    const small = (await w.buy({ kg: 499 }, { key: w.keys.live })).body; // 1996 cents: no review
    const big = (await w.buy({ kg: 500 }, { key: w.keys.live })).body; // 2000 cents > 1999
    await w.sandbox.advanceClock(7 * 24 * 3600 * 1000);
    expect((await get(small.id, w.keys.live)).status).toBe('placed');
    expect(await get(big.id, w.keys.live)).toMatchObject({ status: 'processing', placed: null, certificate_url: null });
    expect(await impact(w.keys.live)).toMatchObject({ placed_kg: 499, processing_kg: 500, offsets: 2 });

    w.clock.now += 123;
    const approved = await w.sandbox.approve(big.id);
    expect(approved.status).toBe('placed');
    expect(approved.placed).toBe(new Date(T0 + 7 * 24 * 3600 * 1000 + 123).toISOString());
    expect(approved.certificate_url).toMatch(new RegExp(`^${BASE}/certificates/cert_`));
    expect(await get(big.id, w.keys.live)).toEqual(approved);
    expect(await impact(w.keys.live)).toMatchObject({ placed_kg: 999, processing_kg: 0, offsets: 2 });
    // Approved once; a second approval or a rejection is refused.
    await expect(w.sandbox.approve(big.id)).rejects.toThrow(/placed, not processing/);
    await expect(w.sandbox.reject(big.id)).rejects.toThrow(/not waiting for review/);
  });

  test('the review limit at purchase time decides; changing it later does not release a waiting offset', async () => {
    await w.sandbox.setReviewLimit(100);
    const o = (await w.buy({ kg: 500 }, { key: w.keys.live })).body;
    await w.sandbox.setReviewLimit(500_000);
    await w.sandbox.advanceClock(3_600_000);
    expect((await get(o.id, w.keys.live)).status).toBe('processing');
  });

  test('rejection: the waiting offset is refunded, the charge comes back and it leaves the impact totals', async () => {
    await w.sandbox.setReviewLimit(0);
    const o = (await w.buy({ kg: 1000 }, { key: w.keys.live })).body;
    expect((await w.sandbox.status()).balances.live).toBe(10_000_000 - 4000);
    const rejected = await w.sandbox.reject(o.id);
    expect(rejected).toMatchObject({ status: 'refunded', placed: null, certificate_url: null, amount_cents: 4000 });
    expect((await w.sandbox.status()).balances.live).toBe(10_000_000);
    expect(await impact(w.keys.live)).toMatchObject({ placed_kg: 0, processing_kg: 0, offsets: 0 });
    expect(entrySums(w, 'live')).toEqual({ topup: 10_000_000, charge: -4000, refund: 4000, total: 10_000_000 });
    await expect(w.sandbox.approve(o.id)).rejects.toThrow(/refunded, not processing/);
  });

  test('approve and reject refuse offsets that are not waiting for review, and unknown ids', async () => {
    const o = (await w.buy({ kg: 1 }, { key: w.keys.live })).body;
    await expect(w.sandbox.approve(o.id)).rejects.toThrow(/not waiting for review/);
    await expect(w.sandbox.reject(o.id)).rejects.toThrow(/not waiting for review/);
    await expect(w.sandbox.approve('off_nope')).rejects.toThrow(/No such offset/);
    await expect(w.sandbox.reject('off_nope')).rejects.toThrow(/No such offset/);
    expect((await get(o.id, w.keys.live)).status).toBe('processing');
  });
});

describe('fail: processing → refunded, the charge returned', () => {
  test.each(['test', 'live'] as const)('%s offset: refunded, balance restored, a refund entry, impact recounted', async (mode) => {
    const key = w.keys[mode];
    const start = (await w.sandbox.status()).balances[mode];
    const keep = (await w.buy({ kg: 300 }, { key })).body;
    const lost = (await w.buy({ amount_cents: 1001 }, { key })).body; // 250 kg for 1000 cents
    expect((await w.sandbox.status()).balances[mode]).toBe(start - 1200 - 1000);
    const failed = await w.sandbox.fail(lost.id);
    expect(failed).toMatchObject({ id: lost.id, status: 'refunded', placed: null, certificate_url: null, kg: 250, amount_cents: 1000 });
    expect((await w.sandbox.status()).balances[mode]).toBe(start - 1200);
    expect((await get(lost.id, key)).status).toBe('refunded');
    expect(await impact(key)).toMatchObject({ placed_kg: 0, processing_kg: 300, offsets: 1 });
    const refunds = w.rows<{ amount_cents: number; offset_id: string }>(
      "SELECT amount_cents, offset_id FROM entries WHERE kind = 'refund'",
    );
    expect(refunds).toEqual([{ amount_cents: 1000, offset_id: lost.id }]);
    // A refunded offset stays refunded: time does not place it, and it cannot be failed twice.
    await w.sandbox.advanceClock(3_600_000);
    expect((await get(lost.id, key)).status).toBe('refunded');
    expect((await get(keep.id, key)).status).toBe('placed');
    await expect(w.sandbox.fail(lost.id)).rejects.toThrow(/refunded, not processing/);
    expect((await w.sandbox.status()).balances[mode]).toBe(start - 1200);
  });

  test('a placed offset cannot be failed (no transition placed → refunded)', async () => {
    const o = (await w.buy({ kg: 5 })).body;
    await w.sandbox.advanceClock(3000);
    expect((await get(o.id)).status).toBe('placed');
    await expect(w.sandbox.fail(o.id)).rejects.toThrow(/placed, not processing/);
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - 20);
  });

  test('an offset whose placement time has passed is placed even if nobody read it since: fail is refused', async () => {
    const o = (await w.buy({ kg: 5 })).body;
    await w.sandbox.advanceClock(3000);
    // No read in between: the answer must not depend on whether someone looked.
    await expect(w.sandbox.fail(o.id)).rejects.toThrow(/placed, not processing/);
    expect((await get(o.id)).status).toBe('placed');
    expect((await w.sandbox.status()).balances.test).toBe(100_000 - 20);
  });

  test('an offset waiting for review can fail too, and is then no longer waiting', async () => {
    await w.sandbox.setReviewLimit(0);
    const o = (await w.buy({ kg: 5 }, { key: w.keys.live })).body;
    expect((await w.sandbox.fail(o.id)).status).toBe('refunded');
    await expect(w.sandbox.approve(o.id)).rejects.toThrow(/refunded, not processing/);
    await expect(w.sandbox.reject(o.id)).rejects.toThrow(/refunded, not processing/);
    expect((await w.sandbox.status()).balances.live).toBe(10_000_000);
  });

  test('failing an unknown offset is resource_missing', async () => {
    await expect(w.sandbox.fail('off_unknown')).rejects.toThrow(/No such offset/);
  });
});

describe('the clock', () => {
  test('advanceClock moves model time forward only, and persists in the ledger', async () => {
    await expect(w.sandbox.advanceClock(0)).rejects.toThrow(/forward/);
    await expect(w.sandbox.advanceClock(-5)).rejects.toThrow(/forward/);
    await expect(w.sandbox.advanceClock(1.5)).rejects.toThrow(/forward/);
    expect(await w.sandbox.advanceClock(1500)).toBe(new Date(T0 + 1500).toISOString());
    expect((await w.sandbox.status()).clock).toEqual({ now: new Date(T0 + 1500).toISOString(), offset_ms: 1500 });
    expect((await w.buy({ kg: 1 })).body.created).toBe(new Date(T0 + 1500).toISOString());
  });

  test('every read applies due placements: list, get and impact all see placed offsets', async () => {
    const ids = [(await w.buy({ kg: 1 })).body.id, (await w.buy({ kg: 2 })).body.id];
    await w.sandbox.advanceClock(3000);
    const list = (await w.call<OffsetList>('GET', '/offsets')).body;
    expect(list.data.map((o) => o.status)).toEqual(['placed', 'placed']);
    expect(await Promise.all(ids.map(async (id) => (await get(id)).status))).toEqual(['placed', 'placed']);
    expect(await impact()).toMatchObject({ placed_kg: 3, processing_kg: 0, offsets: 2 });
  });

  test('sandbox status reports impact with due placements applied', async () => {
    await w.buy({ kg: 4 });
    await w.sandbox.advanceClock(3000);
    expect((await w.sandbox.status()).impact.test).toEqual({ placed_kg: 4, processing_kg: 0, offsets: 1 });
  });
});

describe('impact totals', () => {
  test('placed_kg + processing_kg over processing and placed offsets; refunded offsets count nowhere', async () => {
    const a = (await w.buy({ kg: 100 })).body;
    w.clock.now += 1000;
    await w.buy({ kg: 20 });
    w.clock.now += 1000;
    const c = (await w.buy({ kg: 3 })).body;
    await w.sandbox.fail(c.id);
    expect(await impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 0, processing_kg: 120, offsets: 2 });
    w.clock.now += 1000; // a is 3 s old
    expect((await get(a.id)).status).toBe('placed');
    expect(await impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 100, processing_kg: 20, offsets: 2 });
    w.clock.now += 1000;
    expect(await impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 120, processing_kg: 0, offsets: 2 });
  });
});

describe('timestamps', () => {
  test('created and placed are ISO 8601 UTC with milliseconds, also on whole seconds', async () => {
    w.clock.now = T0; // a whole second: still .000
    const o = (await w.buy({ kg: 1 })).body;
    w.clock.now = T0 + 123_456;
    const p = (await w.buy({ kg: 1 }, { key: w.keys.live })).body;
    await w.sandbox.advanceClock(60_000);
    for (const x of [await get(o.id), await get(p.id, w.keys.live)]) {
      expect(x.created).toMatch(ISO_MS);
      expect(x.placed).toMatch(ISO_MS);
      expect(new Date(x.created).toISOString()).toBe(x.created);
    }
    expect((await get(o.id)).created).toBe('2030-01-15T12:00:00.000Z');
    expect((await get(p.id, w.keys.live)).created).toBe('2030-01-15T12:02:03.456Z');
    expect((await w.sandbox.keys())[0]!.created).toMatch(ISO_MS);
  });
});
