/**
 * Bad input, fuzzed against the service model itself (OffsetsService.handle(), the code every
 * engine runs): request bodies, headers, query strings, paths and methods. Every answer is a
 * documented status and code in the error envelope (or a resource), nothing throws, and a
 * refused request changes nothing: balances, offsets and ledger entries stay as they were.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { Sandbox } from '../../src/service/sandbox.js';
import type { OffsetsService } from '../../src/service/service.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ledgerState } from '../support/children.js';
import {
  authorizations,
  expectDocumented,
  idempotencyKeys,
  type Keys,
  methods,
  paths,
  purchaseBodies,
  queries,
} from '../support/fuzz-inputs.js';
import { limit } from '../support/load.js';

let dir: string;
let sandbox: Sandbox;
let service: OffsetsService;
let keys: Keys;

let db: SqliteStore['db'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'carbon-fuzz-'));
  const store = SqliteStore.open(dir);
  db = store.db;
  sandbox = await Sandbox.over(store);
  await sandbox.topUp('live', 50_000);
  service = sandbox.service();
  keys = {
    test: (await sandbox.defaultKey('test'))!,
    live: (await sandbox.defaultKey('live'))!,
    readOnly: (await sandbox.defaultKey('read_only'))!,
  };
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const state = () => ledgerState(db);

/** Calls handle() and holds the answer to the oracle; returns it for further checks. */
async function check(request: ApiRequest): Promise<ApiResponse> {
  const before = state();
  const context = `${request.method} ${request.path.slice(0, 80)} body=${JSON.stringify(request.body.slice(0, 120))}`;
  const res = await service.handle(request).catch((err: unknown) => {
    throw new Error(`${context}: handle() threw ${String(err)}`);
  });
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
      extra: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 10 }).map((s) => s.toLowerCase()),
        fc.string({ maxLength: 20 }),
        { maxKeys: 2 },
      ),
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
  test(
    'any request: a documented answer, and a refusal changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(requests(keys), async (request) => void (await check(request))),
        { numRuns: 1500 },
      );
    },
    limit(60_000),
  );

  test(
    'purchases only (POST /offsets with a real key): bodies and Idempotency-Keys',
    async () => {
      const purchase = fc
        .record({
          key: fc.constantFrom(keys.test, keys.live, keys.readOnly),
          idem: idempotencyKeys,
          body: purchaseBodies({ hugeBytes: 300_000 }),
        })
        .map(
          ({ key, idem, body }): ApiRequest => ({
            method: 'POST',
            path: '/api/v1/offsets',
            query: {},
            headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
            body,
          }),
        );
      const outcomes = new Set<string>();
      await fc.assert(
        fc.asyncProperty(purchase, async (request) => {
          const res = await check(request);
          outcomes.add(res.status === 201 ? '201' : (res.body as { error: { code: string } }).error.code);
        }),
        { numRuns: 1500 },
      );
      // The fuzzing did buy now and then, and was refused for each kind of reason it can meet.
      expect(state().offsets).toBeGreaterThan(0);
      expect([...outcomes].sort()).toEqual(
        expect.arrayContaining(['201', 'idempotency_key_invalid', 'insufficient_permissions', 'invalid_json', 'validation_error']),
      );
    },
    limit(60_000),
  );

  test('the named cases: a 256-character key, duplicate keys, deep nesting, huge and negative numbers, unicode references', async () => {
    // The fuzzing above may have spent the balance; these cases need a purchase to go through.
    await sandbox.topUp('test', 1_000_000);
    const post = (body: string, headers: Record<string, string> = {}) =>
      check({
        method: 'POST',
        path: '/api/v1/offsets',
        query: {},
        headers: { authorization: `Bearer ${keys.test}`, 'idempotency-key': `k-${Math.random()}`, ...headers },
        body,
      });
    const code = (res: ApiResponse) => [res.status, (res.body as { error?: { code: string } }).error?.code];
    expect(code(await post('{"kg":1}', { authorization: `Bearer ck_test_${'A'.repeat(248)}` }))).toEqual([401, 'api_key_invalid']);
    expect(code(await post('{"kg":1}', { 'idempotency-key': 'k'.repeat(256) }))).toEqual([400, 'idempotency_key_invalid']);
    expect(code(await post('{"kg":1}', { 'idempotency-key': 'k'.repeat(255) }))[0]).toBe(201);
    expect(code(await post('{"kg":1,"kg":2}'))).toEqual([400, 'invalid_json']);
    expect(code(await post('not json'))).toEqual([400, 'invalid_json']);
    expect(code(await post('['.repeat(100_000) + ']'.repeat(100_000)))).toEqual([400, 'invalid_json']);
    expect(code(await post(`{"kg":${'['.repeat(100_000)}${']'.repeat(100_000)}}`))).toEqual([422, 'validation_error']);
    expect(code(await post('{"kg":-5}'))).toEqual([422, 'validation_error']);
    expect(code(await post('{"kg":1e400}'))).toEqual([422, 'validation_error']);
    expect(code(await post('{"amount_cents":9007199254740993}'))).toEqual([422, 'validation_error']);
    expect(code(await post('{"kg":"5"}'))).toEqual([422, 'validation_error']);
    expect(code(await post(JSON.stringify({ kg: 1, reference: '😀'.repeat(201) })))).toEqual([422, 'validation_error']);
    const unicode = await post(JSON.stringify({ kg: 1, reference: '😀 Zürich → 東京 \u202e' }));
    expect(unicode.status).toBe(201);
    expect((unicode.body as { reference: string }).reference).toBe('😀 Zürich → 東京 \u202e');
  });
});
