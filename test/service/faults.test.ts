import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { describeFaults, type FaultConfig, FaultDice, faultResponse, parseShare } from '../../src/service/faults.js';
import { checkFaults } from '../../src/service/settings.js';
import { SEED } from '../support/seed.js';
import { openSandbox, refused } from '../support/world.js';

/**
 * `carbon sandbox faults`: the setting's checks (a table), the draws (seeded, filtered by route
 * and mode, shares and bounds kept), and the setting as the store keeps it for every instance.
 */

const BASE: FaultConfig = {
  error_rate: 0,
  errors: ['429', '500', '503', 'drop-before', 'drop-after'],
  latency_ms: null,
  route: null,
  mode: null,
  seed: SEED,
  retry_after_seconds: 1,
};
const buy = { method: 'POST', path: '/api/v1/offsets', headers: { authorization: 'Bearer ck_test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' } };
const dice = (config: Partial<FaultConfig>) => {
  const d = new FaultDice();
  d.use(JSON.stringify({ ...BASE, ...config }));
  return d;
};

describe('checkFaults', () => {
  test('fills the defaults and writes the route as the route table does', () => {
    expect(checkFaults({ error_rate: 0.3, seed: 7 })).toEqual({ ...BASE, error_rate: 0.3, seed: 7 });
    expect(
      checkFaults({
        latency_ms: { min: 50, max: 400 },
        route: 'post /api/v1/offsets/',
        mode: 'live',
        retry_after_seconds: 0,
        errors: ['503', '503'],
      }),
    ).toEqual({
      ...BASE,
      seed: null,
      latency_ms: { min: 50, max: 400 },
      route: 'POST /offsets',
      mode: 'live',
      retry_after_seconds: 0,
      errors: ['503'],
    });
    expect(checkFaults({ error_rate: 1, route: 'GET /offsets/{id}' }).route).toBe('GET /offsets/{id}');
  });

  test('latency alone, with no fault kind ticked (the page form), is taken: no error rate draws from the kinds', () => {
    // Before: "The faults are one or more of …", and faults stayed off.
    expect(checkFaults({ errors: [], latency_ms: { min: 100, max: 100 } })).toMatchObject({
      error_rate: 0,
      latency_ms: { min: 100, max: 100 },
    });
    expect(refused(() => checkFaults({ error_rate: 0.3, errors: [] })).message).toContain('for the error rate to draw from');
  });

  test.each([
    [{}, 'error_rate'],
    [{ error_rate: 0 }, 'error_rate'],
    [{ error_rate: -0.1 }, 'error_rate'],
    [{ error_rate: 1.01 }, 'error_rate'],
    [{ error_rate: Number.NaN }, 'error_rate'],
    [{ error_rate: 0.5, errors: [] }, 'errors'],
    [{ error_rate: 0.5, errors: ['404'] }, 'errors'],
    [{ latency_ms: { min: 0, max: 0 } }, 'error_rate'],
    [{ latency_ms: { min: 10, max: 5 } }, 'latency'],
    [{ latency_ms: { min: -1, max: 5 } }, 'latency'],
    [{ latency_ms: { min: 0, max: 60_001 } }, 'latency'],
    [{ latency_ms: { min: 0.5, max: 5 } }, 'latency'],
    [{ error_rate: 0.5, route: 'DELETE /offsets' }, 'route'],
    [{ error_rate: 0.5, route: '/offsets' }, 'route'],
    [{ error_rate: 0.5, route: 'GET /offsets/x/y' }, 'route'],
    [{ error_rate: 0.5, mode: 'prod' }, 'mode'],
    [{ error_rate: 0.5, seed: -1 }, 'seed'],
    [{ error_rate: 0.5, seed: 2 ** 32 }, 'seed'],
    [{ error_rate: 0.5, seed: 1.5 }, 'seed'],
    [{ error_rate: 0.5, retry_after_seconds: 61 }, 'retry_after'],
    [{ error_rate: 0.5, retry_after_seconds: -1 }, 'retry_after'],
  ])('%j is refused (param %s)', (input, param) => {
    const err = refused(() => checkFaults(input));
    expect(err.code).toBe('validation_error');
    expect(err.extra.param).toBe(param);
  });
});

describe('describeFaults', () => {
  test('a latency always that long is said as one duration, as it was written (--latency 5s), a range as a range', () => {
    const f = { error_rate: 0, errors: [], route: null, mode: null, seed: null, retry_after_seconds: 1 } as unknown as FaultConfig;
    // Before: "latency 5000ms-5000ms".
    expect(describeFaults({ ...f, latency_ms: { min: 5000, max: 5000 } })).toBe('latency 5000ms; every route; no seed');
    expect(describeFaults({ ...f, latency_ms: { min: 50, max: 400 } })).toBe('latency 50ms-400ms; every route; no seed');
  });
});

describe('FaultDice', () => {
  const kinds = (d: FaultDice, n: number) => Array.from({ length: n }, () => d.draw(buy)?.kind ?? null);

  test('the same seed draws the same sequence; another seed another one', () => {
    const a = kinds(dice({ error_rate: 0.3, seed: 7 }), 200);
    expect(kinds(dice({ error_rate: 0.3, seed: 7 }), 200)).toEqual(a);
    expect(kinds(dice({ error_rate: 0.3, seed: 8 }), 200)).not.toEqual(a);
  });

  test('a new setting starts its sequence again; the same one read again does not', () => {
    const d = dice({ error_rate: 0.3, seed: 7 });
    const first = kinds(d, 50);
    d.use(JSON.stringify({ ...BASE, error_rate: 0.3, seed: 7 }));
    expect(kinds(d, 50)).not.toEqual(first); // the same text: the sequence goes on
    d.use(JSON.stringify({ ...BASE, error_rate: 0.3, seed: 7, retry_after_seconds: 0 }));
    expect(kinds(d, 50)).toEqual(first);
  });

  test('the share holds, and every kind is drawn', () => {
    const drawn = kinds(dice({ error_rate: 0.3 }), 10_000);
    const faults = drawn.filter((k) => k !== null);
    expect(faults.length / drawn.length).toBeGreaterThan(0.27);
    expect(faults.length / drawn.length).toBeLessThan(0.33);
    for (const kind of BASE.errors) expect(faults.filter((k) => k === kind).length).toBeGreaterThan(faults.length / 5 - 150);
    expect(kinds(dice({ error_rate: 1, errors: ['drop-after'] }), 100)).toEqual(Array(100).fill('drop-after'));
  });

  test('latency is drawn within its bounds, ends included', () => {
    const d = dice({ latency_ms: { min: 50, max: 52 } });
    const seen = new Set(Array.from({ length: 300 }, () => d.draw(buy)!.latencyMs));
    expect([...seen].sort()).toEqual([50, 51, 52]);
    expect(dice({ latency_ms: { min: 200, max: 200 } }).draw(buy)).toEqual({ latencyMs: 200, kind: null });
  });

  test('only the route and the mode named are touched; pages and unknown paths never', () => {
    const d = dice({ error_rate: 1, route: 'GET /offsets/{id}', mode: 'live' });
    const live = { authorization: 'Bearer ck_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' };
    expect(d.draw({ method: 'GET', path: '/api/v1/offsets/off_1', headers: live })).not.toBeNull();
    expect(d.draw({ method: 'get', path: '/api/v1/offsets/off_1/', headers: live })).not.toBeNull();
    expect(d.draw({ method: 'GET', path: '/api/v1/offsets/off_1', headers: buy.headers })).toBeNull();
    expect(d.draw({ method: 'GET', path: '/api/v1/offsets/off_1', headers: {} })).toBeNull();
    expect(d.draw({ method: 'GET', path: '/api/v1/offsets', headers: live })).toBeNull();
    expect(d.draw({ method: 'POST', path: '/api/v1/offsets/off_1', headers: live })).toBeNull();
    const all = dice({ error_rate: 1 });
    expect(all.draw({ method: 'GET', path: '/healthz', headers: {} })).toBeNull();
    expect(all.draw({ method: 'GET', path: '/login', headers: {} })).toBeNull();
    expect(all.draw({ method: 'GET', path: '/api/v1/nope', headers: {} })).not.toBeNull();
    expect(new FaultDice().draw(buy)).toBeNull();
  });

  test('answers in the envelope, with Retry-After on 429 and 503', () => {
    const config = { ...BASE, retry_after_seconds: 0 };
    expect(faultResponse('429', config)).toMatchObject({
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: { code: 'rate_limited', type: 'rate_limit_error' } },
    });
    expect(faultResponse('503', config)).toMatchObject({
      status: 503,
      headers: { 'retry-after': '0' },
      body: { error: { code: 'service_unavailable' } },
    });
    const five = faultResponse('500', config);
    expect(five).toMatchObject({ status: 500, body: { error: { code: 'internal_error' } } });
    expect(five.headers['retry-after']).toBeUndefined();
    expect(five.headers['request-id']).toMatch(/^req_/);
  });
});

describe('the setting in the store', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'carbon-faults-'));
    dirs.push(d);
    return d;
  };

  test('off by default; set is seen by another sandbox on the same ledger; off and reset clear it; a refused one changes nothing', async () => {
    const data = dir();
    const a = await openSandbox(data);
    const b = await openSandbox(data);
    try {
      expect(await a.faults()).toBeNull();
      expect((await a.status()).faults).toBeNull();
      const set = await a.setFaults({ error_rate: 0.3, seed: 7 });
      expect(await b.faults()).toEqual(set);
      expect((await b.status()).faults).toEqual(set);
      await expect(b.setFaults({ error_rate: 3 })).rejects.toThrow(/share from 0 to 1/);
      expect(await a.faults()).toEqual(set);
      await b.clearFaults();
      expect(await a.faults()).toBeNull();
      await a.setFaults({ latency_ms: { min: 1, max: 2 } });
      await b.reset();
      expect(await a.faults()).toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

test('a share is read as every number carbon reads: digits before the point, spaces around ignored', () => {
  expect(['0', '0.3', ' 0.5 ', '1', '1.00'].map(parseShare)).toEqual([0, 0.3, 0.5, 1, 1]);
  for (const text of ['.5', '-0.1', '1.5', '1e-1', '0,5', '', '50%']) expect(parseShare(text), text).toBeNull();
});
