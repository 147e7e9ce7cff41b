import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { OffsetList } from '../../src/api/types.js';
import { expectError, openWorld, T0, type World } from '../support/world.js';

let w: World;
beforeEach(async () => {
  w = await openWorld();
  await w.sandbox.topUp('live', 100_000);
});
afterEach(() => w.close());

const list = async (query: Record<string, string> = {}, key?: string) => {
  const res = await w.call<OffsetList>('GET', '/offsets', { query, ...(key ? { key } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** Walks every page with `limit`, checking has_more on each, and returns the ids in order. */
async function walk(limit: number, extra: Record<string, string> = {}, key?: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  let after: string | undefined;
  for (;;) {
    // Bounded: a cursor bug fails here in milliseconds instead of paging forever.
    if (pages > 10_000) throw new Error(`more than 10,000 pages of ${limit}: the cursor does not move (last ${after})`);
    const page = await list({ limit: String(limit), ...extra, ...(after ? { starting_after: after } : {}) }, key);
    pages++;
    expect(page.object).toBe('list');
    expect(page.data.length).toBeLessThanOrEqual(limit);
    ids.push(...page.data.map((o) => o.id));
    if (!page.has_more) return { ids, pages };
    expect(page.data).toHaveLength(limit);
    after = page.data.at(-1)!.id;
  }
}

describe('order and pages', () => {
  test('an empty account lists nothing', async () => {
    expect(await list()).toEqual({ object: 'list', data: [], has_more: false });
  });

  test('newest first as time moves; the default page is 10', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      w.clock.now = T0 + i * 10;
      ids.push((await w.buy({ kg: i + 1 })).body.id);
    }
    const page = await list();
    expect(page.data.map((o) => o.id)).toEqual(ids.slice().reverse().slice(0, 10));
    expect(page.has_more).toBe(true);
    const rest = await list({ starting_after: page.data.at(-1)!.id });
    expect(rest).toMatchObject({ has_more: false });
    expect(rest.data.map((o) => o.id)).toEqual([ids[1], ids[0]]);
  });

  test('a stable order for many offsets created in the same millisecond (frozen clock)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 230; i++) ids.push((await w.buy({ kg: 1 })).body.id);
    const created = new Set((await list({ limit: '100' })).data.map((o) => o.created));
    expect([...created]).toEqual([new Date(T0).toISOString()]);
    const newestFirst = ids.slice().reverse();
    for (const limit of [1, 7, 100]) {
      const { ids: seen, pages } = await walk(limit);
      expect(seen).toEqual(newestFirst);
      expect(pages).toBe(Math.ceil(230 / limit));
    }
    // Listing twice gives the same answer.
    expect(await list({ limit: '50' })).toEqual(await list({ limit: '50' }));
  });

  test('has_more is false when the last page is exactly full', async () => {
    for (let i = 0; i < 4; i++) await w.buy({ kg: 1 });
    const first = await list({ limit: '2' });
    expect(first.has_more).toBe(true);
    const second = await list({ limit: '2', starting_after: first.data[1]!.id });
    expect(second.data).toHaveLength(2);
    expect(second.has_more).toBe(false);
    expect((await list({ limit: '4' })).has_more).toBe(false);
    expect((await list({ limit: '3' })).has_more).toBe(true);
  });

  test('starting_after the oldest offset gives an empty last page', async () => {
    const oldest = (await w.buy({ kg: 1 })).body.id;
    await w.buy({ kg: 1 });
    expect(await list({ starting_after: oldest })).toEqual({ object: 'list', data: [], has_more: false });
  });

  test('refunded and placed offsets stay in the list with their status', async () => {
    const a = (await w.buy({ kg: 1 })).body.id;
    w.clock.now += 1;
    const b = (await w.buy({ kg: 2 })).body.id;
    await w.sandbox.fail(b);
    w.clock.now += 3000;
    expect((await list()).data.map((o) => [o.id, o.status])).toEqual([
      [b, 'refunded'],
      [a, 'placed'],
    ]);
  });

  test('listed offsets equal what GET /offsets/{id} returns', async () => {
    await w.buy({ kg: 3, reference: 'x' });
    await w.buy({ amount_cents: 50 });
    for (const o of (await list()).data) expect((await w.call('GET', `/offsets/${encodeURIComponent(o.id)}`)).body).toEqual(o);
  });
});

describe('reference filter', () => {
  test('only offsets with exactly that reference, newest first, paged', async () => {
    const tagged: string[] = [];
    for (let i = 0; i < 9; i++) {
      const ref = i % 3 === 0 ? 'invoice-7' : i % 3 === 1 ? 'Invoice-7' : 'invoice-77';
      const id = (await w.buy({ kg: 1, reference: ref })).body.id;
      if (ref === 'invoice-7') tagged.push(id);
    }
    await w.buy({ kg: 1 });
    const all = await walk(2, { reference: 'invoice-7' });
    expect(all.ids).toEqual(tagged.slice().reverse());
    expect(all.pages).toBe(2);
    expect((await list({ reference: 'invoice-7' })).data.every((o) => o.reference === 'invoice-7')).toBe(true);
    expect((await list({ reference: 'invoice' })).data).toEqual([]);
  });

  test('the cursor may be an offset without that reference: the page is everything older that matches', async () => {
    const old = (await w.buy({ kg: 1, reference: 'r' })).body.id;
    const mid = (await w.buy({ kg: 1 })).body.id;
    await w.buy({ kg: 1, reference: 'r' });
    expect((await list({ reference: 'r', starting_after: mid })).data.map((o) => o.id)).toEqual([old]);
  });

  test('references with emoji and spaces match as sent', async () => {
    const ref = 'Q3 \u{1F333} trees';
    const id = (await w.buy({ kg: 1, reference: ref })).body.id;
    expect((await list({ reference: ref })).data.map((o) => o.id)).toEqual([id]);
  });
});

describe('404 resource_missing', () => {
  test('an unknown starting_after → 404 param starting_after', async () => {
    await w.buy({ kg: 1 });
    expectError(await w.call('GET', '/offsets', { query: { starting_after: 'off_missing' } }), 404, 'resource_missing', 'starting_after');
  });

  test('an unknown id → 404 param id; so is a path segment that is not valid percent-encoding', async () => {
    expectError(await w.call('GET', '/offsets/off_missing'), 404, 'resource_missing', 'id');
    expectError(await w.call('GET', '/offsets/%ZZ'), 404, 'resource_missing', 'id');
    expectError(await w.call('GET', '/offsets/%E0%A4%A'), 404, 'resource_missing', 'id');
  });

  test('ids are matched exactly, after percent-decoding', async () => {
    const id = (await w.buy({ kg: 1 })).body.id;
    expect((await w.call('GET', `/offsets/${id.replace('off_', 'off%5F')}`)).status).toBe(200);
    expectError(await w.call('GET', `/offsets/${id.toUpperCase()}`), 404, 'resource_missing', 'id');
    expectError(await w.call('GET', `/offsets/${id} `), 404, 'resource_missing', 'id');
  });
});

describe('mode scoping of every read', () => {
  test('list, show, balance and impact see only the key’s mode', async () => {
    const t = (await w.buy({ kg: 10, reference: 'same' })).body;
    const l = (await w.buy({ kg: 20, reference: 'same' }, { key: w.keys.live })).body;

    expect((await list()).data.map((o) => o.id)).toEqual([t.id]);
    expect((await list({}, w.keys.live)).data.map((o) => o.id)).toEqual([l.id]);
    expect((await list({ reference: 'same' })).data.map((o) => o.id)).toEqual([t.id]);
    expect((await list({ reference: 'same' }, w.keys.live)).data.map((o) => o.id)).toEqual([l.id]);
    expect((await list({}, w.keys.readOnly)).data.map((o) => o.id)).toEqual([t.id]);

    expect((await w.call('GET', `/offsets/${t.id}`)).status).toBe(200);
    expectError(await w.call('GET', `/offsets/${l.id}`), 404, 'resource_missing', 'id');
    expectError(await w.call('GET', `/offsets/${t.id}`, { key: w.keys.live }), 404, 'resource_missing', 'id');
    expectError(await w.call('GET', `/offsets/${l.id}`, { key: w.keys.readOnly }), 404, 'resource_missing', 'id');

    expectError(await w.call('GET', '/offsets', { query: { starting_after: l.id } }), 404, 'resource_missing', 'starting_after');
    expectError(
      await w.call('GET', '/offsets', { key: w.keys.live, query: { starting_after: t.id } }),
      404,
      'resource_missing',
      'starting_after',
    );

    expect((await w.call('GET', '/balance')).body).toMatchObject({ livemode: false, available_cents: 100_000 - 40 });
    expect((await w.call('GET', '/balance', { key: w.keys.live })).body).toMatchObject({ livemode: true, available_cents: 100_000 - 80 });
    expect((await w.call('GET', '/impact')).body).toEqual({
      object: 'impact',
      livemode: false,
      placed_kg: 0,
      processing_kg: 10,
      offsets: 1,
    });
    expect((await w.call('GET', '/impact', { key: w.keys.live })).body).toEqual({
      object: 'impact',
      livemode: true,
      placed_kg: 0,
      processing_kg: 20,
      offsets: 1,
    });
  });
});
