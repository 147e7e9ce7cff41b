import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApiResponse } from '../../src/api/types.js';
import { ERROR_CODES } from '../../src/service/errors.js';
import { errorOf, expectError, openWorld, type World } from '../support/world.js';

/**
 * The documented type↔code table (docs/service-model.md). Written out here rather than imported,
 * so a change to the model's table that the docs do not follow fails this test.
 */
const DOCUMENTED: Record<string, [number, string]> = {
  invalid_json: [400, 'invalid_request_error'],
  idempotency_key_missing: [400, 'invalid_request_error'],
  idempotency_key_invalid: [400, 'invalid_request_error'],
  api_key_missing: [401, 'authentication_error'],
  api_key_invalid: [401, 'authentication_error'],
  api_key_revoked: [401, 'authentication_error'],
  insufficient_balance: [402, 'invalid_request_error'],
  api_access_inactive: [403, 'permission_error'],
  insufficient_permissions: [403, 'permission_error'],
  resource_missing: [404, 'invalid_request_error'],
  route_missing: [404, 'invalid_request_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  idempotency_key_reused: [409, 'invalid_request_error'],
  malformed_request: [400, 'invalid_request_error'],
  request_timeout: [408, 'invalid_request_error'],
  body_too_large: [413, 'invalid_request_error'],
  headers_too_large: [431, 'invalid_request_error'],
  validation_error: [422, 'invalid_request_error'],
  amount_too_small: [422, 'invalid_request_error'],
  amount_above_max: [422, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  internal_error: [500, 'api_error'],
  service_unavailable: [503, 'api_error'],
};

/** Which optional fields each code carries. */
const EXTRA_FIELDS: Record<string, string[]> = {
  validation_error: ['param'],
  amount_too_small: ['param'],
  resource_missing: ['param'],
  insufficient_balance: ['balance_cents', 'required_cents'],
  amount_above_max: ['required_cents'],
};

let w: World;
beforeAll(async () => {
  w = await openWorld();
});
afterAll(() => w.close());

/** One request per code the in-process model can produce, each from a fresh sandbox state where needed. */
async function trigger(code: string): Promise<ApiResponse> {
  switch (code) {
    case 'invalid_json':
      return w.call('POST', '/quotes', { body: '{' });
    case 'idempotency_key_missing':
      return w.call('POST', '/offsets', { body: { kg: 1 } });
    case 'idempotency_key_invalid':
      return w.call('POST', '/offsets', { body: { kg: 1 }, idem: '' });
    case 'api_key_missing':
      return w.call('GET', '/balance', { key: null });
    case 'api_key_invalid':
      return w.call('GET', '/balance', { key: 'nope' });
    case 'api_key_revoked': {
      const k = await w.sandbox.createKey('test', 'purchase');
      await w.sandbox.revokeKey(k.id);
      return w.call('GET', '/balance', { key: k.secret });
    }
    case 'insufficient_balance':
      return w.call('POST', '/offsets', { key: w.keys.live, body: { kg: 1 }, idem: 'e-402' });
    case 'api_access_inactive': {
      await w.sandbox.setStatus('suspended');
      try {
        return await w.call('GET', '/balance');
      } finally {
        await w.sandbox.setStatus('active');
      }
    }
    case 'insufficient_permissions':
      return w.call('POST', '/offsets', { key: w.keys.readOnly, body: { kg: 1 }, idem: 'e-403' });
    case 'resource_missing':
      return w.call('GET', '/offsets/off_none');
    case 'route_missing':
      return w.call('GET', '/api/v1/nowhere');
    case 'method_not_allowed':
      return w.call('DELETE', '/offsets');
    case 'idempotency_key_reused':
      await w.call('POST', '/offsets', { body: { kg: 1 }, idem: 'e-409' });
      return w.call('POST', '/offsets', { body: { kg: 2 }, idem: 'e-409' });
    case 'validation_error':
      return w.call('POST', '/quotes', { body: { kg: 1.5 } });
    case 'amount_too_small':
      return w.call('POST', '/quotes', { body: { amount_cents: 1 } });
    case 'amount_above_max':
      return w.call('POST', '/offsets', { body: { kg: 10 }, idem: 'e-422-max', headers: { 'carbon-max-amount-cents': '39' } });
    case 'rate_limited': {
      await w.sandbox.setRateLimit(0);
      try {
        return await w.call('GET', '/impact');
      } finally {
        await w.sandbox.setRateLimit(null);
      }
    }
    default:
      throw new Error(`no trigger for ${code}`);
  }
}

/** Codes only the HTTP adapter (400/408/413/431) or an unexpected failure (5xx) produce: never from handle(). */
const NOT_FROM_HANDLE = new Set([
  'malformed_request',
  'request_timeout',
  'body_too_large',
  'headers_too_large',
  'internal_error',
  'service_unavailable',
]);

describe('the type↔code table', () => {
  test('the model’s table is exactly the documented one', () => {
    const model = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, v]) => [code, [v.status, v.type]]));
    expect(model).toEqual(DOCUMENTED);
  });

  test('every type is one of the five the spec lists; api_error only for 5xx, authentication_error only for 401', () => {
    for (const [code, [status, type]] of Object.entries(DOCUMENTED)) {
      expect(['authentication_error', 'permission_error', 'invalid_request_error', 'rate_limit_error', 'api_error'], code).toContain(type);
      expect(type === 'api_error', code).toBe(status >= 500);
      expect(type === 'authentication_error', code).toBe(status === 401);
      expect(type === 'permission_error', code).toBe(status === 403);
      expect(type === 'rate_limit_error', code).toBe(status === 429);
    }
  });

  test.each(Object.keys(DOCUMENTED).filter((c) => !NOT_FROM_HANDLE.has(c)))('%s: status, type and envelope as documented', async (code) => {
    const res = await trigger(code);
    const [status, type] = DOCUMENTED[code]!;
    expect(res.status).toBe(status);
    expect(Object.keys(res.body as object)).toEqual(['error']);
    const err = errorOf(res);
    expect(err.code).toBe(code);
    expect(err.type).toBe(type);
    expect(typeof err.message).toBe('string');
    expect(err.message.length).toBeGreaterThan(10);
    const optional = Object.keys(err)
      .filter((k) => !['type', 'code', 'message'].includes(k))
      .sort();
    expect(optional).toEqual((EXTRA_FIELDS[code] ?? []).slice().sort());
    if (code === 'insufficient_balance') {
      expect(Number.isSafeInteger(err.balance_cents)).toBe(true);
      expect(Number.isSafeInteger(err.required_cents)).toBe(true);
    }
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['request-id']).toMatch(/^req_[A-Za-z0-9]{14}$/);
  });
});

describe('headers', () => {
  test('every response is JSON and carries a unique request-id', async () => {
    const ids = new Set<string>();
    for (const res of [
      await w.call('GET', '/balance'),
      await w.call('GET', '/impact'),
      await w.call('GET', '/offsets'),
      await w.call('GET', '/nowhere'),
    ]) {
      expect(res.headers['content-type']).toBe('application/json');
      ids.add(res.headers['request-id']!);
    }
    expect(ids.size).toBe(4);
  });
});

describe('routes and methods', () => {
  test.each([
    '/api/v2/offsets',
    '/offsets',
    '/api/v1',
    '/api/v1/',
    '/api/v1/offsets/',
    '/api/v1/offsets/off_x/refund',
    '/api/v1/quote',
    '/api/v1/balances',
    '/api/v1//offsets',
    '/API/V1/offsets',
  ])('%s → 404 route_missing, before authentication', async (path) => {
    const res = await w.call('GET', path, { key: null, raw: true });
    const err = expectError(res, 404, 'route_missing');
    expect(err.type).toBe('invalid_request_error');
  });

  test.each([
    // HEAD is answered wherever GET is: Allow names it (RFC 9110 §10.2.1).
    ['DELETE', '/offsets', 'GET, HEAD, POST'],
    ['PUT', '/offsets', 'GET, HEAD, POST'],
    ['GET', '/quotes', 'POST'],
    ['POST', '/balance', 'GET, HEAD'],
    ['PATCH', '/impact', 'GET, HEAD'],
    ['POST', '/offsets/off_x', 'GET, HEAD'],
    ['DELETE', '/offsets/off_x', 'GET, HEAD'],
  ])('%s %s → 405 method_not_allowed with Allow: %s', async (method, path, allow) => {
    const res = await w.call(method, path, { key: null });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe(allow);
  });

  test('methods are case-insensitive', async () => {
    expect((await w.call('get', '/balance')).status).toBe(200);
    expect((await w.call('post', '/quotes', { body: { kg: 1 } })).status).toBe(200);
  });
});
