import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApiRequest } from '../../src/api/types.js';
import { ApiError } from '../../src/service/errors.js';
import type { Sandbox } from '../../src/service/sandbox.js';
import type { OffsetsService } from '../../src/service/service.js';
import { storeMatrix, type TestLedger, testLedger } from '../support/matrix.js';
import { openSandbox } from '../support/world.js';

/**
 * Every input answered alike on every store. Text PostgreSQL cannot hold (NUL), text no encoding
 * holds (a lone surrogate), LIKE's wildcards, quotes and very long values, in every path segment,
 * query value and body string of the API, and in every id the sandbox takes: each store gives the
 * answer SQLite gives, and none fails (a failure here would be a 500 from the server).
 */

const ODD = ['\u0000', 'off_\u0000x', 'ops\u0000', '\ud800', 'off_\udfff', '%', '_', "o'ff", '\\', 'off_%', '🌍', 'x'.repeat(5000)];

interface World {
  service: OffsetsService;
  sandbox: Sandbox;
  key: string;
}

async function world(sandbox: Sandbox): Promise<World> {
  await sandbox.topUp('test', 25_000);
  return { service: sandbox.service(), sandbox, key: (await sandbox.defaultKey('test'))! };
}

/** The status and code of an answer, or of what the call threw. */
async function outcome(call: () => Promise<{ status: number; body: unknown }>): Promise<string> {
  try {
    const r = await call();
    const error = (r.body as { error?: { code: string; param?: string } }).error;
    return error === undefined ? `${r.status}` : `${r.status} ${error.code} ${error.param ?? ''}`;
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code} ${err.extra.param ?? ''}`;
    return `threw ${(err as Error).message.slice(0, 200)}`;
  }
}

/** Percent-encoded as a browser would, or as it is where no encoding holds it (a lone surrogate). */
function segment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return v;
  }
}

const requests = (key: string): Array<[string, ApiRequest]> => {
  const get = (path: string, query: ApiRequest['query'] = {}): ApiRequest => ({
    method: 'GET',
    path,
    query,
    headers: { authorization: `Bearer ${key}` },
    body: '',
  });
  const post = (path: string, body: unknown): ApiRequest => ({
    method: 'POST',
    path,
    query: {},
    headers: {
      authorization: `Bearer ${key}`,
      'idempotency-key': `k-${JSON.stringify(body).length}-${Math.random()}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  return ODD.flatMap(
    (v): Array<[string, ApiRequest]> => [
      [`GET /offsets/{${JSON.stringify(v).slice(0, 20)}}`, get(`/api/v1/offsets/${segment(v)}`)],
      [`GET /offsets/{raw}`, get(`/api/v1/offsets/${v.replace(/\u0000/g, '%00')}`)],
      ['starting_after', get('/api/v1/offsets', { starting_after: v })],
      ['reference', get('/api/v1/offsets', { reference: v })],
      ['limit', get('/api/v1/offsets', { limit: v })],
      ['POST /offsets reference', post('/api/v1/offsets', { kg: 1, reference: v })],
      ['POST /quotes reference', post('/api/v1/quotes', { kg: 1, reference: v })],
      ['POST /offsets kg', post('/api/v1/offsets', { kg: v })],
      ['unknown path', get(`/api/v1/${segment(v)}`)],
    ],
  );
};

const sandboxCalls = (sandbox: Sandbox): Array<[string, (v: string) => Promise<unknown>]> => [
  ['offset', (v) => sandbox.offset(v)],
  ['approve', (v) => sandbox.approve(v)],
  ['reject', (v) => sandbox.reject(v)],
  ['fail', (v) => sandbox.fail(v)],
  ['revokeKey', (v) => sandbox.revokeKey(v)],
  ['offsets by reference', (v) => sandbox.offsets('test', { reference: v })],
  ['offsets after', (v) => sandbox.offsets('test', { startingAfter: v })],
];

describe('every input answered alike on every store', () => {
  const worlds: Array<[string, World]> = [];
  const ledgers: TestLedger[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'carbon-inputs-'));

  beforeAll(async () => {
    for (const store of storeMatrix()) {
      const ledger = testLedger(store.kind, 'inputs');
      ledgers.push(ledger);
      worlds.push([store.label, await world(await openSandbox(ledger.target(dir)))]);
    }
  });

  afterAll(async () => {
    for (const [, w] of worlds) await w.sandbox.close();
    for (const ledger of ledgers) await ledger.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('API requests: the same status and code on each store, never a failure', async () => {
    const answers = await Promise.all(
      worlds.map(
        async ([name, w]) => [name, await Promise.all(requests(w.key).map(([, req]) => outcome(() => w.service.handle(req))))] as const,
      ),
    );
    const names = requests('k').map(([name]) => name);
    const [first, ...rest] = answers;
    for (const [, outcomes] of answers) {
      expect(outcomes.filter((o) => o.startsWith('threw') || o.startsWith('5'))).toEqual([]);
    }
    for (const [name, outcomes] of rest) {
      for (const [i, o] of outcomes.entries()) expect(o, `${name}: ${names[i]}`).toBe(first![1][i]);
    }
    // The example: a NUL in the offset's path segment is a 404 everywhere.
    const nul = names.indexOf('GET /offsets/{raw}');
    for (const [, outcomes] of answers) expect(outcomes[nul]).toBe('404 resource_missing id');
  });

  test('sandbox operations by id and filter: the same answer on each store, never a failure', async () => {
    const answers = await Promise.all(
      worlds.map(
        async ([name, w]) =>
          [
            name,
            await Promise.all(
              ODD.flatMap((v) =>
                sandboxCalls(w.sandbox).map(([, call]) => outcome(async () => ({ status: 200, body: (await call(v)) ?? {} }))),
              ),
            ),
          ] as const,
      ),
    );
    const [first, ...rest] = answers;
    for (const [, outcomes] of answers) expect(outcomes.filter((o) => o.startsWith('threw') || o.startsWith('5'))).toEqual([]);
    for (const [name, outcomes] of rest) expect(outcomes, name).toEqual(first![1]);
  });
});
