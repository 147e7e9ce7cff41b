import { describe, expect, test } from 'vitest';
import { API_PREFIX } from '../../src/api/types.js';
import { checkPermission, checkStanding, parseBearer, rateLimited } from '../../src/service/access.js';
import {
  effective,
  effectiveImpact,
  isDue,
  modelTime,
  mustAwaitReview,
  mustBeProcessing,
  settleAtFor,
  TIMING,
} from '../../src/service/lifecycle.js';
import { decidePurchase, fingerprint, type PurchaseState, replayed } from '../../src/service/purchase.js';
import { matchRoute, routeList } from '../../src/service/routes.js';
import {
  checkBalanceAfter,
  checkClockAdvance,
  checkRate,
  checkRateLimit,
  checkReviewLimit,
  checkTopUp,
  FRESH_ACCOUNT,
  LATEST_MODEL_TIME,
  MAX_RATE,
  MAX_TOP_UP_CENTS,
} from '../../src/service/settings.js';
import { checkIdempotencyKey, parseListQuery, parsePurchaseBody, rejectQuery } from '../../src/service/validation.js';
import type { KeyRecord, OffsetRecord } from '../../src/store/port.js';
import { refused } from '../support/world.js';

/**
 * The rules as plain functions, without a store: tables of worked examples (the values written
 * out, never recomputed with the implementation's own formula).
 */

const KEY: KeyRecord = {
  id: 'key_1',
  hash: new Uint8Array(32),
  mode: 'test',
  permission: 'purchase',
  last4: 'abcd',
  created_ms: 0,
  revoked_ms: null,
};
const OFFSET: OffsetRecord = {
  seq: 1,
  id: 'off_1',
  mode: 'live',
  status: 'processing',
  kg: 10,
  amount_cents: 40,
  rate: 4000,
  req_kg: 10,
  req_amount_cents: null,
  reference: null,
  created_ms: 1_000,
  settle_at_ms: 61_000,
  review: null,
  placed_ms: null,
  certificate_id: 'cert_x',
};

describe('access', () => {
  test.each([
    [undefined, 'api_key_missing'],
    ['', 'api_key_missing'],
    ['  ', 'api_key_missing'],
    ['Bearer', 'api_key_invalid'],
    [`Basic ck_test_${'a'.repeat(32)}`, 'api_key_invalid'],
    [`xBearer ck_test_${'a'.repeat(32)}`, 'api_key_invalid'],
    [`Bearer ck_prod_${'a'.repeat(32)}`, 'api_key_invalid'],
    ['Bearer ck_test_short', 'api_key_invalid'],
  ])('Authorization %j → 401 %s', (header, code) => {
    expect(refused(() => parseBearer(header)).code).toBe(code);
  });

  test.each([
    [`Bearer ck_test_${'a'.repeat(32)}`, 'test'],
    [`bearer ck_live_${'B'.repeat(32)}`, 'live'],
    [`Bearer   ck_test_${'0'.repeat(32)}  `, 'test'],
  ])('Authorization %j → a %s key', (header, mode) => {
    expect(parseBearer(header).mode).toBe(mode);
  });

  test('standing: revoked 401, suspended and unapproved 403 with their own words; permission 403 for read-only purchases', () => {
    expect(refused(() => checkStanding({ ...KEY, revoked_ms: 5 }, FRESH_ACCOUNT)).code).toBe('api_key_revoked');
    expect(refused(() => checkStanding(KEY, { ...FRESH_ACCOUNT, status: 'suspended' })).message).toBe(
      'API access is inactive: the account is suspended.',
    );
    expect(refused(() => checkStanding(KEY, { ...FRESH_ACCOUNT, status: 'unapproved' })).message).toBe(
      'API access is inactive: the account is not yet approved.',
    );
    expect(() => checkStanding(KEY, FRESH_ACCOUNT)).not.toThrow();
    expect(refused(() => checkPermission({ ...KEY, permission: 'read_only' }, 'purchase')).code).toBe('insufficient_permissions');
    expect(() => checkPermission({ ...KEY, permission: 'read_only' }, 'read')).not.toThrow();
  });

  test.each([
    [1, 'Too many requests. Retry after 1 second.'],
    [2, 'Too many requests. Retry after 2 seconds.'],
    [60, 'Too many requests. Retry after 60 seconds.'],
  ])('429 after %i s: %s', (wait, message) => {
    const err = rateLimited(wait);
    expect([err.status, err.message, err.headers['retry-after']]).toEqual([429, message, String(wait)]);
  });
});

describe('lifecycle', () => {
  test.each([
    ['processing, before its time', OFFSET, 60_999, false],
    ['processing, at its time', OFFSET, 61_000, true],
    ['processing, waiting for review', { ...OFFSET, settle_at_ms: null, review: 'pending' as const }, 10 ** 12, false],
    ['placed already (its old time still set)', { ...OFFSET, status: 'placed' as const }, 10 ** 12, false],
    ['refunded', { ...OFFSET, status: 'refunded' as const }, 10 ** 12, false],
  ])('%s: due %s', (_what, offset, now, due) => {
    expect(isDue(offset, now)).toBe(due);
    const seen = effective(offset, now);
    expect(seen.status).toBe(due ? 'placed' : offset.status);
    if (due) expect([seen.placed_ms, seen.settle_at_ms]).toEqual([61_000, null]);
  });

  test('timing, model time and totals', () => {
    expect([TIMING.testPlacementMs, TIMING.livePlacementMs]).toEqual([3_000, 60_000]);
    expect([settleAtFor('test', 1_000), settleAtFor('live', 1_000)]).toEqual([4_000, 61_000]);
    expect(modelTime(() => 10_000, { clock_offset_ms: 2_500 })).toBe(12_500);
    expect(effectiveImpact({ placed_kg: 5, processing_kg: 7, offsets: 3 }, { kg: 4 })).toEqual({
      placed_kg: 9,
      processing_kg: 3,
      offsets: 3,
    });
  });

  test('refund and review checks name the offset and the id parameter', () => {
    for (const fn of [() => mustBeProcessing(undefined, 'off_x'), () => mustAwaitReview(undefined, 'off_x')]) {
      const err = refused(fn);
      expect([err.status, err.code, err.extra.param, err.message]).toEqual([404, 'resource_missing', 'id', "No such offset: 'off_x'."]);
    }
    const placed = refused(() => mustBeProcessing({ ...OFFSET, status: 'placed' }, 'off_1'));
    expect([placed.code, placed.extra.param, placed.message]).toEqual([
      'validation_error',
      'id',
      'Offset off_1 is placed, not processing.',
    ]);
    const notInReview = refused(() => mustAwaitReview(OFFSET, 'off_1'));
    expect([notInReview.extra.param, notInReview.message]).toEqual(['id', 'Offset off_1 is not waiting for review.']);
    expect(mustAwaitReview({ ...OFFSET, review: 'pending' }, 'off_1').id).toBe('off_1');
  });
});

describe('the purchase rule', () => {
  const state = (over: Partial<PurchaseState> = {}): PurchaseState => ({
    account: FRESH_ACCOUNT,
    available: 100_000,
    prior: undefined,
    newestCreated: null,
    ...over,
  });
  const ids = { offset: () => 'off_new', certificate: () => 'cert_new' };
  const ask = { mode: 'test' as const, request: { kg: 10, reference: null }, idempotencyKey: 'k', now: 50_000, maxAmount: null };

  test('a purchase: priced at the rate, charged, settling 3 s later in test mode, no certificate', () => {
    const d = decidePurchase(state(), ask, ids);
    expect(d.kind).toBe('buy');
    if (d.kind !== 'buy') return;
    expect(d.offset).toMatchObject({
      id: 'off_new',
      mode: 'test',
      kg: 10,
      amount_cents: 40,
      created_ms: 50_000,
      settle_at_ms: 53_000,
      review: null,
      certificate_id: null,
    });
    expect(d.fingerprint).toBe('[10,null,null]');
  });

  test.each([
    ['no earlier offset', null, 50_000],
    ['an earlier one, older', 49_000, 50_000],
    ['an earlier one at the same ms', 50_000, 50_000],
    ['an earlier one from a clock ahead', 50_007, 50_007],
  ])('created with %s: %i', (_what, newest, created) => {
    const d = decidePurchase(state({ newestCreated: newest }), ask, ids);
    expect(d.kind === 'buy' && d.offset.created_ms).toBe(created);
  });

  test.each([
    [24_999, false],
    [25_000, false],
    [25_001, true],
  ])('live, %i kg (4 cents a kg) against a limit of 100000 cents: review %s', (kg, review) => {
    const d = decidePurchase(
      state({ account: { ...FRESH_ACCOUNT, review_limit_cents: 100_000 }, available: 10 ** 9 }),
      { ...ask, mode: 'live', request: { kg, reference: null } },
      ids,
    );
    expect(d.kind === 'buy' && [d.offset.review, d.offset.settle_at_ms === null, d.offset.certificate_id]).toEqual([
      review ? 'pending' : null,
      review,
      'cert_new',
    ]);
  });

  test('a known key: the same body replays, another is 409; without a key nothing is replayed', () => {
    const prior = { fingerprint: '[10,null,null]', offset_id: 'off_old', created_ms: 1 };
    expect(decidePurchase(state({ prior }), ask, ids)).toEqual({ kind: 'replay', offsetId: 'off_old' });
    expect(refused(() => decidePurchase(state({ prior }), { ...ask, request: { kg: 11, reference: null } }, ids)).code).toBe(
      'idempotency_key_reused',
    );
    expect(decidePurchase(state({ prior }), { ...ask, idempotencyKey: null }, ids).kind).toBe('buy');
  });

  test('the fingerprint tells every field apart', () => {
    const prints = [
      fingerprint({ kg: 5, reference: null }),
      fingerprint({ amount_cents: 5, reference: null }),
      fingerprint({ kg: 5, reference: 'a' }),
      fingerprint({ kg: 6, reference: null }),
    ];
    expect(new Set(prints).size).toBe(4);
    expect(prints[1]).toBe('[null,5,null]');
  });

  test('402 carries what is there and what it costs; a replayed id the ledger lacks is a plain error', () => {
    const err = refused(() => decidePurchase(state({ available: 39 }), ask, ids));
    expect([err.status, err.extra]).toEqual([402, { balance_cents: 39, required_cents: 40 }]);
    expect(decidePurchase(state({ available: 40 }), ask, ids).kind).toBe('buy');
    expect(() => replayed(undefined, 'off_gone')).toThrow('The ledger remembers an Idempotency-Key for off_gone, which it does not hold.');
    expect(replayed(OFFSET, 'off_1')).toBe(OFFSET);
  });

  test('Carbon-Max-Amount-Cents: at the price, it buys; under it, 422 amount_above_max with what it costs, before the balance; a replay is not priced again', () => {
    expect(decidePurchase(state(), { ...ask, maxAmount: 40 }, ids).kind).toBe('buy');
    const err = refused(() => decidePurchase(state({ available: 0 }), { ...ask, maxAmount: 39 }, ids));
    expect([err.status, err.code, err.extra]).toEqual([422, 'amount_above_max', { required_cents: 40 }]);
    const prior = { fingerprint: '[10,null,null]', offset_id: 'off_old', created_ms: 1 };
    expect(decidePurchase(state({ prior }), { ...ask, maxAmount: 1 }, ids)).toEqual({ kind: 'replay', offsetId: 'off_old' });
  });
});

describe('settings and their bounds', () => {
  test.each([
    ['top-up', () => checkTopUp(24_999), 'amount_cents'],
    ['top-up', () => checkTopUp(MAX_TOP_UP_CENTS + 1), 'amount_cents'],
    ['top-up', () => checkTopUp(25_000.5), 'amount_cents'],
    ['balance', () => checkBalanceAfter(Number.MAX_SAFE_INTEGER / 2 - 10, 11), 'amount_cents'],
    ['rate', () => checkRate(0), 'rate_millicents_per_kg'],
    ['rate', () => checkRate(MAX_RATE + 1), 'rate_millicents_per_kg'],
    ['review limit', () => checkReviewLimit(-1), 'review_limit_cents'],
    ['rate limit', () => checkRateLimit(-1, 1000), 'requests'],
    ['window', () => checkRateLimit(5, 0), 'window'],
    ['window', () => checkRateLimit(5, 86_400_001), 'window'],
    ['clock', () => checkClockAdvance(0, 0), 'duration'],
    ['clock', () => checkClockAdvance(LATEST_MODEL_TIME - 10, 11), 'duration'],
  ])('%s out of bounds → 422 naming its field', (_what, fn, param) => {
    const err = refused(fn);
    expect([err.status, err.code, err.extra.param]).toEqual([422, 'validation_error', param]);
    expect(err.message.length).toBeGreaterThan(20);
  });

  test('the bounds themselves are accepted', () => {
    expect(checkTopUp(25_000)).toBe(25_000);
    expect(checkTopUp(MAX_TOP_UP_CENTS)).toBe(MAX_TOP_UP_CENTS);
    expect(() => checkBalanceAfter(Number.MAX_SAFE_INTEGER / 2 - 10, 10)).not.toThrow();
    expect([checkRate(1), checkRate(MAX_RATE), checkReviewLimit(0)]).toEqual([1, MAX_RATE, 0]);
    expect(() => checkRateLimit(null, 1)).not.toThrow();
    expect(() => checkRateLimit(0, 86_400_000)).not.toThrow();
    expect(checkClockAdvance(LATEST_MODEL_TIME - 10, 10)).toBe(10);
    // The last moment an offset's placement, a minute later, still has a four-digit year.
    expect(new Date(LATEST_MODEL_TIME).toISOString()).toBe('9999-12-31T23:58:59.999Z');
    expect(refused(() => checkClockAdvance(0, LATEST_MODEL_TIME + 1)).message).toMatch(
      /^The model clock cannot go past 9999-12-31T23:58:59\.999Z; it is now 1970-01-01T00:00:00\.000Z\.$/,
    );
  });
});

describe('validation details', () => {
  test('a body that does not parse says why; a list query ignores absent values and bounds its cursor', () => {
    expect(refused(() => parsePurchaseBody('{"kg":')).message).toMatch(/^Invalid request body: .+\.$/);
    expect(refused(() => parsePurchaseBody('{"kg":')).message).not.toContain('expected a JSON object');
    expect(parseListQuery({ limit: undefined, reference: undefined })).toEqual({ limit: 10, starting_after: null, reference: null });
    // A parameter present with no value (as an in-process caller may pass) is absent, even an unknown one.
    expect(parseListQuery({ expand: undefined })).toEqual({ limit: 10, starting_after: null, reference: null });
    expect(parseListQuery({ starting_after: 'x'.repeat(255) }).starting_after).toHaveLength(255);
    expect(refused(() => parseListQuery({ starting_after: 'x'.repeat(256) })).extra.param).toBe('starting_after');
    expect(() => rejectQuery({ gone: undefined })).not.toThrow();
    expect(refused(() => parsePurchaseBody('{"kg":1,"reference":"\\ud800"}')).message).toBe(
      'reference must be valid Unicode text (it holds an unpaired surrogate, or bytes that are not UTF-8).',
    );
    expect(checkIdempotencyKey(undefined, false)).toBeNull();
  });
});

describe('the route table', () => {
  test.each([
    ['POST', '/offsets', 'createOffset'],
    ['GET', '/offsets', 'listOffsets'],
    ['HEAD', '/offsets', 'listOffsets'],
    ['get', '/offsets/off_1', 'getOffset'],
    ['POST', '/quotes', 'createQuote'],
    ['GET', '/balance', 'getBalance'],
    ['GET', '/impact', 'getImpact'],
  ])('%s %s → %s', (method, path, operation) => {
    const m = matchRoute(method, `${API_PREFIX}${path}`);
    expect(m.kind === 'found' && m.route.operation).toBe(operation);
  });

  test('wrong methods list what is allowed; other paths are missing', () => {
    expect(matchRoute('DELETE', `${API_PREFIX}/offsets`)).toEqual({ kind: 'wrong_method', allow: 'GET, POST' });
    expect(matchRoute('POST', `${API_PREFIX}/offsets/off_1`)).toEqual({ kind: 'wrong_method', allow: 'GET' });
    for (const path of ['/offsets', '/api/v2/offsets', `${API_PREFIX}/offsets/a/b`, `${API_PREFIX}`])
      expect(matchRoute('GET', path).kind).toBe('missing');
    expect(routeList()).toContain('GET /api/v1/offsets/{id}');
  });
});
