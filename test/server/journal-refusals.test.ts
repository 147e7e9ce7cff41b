import { beforeAll, describe, expect, test } from 'vitest';
import type { RequestEntry } from '../../src/api/journal.js';
import { NO_FILTER } from '../../src/service/journal-view.js';
import { serveInProcess } from '../support/in-process-server.js';
import { rawExchange } from '../support/raw-http.js';

/**
 * Requests `carbon serve` refuses before the service sees them (a body over the limit or not
 * UTF-8, a header sent twice) are in the journal as the caller met them, when their path is the
 * API's: an integration developer reading `carbon logs --status 4xx` finds the 413 their app got.
 */

const served = serveInProcess('carbon-journal-refusals-', { bodyLimitBytes: 1024 });
let key: string;
let port: number;

beforeAll(async () => {
  key = (await served.server.sandbox.defaultKey('test'))!;
  port = served.server.port;
});

/** The journal's entry for the Request-Id an answer carried. */
async function entryOf(requestId: string | null | undefined): Promise<RequestEntry | undefined> {
  expect(requestId).toMatch(/^req_/);
  await served.server.sandbox.journal.flush();
  return (await served.server.sandbox.journal.entries({ ...NO_FILTER, limit: 1000 })).find((e) => e.id === requestId);
}

describe("a browser's form refused before it is read", () => {
  test("is answered with a page that says so, the same status, not the API's JSON; the API's paths keep their JSON", async () => {
    const html = { accept: 'text/html,application/xhtml+xml', 'content-type': 'application/x-www-form-urlencoded' };
    const page = await fetch(`${served.server.origin}/actions/topup`, {
      method: 'POST',
      headers: html,
      body: `amount=${'9'.repeat(2000)}`,
    });
    expect([page.status, page.headers.get('content-type')]).toEqual([413, 'text/html; charset=utf-8']);
    const text = await page.text();
    // Before: {"error":{…"body_too_large"…}} in place of a page.
    expect(text).toContain('<h1>Not sent</h1>');
    expect(text).toContain('Go back, and send the form again with less typed in its fields');
    expect(text).toContain(page.headers.get('request-id')!);
    const api = await fetch(`${served.server.url}/offsets`, { method: 'POST', headers: html, body: 'x'.repeat(2000) });
    expect([api.status, ((await api.json()) as { error: { code: string } }).error.code]).toEqual([413, 'body_too_large']);
  });
});

describe('requests refused before the service are in the journal', () => {
  test('a body over the limit: 413 body_too_large, with the key that sent it, its body not kept', async () => {
    const r = await fetch(`${served.server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'big-1' },
      body: JSON.stringify({ kg: 1, reference: 'x'.repeat(4096) }),
    });
    expect(r.status).toBe(413);
    const entry = await entryOf(r.headers.get('request-id'));
    expect(entry).toMatchObject({
      method: 'POST',
      path: '/api/v1/offsets',
      status: 413,
      error: { code: 'body_too_large' },
      livemode: false,
      idempotency_key: 'big-1',
      request_body: '',
    });
    expect(entry!.key_id).toMatch(/^key_/);
  });

  test('a body that is not UTF-8: 400 invalid_json', async () => {
    const body = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const r = await fetch(`${served.server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    expect(r.status).toBe(400);
    expect(await entryOf(r.headers.get('request-id'))).toMatchObject({ method: 'POST', status: 400, error: { code: 'invalid_json' } });
  });

  test('Authorization sent twice: 400 malformed_request, noted with the first key', async () => {
    const r = await rawExchange(
      port,
      `GET /api/v1/balance?n=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(400);
    const entry = await entryOf(r.headers['request-id']);
    expect(entry).toMatchObject({
      method: 'GET',
      path: '/api/v1/balance',
      query: 'n=1',
      status: 400,
      error: { code: 'malformed_request' },
    });
    expect(entry!.key_id).toMatch(/^key_/);
  });

  test('outside the API (a page, /healthz) a refusal is in the access log only, as the page requests are', async () => {
    const r = await fetch(`${served.server.origin}/healthz`, { method: 'POST', body: 'x'.repeat(4096) });
    expect(r.status).toBe(413);
    expect(await entryOf(r.headers.get('request-id'))).toBeUndefined();
  });
});

describe('a body cut off by the request timeout', () => {
  const slow = serveInProcess('carbon-journal-refusals-slow-', { headersTimeoutMs: 400, requestTimeoutMs: 800 });

  test('408 request_timeout is in the journal, with the key that sent it', async () => {
    const k = (await slow.server.sandbox.defaultKey('test'))!;
    const r = await rawExchange(
      slow.server.port,
      `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\nContent-Length: 100\r\n\r\n{"kg":`,
      10_000,
    );
    expect(r.status).toBe(408);
    await slow.server.sandbox.journal.flush();
    const entries = await slow.server.sandbox.journal.entries({ ...NO_FILTER, limit: 10 });
    const entry = entries.find((e) => e.id === r.headers['request-id']);
    expect(entry).toMatchObject({ method: 'POST', path: '/api/v1/quotes', status: 408, error: { code: 'request_timeout' } });
    expect(entry!.key_id).toMatch(/^key_/);
  });
});

describe('what the journal keeps of a request is what was sent and answered', () => {
  test('the query as it came, escapes and empty parts too (not read and written again); a HEAD without the body it did not get', async () => {
    const get = async (query: string) => {
      const r = await fetch(`${served.server.url}/offsets?${query}`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      return (await entryOf(r.headers.get('request-id')))?.query;
    };
    // Before: reference=abc, reference=%25ZZ, reference=x and limit=2.
    expect(await get('reference=%61bc')).toBe('reference=%61bc');
    expect(await get('reference=%ZZ')).toBe('reference=%ZZ');
    expect(await get('reference=x&')).toBe('reference=x&');
    expect(await get('&limit=2')).toBe('&limit=2');
    const head = await fetch(`${served.server.url}/balance`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    expect(head.status).toBe(200);
    expect(await entryOf(head.headers.get('request-id'))).toMatchObject({ method: 'HEAD', status: 200, response_body: '' });
  });

  test('an Idempotency-Key whose bytes are not UTF-8: refused, and kept as sent but for those bytes (caf\uFFFD, not \uFFFD alone)', async () => {
    const send = (idem: Buffer) =>
      rawExchange(
        port,
        Buffer.concat([
          Buffer.from(`POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 8\r\nIdempotency-Key: `),
          idem,
          Buffer.from('\r\nConnection: close\r\n\r\n{"kg":1}'),
        ]),
      );
    const latin1 = await send(Buffer.from('caf\xe9-1', 'latin1'));
    expect(latin1.status).toBe(400);
    expect(await entryOf(latin1.headers['request-id'])).toMatchObject({
      status: 400,
      error: { code: 'idempotency_key_invalid' },
      idempotency_key: 'caf\uFFFD-1',
    });
    // U+FFFD sent as UTF-8 beside a byte that is not: which is which can no longer be told.
    const both = await send(Buffer.concat([Buffer.from('\uFFFD'), Buffer.from([0xff])]));
    expect(await entryOf(both.headers['request-id'])).toMatchObject({ status: 400, idempotency_key: '\uFFFD' });
  });
});

describe('which requests the journal keeps', () => {
  test("not the journal's own reads, their refusals too (reading it would fill it), nor a page's; a path no one answers, as the API's 404", async () => {
    const count = async () => {
      await served.server.sandbox.journal.flush();
      return (await served.server.sandbox.journal.entries({ ...NO_FILTER, limit: 1000 })).length;
    };
    const before = await count();
    const origin = served.server.origin;
    const auth = { authorization: `Bearer ${key}` };
    for (const [path, init, status] of [
      ['/_sandbox/requests?limit=5', { headers: auth }, 200],
      ['/_sandbox/requests?stauts=500', { headers: auth }, 422],
      ['/_sandbox/requests', { method: 'POST', headers: auth }, 405],
      ['/_sandbox/requests', { headers: { authorization: 'Bearer ck_test_nope' } }, 401],
      ['/', { headers: { accept: 'text/html' } }, 401],
    ] as const) {
      const r = await fetch(`${origin}${path}`, init);
      await r.arrayBuffer();
      expect([path, r.status]).toEqual([path, status]);
    }
    expect(await count()).toBe(before);
    const nowhere = await fetch(`${origin}/_sandbox/nope`, { headers: auth });
    expect(nowhere.status).toBe(404);
    expect(await entryOf(nowhere.headers.get('request-id'))).toMatchObject({ path: '/_sandbox/nope', status: 404 });
  });
});
