import { afterEach, describe, expect, it } from 'vitest';
import type { ApiErrorBody, ApiResponse, Offset, OffsetList } from '../../src/api/types.js';
import { CarbonApiError } from '../../src/client/errors.js';
import { forThisProject, useEngine } from '../support/engines.js';
import { engineMatrix } from '../support/matrix.js';
import { OpenApiValidator } from '../support/openapi.js';

/**
 * The contract: the spec's rules, written once, run against the in-process engine and against
 * a `carbon serve` child process over HTTP. Every case starts from a fresh account
 * (`sandbox.reset()`): test balance 100000 cents, live balance 0, rate 4000 millicents per kg,
 * review limit 500000 cents, no rate limit.
 */

/** Every engine on every store: the suite is the port's contract as much as the API's. */
const ENGINES = engineMatrix();

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Envelope = { error: ApiErrorBody };

/** Awaits a promise that must fail with CarbonApiError and returns it. */
async function apiError(promise: Promise<unknown>): Promise<CarbonApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CarbonApiError) return err;
    throw err;
  }
  throw new Error('expected a CarbonApiError, but the call succeeded');
}

describe.each(ENGINES.filter((e) => forThisProject(e.kind)))('contract: $label', ({ kind, store }) => {
  const e = useEngine(kind, store);
  const openapi = new OpenApiValidator();
  // Every answer the suite receives, whatever the test, is one openapi.yaml allows (and every
  // request answered 2xx one it allows): nothing is served that the document refuses.
  afterEach(() => {
    const problems = e.exchanges.splice(0).flatMap((x) => openapi.check(x));
    expect(problems).toEqual([]);
  });
  const key = () => e.keys();
  const test = () => e.client(key().test);
  const live = () => e.client(key().live);

  /** Checks the envelope and returns its inner object. */
  function expectError(response: ApiResponse, status: number, code: string, type?: string): ApiErrorBody {
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    const body = response.body as Partial<Envelope>;
    expect(Object.keys(body)).toEqual(['error']);
    const error = body.error!;
    expect(error.code).toBe(code);
    expect(typeof error.message).toBe('string');
    expect(error.message.length).toBeGreaterThan(0);
    if (type !== undefined) expect(error.type).toBe(type);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    return error;
  }

  describe('authentication (spec part 5)', () => {
    const operations: { method: string; path: string; body?: unknown; idem?: boolean }[] = [
      { method: 'POST', path: '/offsets', body: { kg: 1 }, idem: true },
      { method: 'GET', path: '/offsets' },
      { method: 'GET', path: '/offsets/off_doesnotmatter' },
      { method: 'POST', path: '/quotes', body: { kg: 1 } },
      { method: 'GET', path: '/balance' },
      { method: 'GET', path: '/impact' },
    ];

    it.each(operations)('$method $path without a key is 401', async (op) => {
      const r = await e.raw({ ...op, key: null, headers: op.idem ? { 'idempotency-key': 'k1' } : {} });
      expectError(r, 401, 'api_key_missing', 'authentication_error');
      // The scheme it wants, as a 401 must say (RFC 9110 §11.6.1).
      expect(r.headers['www-authenticate']).toBe('Bearer realm="carbon"');
    });

    it('a key that is not a bearer key, or not one of ours, is 401', async () => {
      for (const authorization of [
        'Basic dXNlcjpwYXNz',
        'Bearer',
        'Bearer sk_test_123',
        `Bearer ck_test_${'A'.repeat(32)}`,
        'ck_test_abc',
      ]) {
        const r = await e.raw({ method: 'GET', path: '/balance', key: null, headers: { authorization } });
        expectError(r, 401, 'api_key_invalid', 'authentication_error');
      }
    });

    it('the bearer scheme is case-insensitive', async () => {
      const r = await e.raw({ method: 'GET', path: '/balance', key: null, headers: { authorization: `bearer ${key().test}` } });
      expect(r.status).toBe(200);
    });

    it('a revoked key is 401', async () => {
      const created = await e.sandbox.createKey('test', 'purchase');
      expect((await e.raw({ method: 'GET', path: '/balance', key: created.secret })).status).toBe(200);
      await e.sandbox.revokeKey(created.id);
      const r = await e.raw({ method: 'GET', path: '/balance', key: created.secret });
      expectError(r, 401, 'api_key_revoked', 'authentication_error');
      expect(r.headers['www-authenticate']).toBe('Bearer realm="carbon"');
    });

    it('a read-only key reads and quotes but cannot buy: 403 insufficient_permissions', async () => {
      const ro = e.client(key().readOnly);
      expect((await ro.balance()).livemode).toBe(false);
      expect((await ro.list()).object).toBe('list');
      expect((await ro.impact()).object).toBe('impact');
      expect((await ro.quote({ kg: 10 })).amount_cents).toBe(40);
      const err = await apiError(ro.buy({ kg: 10 }));
      expect([err.status, err.code, err.type]).toEqual([403, 'insufficient_permissions', 'permission_error']);
      expect((await test().balance()).available_cents).toBe(100_000);
    });

    it.each(['suspended', 'unapproved'] as const)('a %s account is 403 api_access_inactive on every operation', async (status) => {
      await e.sandbox.setStatus(status);
      for (const op of operations) {
        const r = await e.raw({ ...op, headers: op.idem ? { 'idempotency-key': `k-${op.path}` } : {} });
        expectError(r, 403, 'api_access_inactive', 'permission_error');
      }
      await e.sandbox.setStatus('active');
      expect((await e.raw({ method: 'GET', path: '/balance' })).status).toBe(200);
    });
  });

  describe('validation (spec parts 4 and 8)', () => {
    const invalidBodies: [string, unknown, string][] = [
      ['kg 0', { kg: 0 }, 'kg'],
      ['kg above 1,000,000', { kg: 1_000_001 }, 'kg'],
      ['kg negative', { kg: -5 }, 'kg'],
      ['kg fractional', { kg: 1.5 }, 'kg'],
      ['kg as a string', { kg: '5' }, 'kg'],
      ['kg as a boolean', { kg: true }, 'kg'],
      ['amount_cents 0', { amount_cents: 0 }, 'amount_cents'],
      ['amount_cents above 5,000,000', { amount_cents: 5_000_001 }, 'amount_cents'],
      ['amount_cents fractional', { amount_cents: 2.5 }, 'amount_cents'],
      ['both kg and amount_cents', { kg: 1, amount_cents: 100 }, 'amount_cents'],
      ['neither kg nor amount_cents', {}, 'kg'],
      ['only a reference', { reference: 'x' }, 'kg'],
      ['an empty reference', { kg: 1, reference: '' }, 'reference'],
      ['a 201-character reference', { kg: 1, reference: 'r'.repeat(201) }, 'reference'],
      ['a reference that is a number', { kg: 1, reference: 7 }, 'reference'],
      ['an unknown field', { kg: 1, colour: 'green' }, 'colour'],
    ];

    it.each(invalidBodies)('POST /offsets and /quotes with %s: 422 validation_error naming the field', async (_, body, param) => {
      const buy = await e.raw({ method: 'POST', path: '/offsets', body, headers: { 'idempotency-key': `v-${param}-${Math.random()}` } });
      expect(expectError(buy, 422, 'validation_error', 'invalid_request_error').param).toBe(param);
      const quote = await e.raw({ method: 'POST', path: '/quotes', body });
      expect(expectError(quote, 422, 'validation_error', 'invalid_request_error').param).toBe(param);
      // And the typed client carries the param.
      const err = await apiError(test().quote(body as never));
      expect([err.status, err.code, err.param]).toEqual([422, 'validation_error', param]);
    });

    it('the bounds themselves are accepted, and reference counts characters, not bytes', async () => {
      for (const body of [
        { kg: 1 },
        { kg: 1_000_000 },
        { amount_cents: 4 },
        { amount_cents: 5_000_000 },
        { kg: 1, reference: 'r'.repeat(200) },
        { kg: 1, reference: '🌍'.repeat(200) },
      ]) {
        const r = await e.raw({ method: 'POST', path: '/quotes', body });
        expect(r.status, JSON.stringify([body, r.body])).toBe(200);
      }
      const { offset } = await test().buy({ kg: 1, reference: '🌍'.repeat(200) });
      expect(offset.reference).toBe('🌍'.repeat(200));
    });

    it('null counts as absent', async () => {
      const r = await e.raw({ method: 'POST', path: '/quotes', body: { kg: 5, amount_cents: null, reference: null } });
      expect(r.status).toBe(200);
    });

    it.each([
      ['not JSON', '{"kg": '],
      ['an empty body', ''],
      ['a JSON array', '[1]'],
      ['JSON null', 'null'],
      ['a JSON string', '"kg"'],
      ['a repeated key', '{"kg": 1, "kg": 2}'],
    ])('a body that is %s is 400 invalid_json', async (_, body) => {
      const buy = await e.raw({ method: 'POST', path: '/offsets', body, headers: { 'idempotency-key': `j-${Math.random()}` } });
      expectError(buy, 400, 'invalid_json', 'invalid_request_error');
      const quote = await e.raw({ method: 'POST', path: '/quotes', body });
      expectError(quote, 400, 'invalid_json', 'invalid_request_error');
    });

    it('POST /offsets needs an Idempotency-Key of 1 to 255 characters without control characters: 400 otherwise', async () => {
      expectError(
        await e.raw({ method: 'POST', path: '/offsets', body: { kg: 1 } }),
        400,
        'idempotency_key_missing',
        'invalid_request_error',
      );
      for (const bad of ['', 'k'.repeat(256), 'has\ttab']) {
        const r = await e.raw({ method: 'POST', path: '/offsets', body: { kg: 1 }, headers: { 'idempotency-key': bad } });
        expectError(r, 400, 'idempotency_key_invalid', 'invalid_request_error');
      }
      const ok = await e.raw({ method: 'POST', path: '/offsets', body: { kg: 1 }, headers: { 'idempotency-key': 'k'.repeat(255) } });
      expect(ok.status).toBe(201);
      expect((await test().list()).data).toHaveLength(1);
    });

    it('POST /quotes needs no Idempotency-Key, but one that is sent must be well formed', async () => {
      expect((await e.raw({ method: 'POST', path: '/quotes', body: { kg: 1 } })).status).toBe(200);
      expect((await e.raw({ method: 'POST', path: '/quotes', body: { kg: 1 }, headers: { 'idempotency-key': 'q-1' } })).status).toBe(200);
      const r = await e.raw({ method: 'POST', path: '/quotes', body: { kg: 1 }, headers: { 'idempotency-key': 'k'.repeat(256) } });
      expectError(r, 400, 'idempotency_key_invalid');
    });

    it.each([
      ['limit 0', { limit: '0' }, 'limit'],
      ['limit 101', { limit: '101' }, 'limit'],
      ['limit abc', { limit: 'abc' }, 'limit'],
      ['limit 1.5', { limit: '1.5' }, 'limit'],
      ['limit -1', { limit: '-1' }, 'limit'],
      ['limit given twice', { limit: ['1', '2'] }, 'limit'],
      ['an empty reference', { reference: '' }, 'reference'],
      ['a 201-character reference', { reference: 'r'.repeat(201) }, 'reference'],
      ['an empty starting_after', { starting_after: '' }, 'starting_after'],
      ['an unknown parameter', { colour: 'green' }, 'colour'],
    ])('GET /offsets with %s: 422 validation_error naming it', async (_, query, param) => {
      const r = await e.raw({ method: 'GET', path: '/offsets', query });
      expect(expectError(r, 422, 'validation_error', 'invalid_request_error').param).toBe(param);
    });

    it('a parameter with no name is said to be one; an unknown name or a missing id is repeated up to 80 characters, then "…"', async () => {
      const nameless = expectError(await e.raw({ method: 'GET', path: '/offsets', query: { '': 'x' } }), 422, 'validation_error');
      expect([nameless.param, nameless.message]).toEqual(['', 'Received a parameter with no name.']);
      const name = 'colour-'.repeat(70);
      const long = expectError(await e.raw({ method: 'GET', path: '/offsets', query: { [name]: '1' } }), 422, 'validation_error');
      expect([long.param, long.message]).toEqual([`${name.slice(0, 80)}…`, `Received unknown parameter: ${name.slice(0, 80)}….`]);
      const field = expectError(await e.raw({ method: 'POST', path: '/quotes', body: { kg: 1, [name]: 1 } }), 422, 'validation_error');
      expect(field.message).toBe(`Received unknown parameter: ${name.slice(0, 80)}….`);
      const id = `off_${'a'.repeat(3000)}`;
      const missing = expectError(await e.raw({ method: 'GET', path: `/offsets/${id}` }), 404, 'resource_missing');
      expect(missing.message).toBe(`No such offset: '${id.slice(0, 80)}…'.`);
      // A key in what is repeated is masked before it is cut (to its last four), wherever the cut falls.
      const secret = `ck_test_${'K'.repeat(32)}`;
      const keyed = expectError(await e.raw({ method: 'GET', path: `/offsets/${'x-'.repeat(30)}${secret}` }), 404, 'resource_missing');
      expect(keyed.message).toBe(`No such offset: '${'x-'.repeat(30)}ck_test_…KKKK'.`);
    });

    it.each(['/balance', '/impact'])('GET %s lists no 422: an unknown query parameter is ignored', async (path) => {
      const r = await e.raw({ method: 'GET', path, query: { expand: 'all' } });
      expect(r.status).toBe(200);
    });

    it('GET /offsets/{id} lists no 422: an unknown query parameter is ignored (a missing offset is still 404)', async () => {
      const { offset } = await test().buy({ kg: 1 });
      expect((await e.raw({ method: 'GET', path: `/offsets/${offset.id}`, query: { expand: 'all' } })).status).toBe(200);
      expectError(await e.raw({ method: 'GET', path: '/offsets/off_x', query: { expand: 'all' } }), 404, 'resource_missing');
    });

    it('a price too small to buy 1 kg is 422 amount_too_small', async () => {
      // At 4000 millicents per kg, 1 kg costs 4 cents.
      for (const path of ['/quotes', '/offsets']) {
        const r = await e.raw({ method: 'POST', path, body: { amount_cents: 3 }, headers: { 'idempotency-key': `small-${path}` } });
        expectError(r, 422, 'amount_too_small', 'invalid_request_error');
      }
      expect((await test().balance()).available_cents).toBe(100_000);
    });
  });

  describe('routes', () => {
    it('an unknown route is 404 route_missing in the envelope', async () => {
      for (const path of ['/nope', '/offsets/a/b', '/', '/quotes/q_1']) {
        expectError(await e.raw({ method: 'GET', path }), 404, 'route_missing', 'invalid_request_error');
      }
      expectError(await e.raw({ method: 'GET', path: '/api/v2/offsets', fullPath: true }), 404, 'route_missing');
    });

    it('GET /api/v1 itself is no operation: 404 route_missing, saying which operations there are', async () => {
      for (const path of ['/api/v1', '/api/v1/']) {
        const error = expectError(await e.raw({ method: 'GET', path, fullPath: true }), 404, 'route_missing', 'invalid_request_error');
        expect(error.message).toBe(
          `Unrecognized request URL (GET ${path}). The API's operations, under /api/v1: ` +
            'POST /offsets, GET /offsets, GET /offsets/{id}, POST /quotes, GET /balance, GET /impact.',
        );
      }
    });

    it('a method a route does not have is 405 with Allow', async () => {
      const cases: [string, string, string][] = [
        // HEAD is answered wherever GET is, so Allow names it there (RFC 9110 §10.2.1).
        ['DELETE', '/offsets', 'GET, HEAD, POST'],
        ['GET', '/quotes', 'POST'],
        ['POST', '/balance', 'GET, HEAD'],
        ['PUT', '/impact', 'GET, HEAD'],
        ['DELETE', '/offsets/off_x', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const r = await e.raw({ method, path });
        expectError(r, 405, 'method_not_allowed', 'invalid_request_error');
        expect(r.headers.allow).toBe(allow);
      }
    });
  });

  describe('pricing and quotes', () => {
    it('by volume: the charge is kg × rate / 1000, rounded up to a whole cent', async () => {
      const q = await test().quote({ kg: 500 });
      expect(q).toEqual({
        object: 'quote',
        livemode: false,
        kg: 500,
        amount_cents: 2000,
        currency: 'usd',
        rate_millicents_per_kg: 4000,
        available_cents: 100_000,
        sufficient_balance: true,
        requires_review: false,
      });
      await e.sandbox.setRate(3333);
      expect((await test().quote({ kg: 1 })).amount_cents).toBe(4); // 3.333 → 4
      expect((await test().quote({ kg: 3 })).amount_cents).toBe(10); // 9.999 → 10
      const { offset } = await test().buy({ kg: 3 });
      expect([offset.kg, offset.amount_cents, offset.rate_millicents_per_kg]).toEqual([3, 10, 3333]);
    });

    it('by price: the most whole kg whose charge fits, charged for those kg', async () => {
      const q = await test().quote({ amount_cents: 999 });
      expect([q.kg, q.amount_cents]).toEqual([249, 996]);
      const { offset } = await test().buy({ amount_cents: 999 });
      expect([offset.kg, offset.amount_cents]).toEqual([249, 996]);
      expect(offset.requested).toEqual({ kg: null, amount_cents: 999 });
      expect((await test().balance()).available_cents).toBe(100_000 - 996);
      await e.sandbox.setRate(3333);
      const q2 = await test().quote({ amount_cents: 10 });
      expect([q2.kg, q2.amount_cents]).toEqual([3, 10]);
    });

    it('by price, the kg are capped at the per-purchase limit', async () => {
      const q = await test().quote({ amount_cents: 5_000_000 });
      expect([q.kg, q.amount_cents]).toEqual([1_000_000, 4_000_000]);
    });

    it('by volume, a charge above 5,000,000 cents (part 8: amount_cents per purchase or quote) is 422 naming kg; nothing is charged', async () => {
      await e.sandbox.setRate(6000);
      for (const path of ['/quotes', '/offsets']) {
        const r = await e.raw({ method: 'POST', path, body: { kg: 1_000_000 }, headers: { 'idempotency-key': `cap-${path}` } });
        const err = expectError(r, 422, 'validation_error', 'invalid_request_error');
        expect([err.param, err.message]).toEqual(['kg', expect.stringMatching(/6,000,000 cents.*5,000,000.*at most 833,333\b/)]);
      }
      // The most that fits is bought, at 4,999,998 cents; one kg more is refused.
      expect((await test().quote({ kg: 833_333 })).amount_cents).toBe(4_999_998);
      expect((await apiError(test().quote({ kg: 833_334 }))).param).toBe('kg');
      expect((await test().list()).data).toEqual([]);
      expect((await test().balance()).available_cents).toBe(100_000);
    });

    it('a quote buys nothing and tells whether the balance covers it', async () => {
      const q = await test().quote({ kg: 25_001 });
      expect([q.amount_cents, q.available_cents, q.sufficient_balance]).toEqual([100_004, 100_000, false]);
      expect((await test().quote({ kg: 25_000 })).sufficient_balance).toBe(true);
      expect((await test().balance()).available_cents).toBe(100_000);
      expect((await test().list()).data).toEqual([]);
      expect((await test().impact()).offsets).toBe(0);
    });

    it('requires_review is true above the review limit (live)', async () => {
      await e.sandbox.setReviewLimit(1_000);
      await e.sandbox.topUp('live', 25_000);
      expect((await live().quote({ kg: 250 })).requires_review).toBe(false); // exactly 1000 cents
      expect((await live().quote({ kg: 251 })).requires_review).toBe(true);
      const q = await live().quote({ kg: 251 });
      expect([q.livemode, q.available_cents]).toEqual([true, 25_000]);
    });
  });

  describe('insufficient balance (402)', () => {
    it('carries balance_cents and required_cents, and charges nothing', async () => {
      const r = await e.raw({ method: 'POST', path: '/offsets', body: { kg: 25_001 }, headers: { 'idempotency-key': 'big' } });
      const error = expectError(r, 402, 'insufficient_balance', 'invalid_request_error');
      expect([error.balance_cents, error.required_cents]).toEqual([100_000, 100_004]);
      const err = await apiError(test().buy({ kg: 25_001 }));
      expect([err.status, err.code, err.balanceCents, err.requiredCents]).toEqual([402, 'insufficient_balance', 100_000, 100_004]);
      expect((await test().balance()).available_cents).toBe(100_000);
      expect((await test().list()).data).toEqual([]);
    });

    it('the live balance starts at 0', async () => {
      const err = await apiError(live().buy({ kg: 1 }));
      expect([err.status, err.balanceCents, err.requiredCents]).toEqual([402, 0, 4]);
    });

    it('the whole balance can be spent, to the cent', async () => {
      const { offset } = await test().buy({ kg: 25_000 });
      expect(offset.amount_cents).toBe(100_000);
      expect((await test().balance()).available_cents).toBe(0);
      expect((await apiError(test().buy({ kg: 1 }))).status).toBe(402);
    });
  });

  describe('idempotency', () => {
    it('the same key and body replays the first purchase with Idempotent-Replayed: true', async () => {
      // Held for review (live, above the limit), the offset cannot change between the two requests
      // however long they take, so the replay is the first answer field for field (a replay shows
      // the offset as it is now: a test one would be placed 3 s on).
      await e.sandbox.setReviewLimit(0);
      await e.sandbox.topUp('live', 25_000);
      const first = await e.raw<Offset>({
        method: 'POST',
        path: '/offsets',
        key: key().live,
        body: { kg: 10, reference: 'r1' },
        headers: { 'idempotency-key': 'same' },
      });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      // The same body, spelled differently, is the same request.
      const again = await e.raw<Offset>({
        method: 'POST',
        path: '/offsets',
        key: key().live,
        body: '{ "reference": "r1", "kg": 10 }',
        headers: { 'idempotency-key': 'same' },
      });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await live().balance()).available_cents).toBe(25_000 - 40);
      expect((await live().list()).data.map((o) => o.id)).toEqual([first.body.id]);
      expect((await live().impact()).offsets).toBe(1);
    });

    it('the client reports the replay', async () => {
      const a = await test().buy({ kg: 7 }, { idempotencyKey: 'client-key' });
      const b = await test().buy({ kg: 7 }, { idempotencyKey: 'client-key' });
      expect([a.replayed, b.replayed]).toEqual([false, true]);
      expect(b.offset.id).toBe(a.offset.id);
      expect(b.idempotencyKey).toBe('client-key');
    });

    it('a replay returns the offset as it is now', async () => {
      const a = await test().buy({ kg: 7 }, { idempotencyKey: 'later' });
      await e.sandbox.advanceClock(3_000);
      const b = await test().buy({ kg: 7 }, { idempotencyKey: 'later' });
      expect(b.replayed).toBe(true);
      expect(b.offset.id).toBe(a.offset.id);
      expect(b.offset.status).toBe('placed');
    });

    it('the same key with a different body is 409 idempotency_key_reused, and the client does not retry it', async () => {
      await test().buy({ kg: 10 }, { idempotencyKey: 'reused' });
      for (const body of [{ kg: 11 }, { amount_cents: 40 }, { kg: 10, reference: 'x' }]) {
        const r = await e.raw({ method: 'POST', path: '/offsets', body, headers: { 'idempotency-key': 'reused' } });
        expectError(r, 409, 'idempotency_key_reused', 'invalid_request_error');
      }
      const before = e.exchanges.length;
      const err = await apiError(e.client(key().test, { retry: { maxRetries: 3 } }).buy({ kg: 12 }, { idempotencyKey: 'reused' }));
      expect([err.status, err.code]).toEqual([409, 'idempotency_key_reused']);
      expect(e.exchanges.length - before).toBe(1);
      expect((await test().list()).data).toHaveLength(1);
    });

    it('keys are per mode, and kept for the life of the ledger (the spec gives them no expiry)', async () => {
      await e.sandbox.topUp('live', 25_000);
      const t = await test().buy({ kg: 1 }, { idempotencyKey: 'shared' });
      const l = await live().buy({ kg: 1 }, { idempotencyKey: 'shared' });
      expect(l.replayed).toBe(false);
      expect(l.offset.id).not.toBe(t.offset.id);
      // Two days on, the CI job re-run with the same key gets its first purchase, not a second one.
      await e.sandbox.advanceClock(2 * 24 * 60 * 60 * 1000);
      const later = await test().buy({ kg: 1 }, { idempotencyKey: 'shared' });
      expect(later.replayed).toBe(true);
      expect(later.offset.id).toBe(t.offset.id);
      expect((await apiError(test().buy({ kg: 2 }, { idempotencyKey: 'shared' }))).code).toBe('idempotency_key_reused');
    });

    it('a failed purchase (402) does not use up its key', async () => {
      expect((await apiError(test().buy({ kg: 25_001 }, { idempotencyKey: 'retry-me' }))).status).toBe(402);
      const ok = await test().buy({ kg: 1 }, { idempotencyKey: 'retry-me' });
      expect(ok.replayed).toBe(false);
    });
  });

  describe('listing, cursors and has_more', () => {
    async function buyMany(n: number, reference?: string): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await test().buy({ kg: i + 1, ...(reference ? { reference } : {}) })).offset.id);
      return ids;
    }

    it('is newest first, 10 by default, and has_more tells that older ones exist', async () => {
      const ids = await buyMany(11);
      const page = await test().list();
      expect(page.object).toBe('list');
      expect(page.data.map((o) => o.id)).toEqual(ids.slice(1).reverse());
      expect(page.has_more).toBe(true);
      const rest = await test().list({ starting_after: page.data.at(-1)!.id });
      expect(rest.data.map((o) => o.id)).toEqual([ids[0]]);
      expect(rest.has_more).toBe(false);
    });

    it('pages with limit and starting_after cover everything once, in order', async () => {
      const ids = await buyMany(5);
      const seen: string[] = [];
      const flags: boolean[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page: OffsetList = await test().list({ limit: 2, ...(cursor ? { starting_after: cursor } : {}) });
        seen.push(...page.data.map((o) => o.id));
        flags.push(page.has_more);
        if (!page.has_more) break;
        cursor = page.data.at(-1)!.id;
      }
      expect(seen).toEqual([...ids].reverse());
      expect(flags).toEqual([true, true, false]);
    });

    it('has_more is false when the last page is exactly full', async () => {
      const ids = await buyMany(4);
      const first = await test().list({ limit: 2 });
      expect(first.has_more).toBe(true);
      const second = await test().list({ limit: 2, starting_after: first.data[1]!.id });
      expect(second.data.map((o) => o.id)).toEqual([ids[1], ids[0]]);
      expect(second.has_more).toBe(false);
      const all = await test().list({ limit: 4 });
      expect([all.data.length, all.has_more]).toEqual([4, false]);
      const after = await test().list({ starting_after: ids[0]! });
      expect([after.data, after.has_more]).toEqual([[], false]);
    });

    it('limit may be 1 or 100', async () => {
      await buyMany(2);
      expect((await test().list({ limit: 1 })).data).toHaveLength(1);
      expect((await test().list({ limit: 100 })).data).toHaveLength(2);
    });

    it('reference filters, and pages within the filter', async () => {
      const mine = await buyMany(3, 'batch-7');
      await buyMany(2, 'other');
      const p1 = await test().list({ reference: 'batch-7', limit: 2 });
      expect(p1.data.map((o) => o.id)).toEqual([mine[2], mine[1]]);
      expect(p1.has_more).toBe(true);
      const p2 = await test().list({ reference: 'batch-7', limit: 2, starting_after: p1.data[1]!.id });
      expect([p2.data.map((o) => o.id), p2.has_more]).toEqual([[mine[0]], false]);
      expect((await test().list({ reference: 'nobody' })).data).toEqual([]);
      expect((await test().list({ reference: 'batch-7' })).data.every((o) => o.reference === 'batch-7')).toBe(true);
    });

    it('a starting_after that names no offset is 404 resource_missing', async () => {
      const r = await e.raw({ method: 'GET', path: '/offsets', query: { starting_after: 'off_nothing' } });
      expect(expectError(r, 404, 'resource_missing', 'invalid_request_error').param).toBe('starting_after');
    });

    it('listAll walks every page', async () => {
      const ids = await buyMany(3);
      const seen: string[] = [];
      for await (const o of test().listAll({ limit: 1 })) seen.push(o.id);
      expect(seen).toEqual([...ids].reverse());
    });
  });

  describe('single reads', () => {
    it('GET /offsets/{id} returns the offset as created', async () => {
      // Held for review (live, above the limit), it stays as created however long the two requests
      // take: a test offset would be placed 3 s on, and the read would show that.
      await e.sandbox.setReviewLimit(0);
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await live().buy({ kg: 42, reference: 'order-9' });
      expect(offset).toMatchObject({
        object: 'offset',
        livemode: true,
        status: 'processing',
        kg: 42,
        amount_cents: 168,
        currency: 'usd',
        rate_millicents_per_kg: 4000,
        requested: { kg: 42, amount_cents: null },
        reference: 'order-9',
        certificate_url: null,
        placed: null,
      });
      expect(offset.id).toMatch(/^off_[A-Za-z0-9]+$/);
      expect(offset.created).toMatch(TIMESTAMP);
      expect(await live().get(offset.id)).toEqual(offset);
    });

    it('an unknown id is 404 resource_missing with param id', async () => {
      for (const id of ['off_unknown', 'nonsense', '%ZZ']) {
        const r = await e.raw({ method: 'GET', path: `/offsets/${id}` });
        expect(expectError(r, 404, 'resource_missing', 'invalid_request_error').param).toBe('id');
      }
      const err = await apiError(test().get('off_unknown'));
      expect([err.status, err.code, err.param]).toEqual([404, 'resource_missing', 'id']);
    });

    it('an id with reserved characters round-trips through the client', async () => {
      const err = await apiError(test().get('off_a/b?c#d'));
      expect([err.status, err.code]).toEqual([404, 'resource_missing']);
    });
  });

  describe('mode scoping', () => {
    it('each key sees only its mode: offsets, balance and impact', async () => {
      await e.sandbox.topUp('live', 30_000);
      const l = (await live().buy({ kg: 100 })).offset;
      const t = (await test().buy({ kg: 5 })).offset;
      expect([l.livemode, t.livemode]).toEqual([true, false]);

      expect((await test().list()).data.map((o) => o.id)).toEqual([t.id]);
      expect((await live().list()).data.map((o) => o.id)).toEqual([l.id]);
      expect((await e.client(key().readOnly).list()).data.map((o) => o.id)).toEqual([t.id]);

      const cross = await e.raw({ method: 'GET', path: `/offsets/${l.id}` });
      expect(expectError(cross, 404, 'resource_missing').param).toBe('id');
      expect((await apiError(live().get(t.id))).status).toBe(404);
      const cursor = await e.raw({ method: 'GET', path: '/offsets', query: { starting_after: l.id } });
      expect(expectError(cursor, 404, 'resource_missing').param).toBe('starting_after');

      expect(await test().balance()).toEqual({
        object: 'balance',
        livemode: false,
        available_cents: 100_000 - 20,
        currency: 'usd',
        rate_millicents_per_kg: 4000,
      });
      expect(await live().balance()).toEqual({
        object: 'balance',
        livemode: true,
        available_cents: 30_000 - 400,
        currency: 'usd',
        rate_millicents_per_kg: 4000,
      });
      // Past both placements first (3 s for test, 60 s for live): the totals then say placed
      // however much real time the steps above took.
      await e.sandbox.advanceClock(60_000);
      expect(await test().impact()).toEqual({ object: 'impact', livemode: false, placed_kg: 5, processing_kg: 0, offsets: 1 });
      expect(await live().impact()).toEqual({ object: 'impact', livemode: true, placed_kg: 100, processing_kg: 0, offsets: 1 });
    });
  });

  describe('lifecycle under the advanced clock (spec part 3)', () => {
    it('a test offset is placed a few seconds after creation, with no certificate', async () => {
      const { offset } = await test().buy({ kg: 100 });
      // No read between the two: how long the requests take in real time must not matter. That it
      // is processing until then is the placement time below, exactly 3 s after creation.
      expect([offset.status, offset.placed]).toEqual(['processing', null]);
      await e.sandbox.advanceClock(3_000);
      const placed = await test().get(offset.id);
      expect(placed.status).toBe('placed');
      expect(placed.placed).toMatch(TIMESTAMP);
      expect(Date.parse(placed.placed!) - Date.parse(placed.created)).toBe(3_000);
      expect(placed.certificate_url).toBeNull();
      expect(await test().impact()).toMatchObject({ placed_kg: 100, processing_kg: 0, offsets: 1 });
      expect((await test().list()).data[0]!.status).toBe('placed');
    });

    it('a live offset is placed within minutes and gets a certificate URL on this origin', async () => {
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await live().buy({ kg: 250 });
      expect([offset.status, offset.certificate_url, offset.placed]).toEqual(['processing', null, null]);
      expect((await live().impact()).processing_kg).toBe(250);
      await e.sandbox.advanceClock(60_000);
      const placed = await live().get(offset.id);
      expect(placed.status).toBe('placed');
      expect(placed.certificate_url).toMatch(new RegExp(`^${e.origin.replace(/[.]/g, '\\.')}/certificates/cert_[0-9a-f]{24}$`));
      expect(Date.parse(placed.placed!) - Date.parse(placed.created)).toBe(60_000);
      expect(await live().impact()).toMatchObject({ placed_kg: 250, processing_kg: 0, offsets: 1 });
      expect((await live().balance()).available_cents).toBe(25_000 - 1_000);
    });

    it('a live purchase above the review limit waits for review, then is placed on approval', async () => {
      await e.sandbox.setReviewLimit(1_000);
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await live().buy({ kg: 500 });
      await e.sandbox.advanceClock(24 * 60 * 60 * 1000);
      expect((await live().get(offset.id)).status).toBe('processing');
      await e.sandbox.approve(offset.id);
      const placed = await live().get(offset.id);
      expect(placed.status).toBe('placed');
      expect(placed.certificate_url).not.toBeNull();
    });

    it('a rejected review is refunded', async () => {
      await e.sandbox.setReviewLimit(1_000);
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await live().buy({ kg: 500 });
      expect((await live().balance()).available_cents).toBe(23_000);
      await e.sandbox.reject(offset.id);
      expect((await live().get(offset.id)).status).toBe('refunded');
      expect((await live().balance()).available_cents).toBe(25_000);
    });
  });

  describe('refunds (the order could not be placed)', () => {
    it('processing → refunded: the charge goes back and the offset leaves the totals', async () => {
      // The failed one waits for review (live, above the $5 limit), so it is still processing when
      // fail comes however slow the steps before it (a test offset is placed 3 s on, and fail
      // refuses a placed one); the kept one ($0.04) is placed on the clock.
      await e.sandbox.setReviewLimit(500);
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await live().buy({ kg: 250 });
      const kept = (await live().buy({ kg: 1 })).offset;
      expect((await live().balance()).available_cents).toBe(25_000 - 1_004);
      await e.sandbox.fail(offset.id);
      const refunded = await live().get(offset.id);
      expect([refunded.status, refunded.placed, refunded.certificate_url]).toEqual(['refunded', null, null]);
      expect((await live().balance()).available_cents).toBe(25_000 - 4);
      // Past the kept one's placement (60 s), so the totals read one state whatever the real time.
      await e.sandbox.advanceClock(60_000);
      expect(await live().impact()).toMatchObject({ processing_kg: 0, placed_kg: 1, offsets: 1 });
      // A refunded offset stays listed and stays refunded as time passes.
      await e.sandbox.advanceClock(10_000);
      expect((await live().list()).data.map((o) => [o.id, o.status])).toEqual([
        [kept.id, 'placed'],
        [offset.id, 'refunded'],
      ]);
    });

    it('a refunded purchase still replays as refunded, and does not charge again', async () => {
      // Held for review (live, above the limit), it is still processing when fail comes, however
      // slow the purchase was (a test offset is placed 3 s on, and fail refuses a placed one).
      await e.sandbox.setReviewLimit(0);
      await e.sandbox.topUp('live', 25_000);
      const a = await live().buy({ kg: 250 }, { idempotencyKey: 'refund-replay' });
      await e.sandbox.fail(a.offset.id);
      const b = await live().buy({ kg: 250 }, { idempotencyKey: 'refund-replay' });
      expect([b.replayed, b.offset.status]).toEqual([true, 'refunded']);
      expect((await live().balance()).available_cents).toBe(25_000);
    });
  });

  describe('rate limiting (429)', () => {
    it('answers 429 rate_limited with Retry-After in seconds', async () => {
      await e.sandbox.setRateLimit(0);
      const r = await e.raw({ method: 'GET', path: '/balance' });
      expectError(r, 429, 'rate_limited', 'rate_limit_error');
      expect(r.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      const err = await apiError(test().buy({ kg: 1 }));
      expect([err.status, err.code, err.type]).toEqual([429, 'rate_limited', 'rate_limit_error']);
      expect(err.retryAfter).toBeGreaterThanOrEqual(1);
      await e.sandbox.setRateLimit(null);
      expect((await test().list()).data).toEqual([]);
    });

    it('counts requests per key in a window', async () => {
      await e.sandbox.setRateLimit(2, 60_000);
      expect((await e.raw({ method: 'GET', path: '/balance' })).status).toBe(200);
      expect((await e.raw({ method: 'GET', path: '/impact' })).status).toBe(200);
      const third = await e.raw({ method: 'GET', path: '/balance' });
      expectError(third, 429, 'rate_limited');
      expect(Number(third.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Another key has its own window.
      expect((await e.raw({ method: 'GET', path: '/balance', key: key().readOnly })).status).toBe(200);
      // The window passes with the model's clock.
      await e.sandbox.advanceClock(60_000);
      expect((await e.raw({ method: 'GET', path: '/balance' })).status).toBe(200);
    });

    it('the client retries a 429 after Retry-After, then reports it', async () => {
      await e.sandbox.setRateLimit(0);
      const waits: number[] = [];
      const client = e.client(key().test, { retry: { maxRetries: 2 }, sleep: async (ms) => void waits.push(ms) });
      const err = await apiError(client.balance());
      expect(err.status).toBe(429);
      expect(waits).toHaveLength(2);
      for (const w of waits) expect(w).toBeGreaterThanOrEqual(1_000);
    });

    it('a rate-limited purchase buys nothing; its retry with the same key buys once', async () => {
      await e.sandbox.setRateLimit(0);
      expect((await apiError(test().buy({ kg: 3 }, { idempotencyKey: 'after-429' }))).status).toBe(429);
      await e.sandbox.setRateLimit(null);
      const ok = await test().buy({ kg: 3 }, { idempotencyKey: 'after-429' });
      expect(ok.replayed).toBe(false);
      expect((await test().list()).data).toHaveLength(1);
    });
  });

  describe('every response', () => {
    it('is JSON with a Request-Id, and validates against openapi.yaml', async () => {
      // Every documented status, made here: the test stands alone, in any order. (Every other
      // test's answers are checked against openapi.yaml too, after it: see afterEach above.)
      await e.sandbox.topUp('live', 25_000);
      const { offset } = await test().buy({ kg: 2 }, { idempotencyKey: 'every-1' });
      await e.raw({ method: 'POST', path: '/offsets', body: { kg: 2 }, headers: { 'idempotency-key': 'every-1' } });
      await e.raw({ method: 'POST', path: '/offsets', body: { kg: 3 }, headers: { 'idempotency-key': 'every-1' } });
      await e.raw({ method: 'POST', path: '/offsets', body: 'nope', headers: { 'idempotency-key': 'every-2' } });
      await e.raw({ method: 'GET', path: '/balance', key: null });
      await e.raw({ method: 'POST', path: '/offsets', body: { kg: 30_000 }, headers: { 'idempotency-key': 'every-3' } });
      await e.raw({ method: 'POST', path: '/offsets', key: key().readOnly, body: { kg: 1 }, headers: { 'idempotency-key': 'every-4' } });
      await e.raw({ method: 'GET', path: '/offsets/off_missing' });
      await e.raw({ method: 'DELETE', path: '/balance' });
      await e.raw({ method: 'POST', path: '/quotes', body: { kg: 0 } });
      await e.raw({ method: 'GET', path: `/offsets/${offset.id}` });
      await e.raw({ method: 'GET', path: '/offsets' });
      await e.raw({ method: 'GET', path: '/impact' });
      await e.sandbox.setRateLimit(0);
      await e.raw({ method: 'GET', path: '/balance' });
      await e.sandbox.setRateLimit(null);
      const validator = new OpenApiValidator();
      const problems: string[] = [];
      for (const ex of e.exchanges) {
        expect(ex.headers['content-type']).toBe('application/json');
        expect(ex.headers['request-id']).toMatch(/^req_[A-Za-z0-9]+$/);
        problems.push(...validator.check(ex));
      }
      expect(problems).toEqual([]);
      // And the suite met every documented status of the API's own operations at least once.
      const statuses = new Set(e.exchanges.map((x) => x.status));
      for (const s of [200, 201, 400, 401, 402, 403, 404, 405, 409, 422, 429]) expect(statuses.has(s), `status ${s}`).toBe(true);
    });

    it('what carbon accepts the document allows: nulls for absent fields, any Idempotency-Key of 1 to 255 characters', async () => {
      const accepted = [
        { body: { kg: null, amount_cents: 100 }, key: 'a b 123' },
        { body: { kg: 5, amount_cents: null, reference: null }, key: 'ключ-🌍' },
        { body: { amount_cents: 400, reference: 'r' }, key: 'k'.repeat(255) },
      ];
      for (const { body, key: idempotencyKey } of accepted) {
        for (const path of ['/offsets', '/quotes']) {
          const r = await e.raw({ method: 'POST', path, body, headers: { 'idempotency-key': idempotencyKey } });
          expect(r.status, JSON.stringify([path, body, r.body])).toBe(path === '/offsets' ? 201 : 200);
        }
      }
      const validator = new OpenApiValidator();
      expect(e.exchanges.flatMap((x) => validator.check(x))).toEqual([]);
    });

    /**
     * The server's own limits, which any request can meet (openapi.yaml's description): not made
     * by the model, so not made here. Every other status the document declares, the model gives.
     */
    const SERVER_LIMITS = new Set([
      'MalformedRequest',
      'RequestTimeout',
      'BodyTooLarge',
      'HeadersTooLarge',
      'InternalError',
      'ServiceUnavailable',
    ]);

    it('every status openapi.yaml declares for an operation, the model answers it with', async () => {
      const buy = (body: unknown, headers: Record<string, string> = { 'idempotency-key': `d-${Math.random()}` }, k?: string | null) =>
        e.raw({ method: 'POST', path: '/offsets', body, headers, ...(k === undefined ? {} : { key: k }) });
      const quote = (body: unknown, headers: Record<string, string> = {}, k?: string | null) =>
        e.raw({ method: 'POST', path: '/quotes', body, headers, ...(k === undefined ? {} : { key: k }) });
      const get = (path: string, k?: string | null, query?: Record<string, string>) =>
        e.raw({ method: 'GET', path, ...(k === undefined ? {} : { key: k }), ...(query === undefined ? {} : { query }) });
      const { offset } = await test().buy({ kg: 2 });
      const reads = [() => get('/offsets'), () => get(`/offsets/${offset.id}`), () => get('/balance'), () => get('/impact')];
      // 2xx, and the operations' own refusals.
      await buy({ kg: 1 });
      await quote({ kg: 1 });
      for (const read of reads) await read();
      await buy('nope');
      await quote('nope');
      await buy({ kg: 100_000 });
      await buy({ kg: 1 }, { 'idempotency-key': 'same' });
      await buy({ kg: 2 }, { 'idempotency-key': 'same' });
      await buy({ kg: 0 });
      await quote({ kg: 0 });
      await get('/offsets', undefined, { limit: '0' });
      await get('/offsets', undefined, { starting_after: 'off_nowhere' });
      await get('/offsets/off_nowhere');
      // 401, 403 and 429 on every operation.
      const everything = (k?: string | null) => [
        () => buy({ kg: 1 }, undefined, k),
        () => quote({ kg: 1 }, {}, k),
        () => get('/offsets', k),
        () => get(`/offsets/${offset.id}`, k),
        () => get('/balance', k),
        () => get('/impact', k),
      ];
      for (const call of everything(null)) await call();
      await e.sandbox.setStatus('suspended');
      for (const call of everything()) await call();
      await e.sandbox.setStatus('active');
      await e.sandbox.setRateLimit(0);
      for (const call of everything()) await call();
      await e.sandbox.setRateLimit(null);

      const validator = new OpenApiValidator();
      const seen = new Set(e.exchanges.map((x) => `${x.method} ${validator.template(x.path)} ${x.status}`));
      const missing = validator
        .operations()
        .filter((op) => !['/', '/certificates/{certificate_id}'].includes(op.template))
        .flatMap((op) =>
          op.statuses
            .filter(({ response }) => response === null || !SERVER_LIMITS.has(response))
            .map(({ status }) => `${op.method} ${op.template} ${status}`),
        )
        .filter((declared) => !seen.has(declared));
      expect(missing).toEqual([]);
    });
  });
});
