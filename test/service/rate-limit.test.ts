import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { RateLimiter } from '../../src/service/rate-limit.js';
import { expectError, openWorld, type World } from './helpers.js';

let w: World;
beforeEach(() => {
  w = openWorld();
});
afterEach(() => w.close());

const balance = (key?: string) => w.call('GET', '/balance', key ? { key } : {});

describe('rate limiting', () => {
  test('off by default: many requests in one millisecond are all served', () => {
    for (let i = 0; i < 300; i++) expect(balance().status).toBe(200);
  });

  test('n requests per window per key, then 429 rate_limited with Retry-After in whole seconds', () => {
    w.sandbox.setRateLimit(3);
    for (let i = 0; i < 3; i++) expect(balance().status).toBe(200);
    const res = balance();
    const err = expectError(res, 429, 'rate_limited');
    expect(err.type).toBe('rate_limit_error');
    expect(res.headers['retry-after']).toBe('1');
    expect(Object.keys(err).sort()).toEqual(['code', 'message', 'type']);
    // Another key has its own window.
    expect(balance(w.keys.readOnly).status).toBe(200);
    expect(balance(w.keys.live).status).toBe(200);
  });

  test('the window resets as the clock moves (the injected clock or the sandbox clock)', () => {
    w.sandbox.setRateLimit(2);
    balance();
    balance();
    expect(balance().status).toBe(429);
    w.clock.now += 999;
    expect(balance().status).toBe(429);
    w.clock.now += 1;
    expect(balance().status).toBe(200);
    expect(balance().status).toBe(200);
    expect(balance().status).toBe(429);
    w.sandbox.advanceClock(1000);
    expect(balance().status).toBe(200);
  });

  test('Retry-After is the seconds left in the window, rounded up', () => {
    w.sandbox.setRateLimit(1, 10_000);
    expect(balance().status).toBe(200);
    w.clock.now += 2_500;
    expect(balance().headers['retry-after']).toBe('8');
    w.clock.now += 7_000;
    expect(balance().headers['retry-after']).toBe('1');
    w.clock.now += 500;
    expect(balance().status).toBe(200);
  });

  test('refused requests do not count against the next window', () => {
    w.sandbox.setRateLimit(2);
    for (let i = 0; i < 10; i++) balance();
    w.clock.now += 1000;
    expect([balance().status, balance().status, balance().status]).toEqual([200, 200, 429]);
  });

  test('a limit of 0 refuses every request, on every operation, and a limited purchase buys nothing', () => {
    const id = w.buy({ kg: 1 }).body.id;
    w.sandbox.setRateLimit(0);
    const responses = [
      w.call('POST', '/offsets', { body: { kg: 1 }, idem: 'rl' }),
      w.call('POST', '/quotes', { body: { kg: 1 } }),
      w.call('GET', '/offsets'),
      w.call('GET', `/offsets/${id}`),
      balance(),
      w.call('GET', '/impact'),
    ];
    for (const res of responses) {
      expectError(res, 429, 'rate_limited');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(w.rows('SELECT id FROM offsets')).toHaveLength(1);
    expect(w.rows('SELECT * FROM idempotency')).toHaveLength(1);
    w.sandbox.setRateLimit(null);
    expect(balance().status).toBe(200);
  });

  test('authentication and account standing come before the limit', () => {
    w.sandbox.setRateLimit(0);
    expectError(w.call('GET', '/balance', { key: null }), 401, 'api_key_missing');
    w.sandbox.setStatus('suspended');
    expectError(balance(), 403, 'api_access_inactive');
  });

  test('the limit is read from the ledger on every request, so a running service picks up changes', () => {
    expect(balance().status).toBe(200);
    w.sandbox.setRateLimit(1, 60_000);
    expect(balance(w.keys.live).status).toBe(200);
    const res = balance(w.keys.live);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
  });

  test('counts live in the memory of one service instance', () => {
    w.sandbox.setRateLimit(1);
    expect(balance().status).toBe(200);
    expect(balance().status).toBe(429);
    const other = w.sandbox.service();
    const res = other.handle({ method: 'GET', path: '/api/v1/balance', query: {}, headers: { authorization: `Bearer ${w.keys.test}` }, body: '' });
    expect(res.status).toBe(200);
  });

  test('the sandbox refuses nonsense limits', () => {
    expect(() => w.sandbox.setRateLimit(-1)).toThrow(/rate limit/);
    expect(() => w.sandbox.setRateLimit(1.5)).toThrow(/rate limit/);
    expect(() => w.sandbox.setRateLimit(5, 0)).toThrow(/window/);
    expect(w.sandbox.setRateLimit(25, 60_000)).toMatchObject({ rate_limit_requests: 25, rate_limit_window_ms: 60_000 });
  });
});

describe('RateLimiter (fixed window)', () => {
  test('a clock that moves backwards opens a new window instead of locking the key out', () => {
    const rl = new RateLimiter();
    expect(rl.take('k', 10_000, 1, 1000)).toBeNull();
    expect(rl.take('k', 10_001, 1, 1000)).toBe(1);
    expect(rl.take('k', 5_000, 1, 1000)).toBeNull();
  });
});
