import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { takeFromWindow } from '../../src/store/rate-window.js';
import { expectError, openSandbox, openWorld, type World } from '../support/world.js';

let w: World;
beforeEach(async () => {
  w = await openWorld();
});
afterEach(() => w.close());

const balance = (key?: string) => w.call('GET', '/balance', key ? { key } : {});

describe('rate limiting', () => {
  test('off by default: many requests in one millisecond are all served', async () => {
    for (let i = 0; i < 300; i++) expect((await balance()).status).toBe(200);
  });

  test('n requests per window per key, then 429 rate_limited with Retry-After in whole seconds', async () => {
    await w.sandbox.setRateLimit(3);
    for (let i = 0; i < 3; i++) expect((await balance()).status).toBe(200);
    const res = await balance();
    const err = expectError(res, 429, 'rate_limited');
    expect(err.type).toBe('rate_limit_error');
    expect(res.headers['retry-after']).toBe('1');
    expect(Object.keys(err).sort()).toEqual(['code', 'message', 'type']);
    // Another key has its own window.
    expect((await balance(w.keys.readOnly)).status).toBe(200);
    expect((await balance(w.keys.live)).status).toBe(200);
  });

  test('the window resets as the clock moves (the injected clock or the sandbox clock)', async () => {
    await w.sandbox.setRateLimit(2);
    await balance();
    await balance();
    expect((await balance()).status).toBe(429);
    w.clock.now += 999;
    expect((await balance()).status).toBe(429);
    w.clock.now += 1;
    expect((await balance()).status).toBe(200);
    expect((await balance()).status).toBe(200);
    expect((await balance()).status).toBe(429);
    await w.sandbox.advanceClock(1000);
    expect((await balance()).status).toBe(200);
  });

  test('Retry-After is the seconds left in the window, rounded up', async () => {
    await w.sandbox.setRateLimit(1, 10_000);
    expect((await balance()).status).toBe(200);
    w.clock.now += 2_500;
    expect((await balance()).headers['retry-after']).toBe('8');
    w.clock.now += 7_000;
    expect((await balance()).headers['retry-after']).toBe('1');
    w.clock.now += 500;
    expect((await balance()).status).toBe(200);
  });

  test('refused requests do not count against the next window', async () => {
    await w.sandbox.setRateLimit(2);
    for (let i = 0; i < 10; i++) await balance();
    w.clock.now += 1000;
    expect([(await balance()).status, (await balance()).status, (await balance()).status]).toEqual([200, 200, 429]);
  });

  test('a limit of 0 refuses every request, on every operation, and a limited purchase buys nothing', async () => {
    const id = (await w.buy({ kg: 1 })).body.id;
    await w.sandbox.setRateLimit(0);
    const responses = [
      await w.call('POST', '/offsets', { body: { kg: 1 }, idem: 'rl' }),
      await w.call('POST', '/quotes', { body: { kg: 1 } }),
      await w.call('GET', '/offsets'),
      await w.call('GET', `/offsets/${id}`),
      await balance(),
      await w.call('GET', '/impact'),
    ];
    for (const res of responses) {
      expectError(res, 429, 'rate_limited');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(w.rows('SELECT id FROM offsets')).toHaveLength(1);
    expect(w.rows('SELECT * FROM idempotency')).toHaveLength(1);
    await w.sandbox.setRateLimit(null);
    expect((await balance()).status).toBe(200);
  });

  test('authentication and account standing come before the limit', async () => {
    await w.sandbox.setRateLimit(0);
    expectError(await w.call('GET', '/balance', { key: null }), 401, 'api_key_missing');
    await w.sandbox.setStatus('suspended');
    expectError(await balance(), 403, 'api_access_inactive');
  });

  test('a new setting counts afresh: requests made under the one before never count against it', async () => {
    await w.sandbox.setRateLimit(1000, 1000);
    for (let i = 0; i < 5; i++) expect((await balance()).status).toBe(200);
    // That window closed under its own setting; then a tighter limit over a longer window.
    w.clock.now += 3000;
    await w.sandbox.setRateLimit(3, 3_600_000);
    for (let i = 0; i < 3; i++) expect((await balance()).status).toBe(200);
    const res = await balance();
    // Before: the five of "1,000 a second" counted against "3 an hour", and the first request was refused for 3,597 s.
    expect([res.status, res.headers['retry-after']]).toEqual([429, '3600']);
  });

  test('the limit is read from the ledger on every request, so a running service picks up changes', async () => {
    expect((await balance()).status).toBe(200);
    await w.sandbox.setRateLimit(1, 60_000);
    expect((await balance(w.keys.live)).status).toBe(200);
    const res = await balance(w.keys.live);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
  });

  test('counts are kept by the store: services over one store share them; another process (its own SQLite store) does not', async () => {
    await w.sandbox.setRateLimit(1);
    expect((await balance()).status).toBe(200);
    expect((await balance()).status).toBe(429);
    const request = { method: 'GET', path: '/api/v1/balance', query: {}, headers: { authorization: `Bearer ${w.keys.test}` }, body: '' };
    expect((await w.sandbox.service().handle(request)).status).toBe(429);
    const elsewhere = await openSandbox(w.dir, () => w.clock.now);
    try {
      expect((await elsewhere.service().handle(request)).status).toBe(200);
    } finally {
      await elsewhere.close();
    }
  });

  test('the sandbox refuses nonsense limits', async () => {
    await expect(w.sandbox.setRateLimit(-1)).rejects.toThrow(/rate limit/);
    await expect(w.sandbox.setRateLimit(1.5)).rejects.toThrow(/rate limit/);
    await expect(w.sandbox.setRateLimit(5, 0)).rejects.toThrow(/window/);
    expect(await w.sandbox.setRateLimit(25, 60_000)).toMatchObject({ rate_limit_requests: 25, rate_limit_window_ms: 60_000 });
  });
});

describe('the fixed-window rule', () => {
  test('a clock that moves backwards opens a new window instead of locking the key out', () => {
    const first = takeFromWindow(undefined, 10_000, 1, 1000);
    expect(first.wait).toBeNull();
    const second = takeFromWindow(first.window, 10_001, 1, 1000);
    expect(second.wait).toBe(1);
    expect(takeFromWindow(second.window, 5_000, 1, 1000).wait).toBeNull();
  });

  test('worked examples: n per window, then the rest of the window in whole seconds', () => {
    const table: Array<[number, number | null]> = [
      [0, null],
      [1, null],
      [2, null],
      [3, 60],
      [59_000, 1],
      [59_999, 1],
      [60_000, null],
    ];
    let w: Parameters<typeof takeFromWindow>[0];
    for (const [at, wait] of table) {
      const r = takeFromWindow(w, at, 3, 60_000);
      expect([at, r.wait]).toEqual([at, wait]);
      w = r.window;
    }
  });
});
