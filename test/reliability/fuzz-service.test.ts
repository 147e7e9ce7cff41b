/**
 * Bad input, fuzzed against the service model itself (OffsetsService.handle(), the code every
 * engine runs): request bodies, headers, query strings, paths and methods. Every answer is a
 * documented status and code in the error envelope (or a resource), nothing throws, and a
 * refused request changes nothing: balances, offsets and ledger entries stay as they were.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { Sandbox } from '../../src/service/sandbox.js';
import type { OffsetsService } from '../../src/service/service.js';
import { authorizations, expectDocumented, idempotencyKeys, type Keys, methods, paths, purchaseBodies, queries } from './fuzz-inputs.js';

let dir: string;
let sandbox: Sandbox;
let service: OffsetsService;
let keys: Keys;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'carbon-fuzz-'));
  sandbox = Sandbox.open(dir);
  sandbox.topUp('live', 50_000);
  service = sandbox.service();
  keys = { test: sandbox.defaultKey('test')!, live: sandbox.defaultKey('live')!, readOnly: sandbox.defaultKey('read_only')! };
});
afterAll(() => {
  sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

interface State {
  test: number;
  live: number;
  offsets: number;
  entries: number;
}

function state(): State {
  const one = (sql: string) => (sandbox.ledger.db.prepare(sql).get() as { n: number }).n;
  return {
    test: sandbox.ledger.balance('test'),
    live: sandbox.ledger.balance('live'),
    offsets: one('SELECT count(*) AS n FROM offsets'),
    entries: one('SELECT count(*) AS n FROM entries'),
  };
}

/** Calls handle() and holds the answer to the oracle; returns it for further checks. */
function check(request: ApiRequest): ApiResponse {
  const before = state();
  let response: ApiResponse | undefined;
  const context = `${request.method} ${request.path.slice(0, 80)} body=${JSON.stringify(request.body.slice(0, 120))}`;
  expect(() => (response = service.handle(request)), context).not.toThrow();
  const res = response!;
  expectDocumented({ status: res.status, body: res.body, text: JSON.stringify(res) }, [keys.test, keys.live, keys.readOnly], context);
  expect(res.headers['request-id'], context).toMatch(/^req_/);
  const after = state();
  const offset = res.body as { object?: string; livemode?: boolean; amount_cents?: number };
  if (res.status === 201 && res.headers['idempotent-replayed'] !== 'true') {
    // A purchase: one offset, one entry, its amount off its own mode's balance, nothing else.
    const mode = offset.livemode ? 'live' : 'test';
    const other = mode === 'live' ? 'test' : 'live';
    expect(after, context).toEqual({
      ...before,
      [mode]: before[mode] - offset.amount_cents!,
      [other]: before[other],
      offsets: before.offsets + 1,
      entries: before.entries + 1,
    });
  } else {
    expect(after, context).toEqual(before);
  }
  return res;
}

const requests = (keys: Keys) =>
  fc
    .record({
      method: methods,
      path: paths,
      query: queries,
      authorization: authorizations(keys),
      idempotencyKey: idempotencyKeys,
      contentType: fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/json; charset=latin1', ''),
      extra: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }).map((s) => s.toLowerCase()), fc.string({ maxLength: 20 }), { maxKeys: 2 }),
      body: purchaseBodies({ hugeBytes: 1_000_000 }),
    })
    .map((r): ApiRequest => {
      const headers: Record<string, string | undefined> = { ...r.extra };
      headers.authorization = r.authorization;
      headers['idempotency-key'] = r.idempotencyKey;
      headers['content-type'] = r.contentType;
      return { method: r.method, path: r.path, query: r.query, headers, body: r.body };
    });

describe('fuzzing OffsetsService.handle()', () => {
  test('any request: a documented answer, and a refusal changes nothing', () => {
    fc.assert(fc.property(requests(keys), (request) => void check(request)), { numRuns: 1500 });
  }, 60_000);

  test('purchases only (POST /offsets with a real key): bodies and Idempotency-Keys', () => {
    const purchase = fc
      .record({ key: fc.constantFrom(keys.test, keys.live, keys.readOnly), idem: idempotencyKeys, body: purchaseBodies({ hugeBytes: 300_000 }) })
      .map(({ key, idem, body }): ApiRequest => ({
        method: 'POST',
        path: '/api/v1/offsets',
        query: {},
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
        body,
      }));
    fc.assert(fc.property(purchase, (request) => void check(request)), { numRuns: 1500 });
    // The fuzzing did buy now and then, and was refused for each kind of reason.
    expect(state().offsets).toBeGreaterThan(0);
  }, 60_000);

  test('the named cases: a 256-character key, duplicate keys, deep nesting, huge and negative numbers, unicode references', () => {
    // The fuzzing above may have spent the balance; these cases need a purchase to go through.
    sandbox.topUp('test', 1_000_000);
    const post = (body: string, headers: Record<string, string> = {}) =>
      check({ method: 'POST', path: '/api/v1/offsets', query: {}, headers: { authorization: `Bearer ${keys.test}`, 'idempotency-key': `k-${Math.random()}`, ...headers }, body });
    const code = (res: ApiResponse) => [res.status, (res.body as { error?: { code: string } }).error?.code];
    expect(code(post('{"kg":1}', { authorization: `Bearer ck_test_${'A'.repeat(248)}` }))).toEqual([401, 'api_key_invalid']);
    expect(code(post('{"kg":1}', { 'idempotency-key': 'k'.repeat(256) }))).toEqual([400, 'idempotency_key_invalid']);
    expect(code(post('{"kg":1}', { 'idempotency-key': 'k'.repeat(255) }))[0]).toBe(201);
    expect(code(post('{"kg":1,"kg":2}'))).toEqual([400, 'invalid_json']);
    expect(code(post('not json'))).toEqual([400, 'invalid_json']);
    expect(code(post('['.repeat(100_000) + ']'.repeat(100_000)))).toEqual([400, 'invalid_json']);
    expect(code(post(`{"kg":${'['.repeat(100_000)}${']'.repeat(100_000)}}`))).toEqual([422, 'validation_error']);
    expect(code(post('{"kg":-5}'))).toEqual([422, 'validation_error']);
    expect(code(post('{"kg":1e400}'))).toEqual([422, 'validation_error']);
    expect(code(post('{"amount_cents":9007199254740993}'))).toEqual([422, 'validation_error']);
    expect(code(post('{"kg":"5"}'))).toEqual([422, 'validation_error']);
    expect(code(post(JSON.stringify({ kg: 1, reference: '😀'.repeat(201) })))).toEqual([422, 'validation_error']);
    const unicode = post(JSON.stringify({ kg: 1, reference: '😀 Zürich → 東京 \u202e' }));
    expect(unicode.status).toBe(201);
    expect((unicode.body as { reference: string }).reference).toBe('😀 Zürich → 東京 \u202e');
  });
});
