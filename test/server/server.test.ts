import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { parseTarget, type RunningServer, type ServeOptions, startServer } from '../../src/server/server.js';
import { NO_FILTER } from '../../src/service/journal-view.js';
import { LEDGER_FILE } from '../../src/store/sqlite/files.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { limit } from '../support/load.js';
import { rawExchange, sleep } from '../support/raw-http.js';
import { openSqlite } from '../support/sqlite.js';
import { openSandbox } from '../support/world.js';

/**
 * The server's own duties, beyond the API (which the contract suite covers): the body limit,
 * timeouts, malformed requests, failures that must not leak, the access log, graceful close.
 * The server runs in this process (its log is captured); the signal test is in signals.test.ts.
 */

interface Harness {
  server: RunningServer;
  port: number;
  log: string[];
  dir: string;
  keys: { test: string; live: string; readOnly: string };
}

const open: Harness[] = [];

async function serve(options: Partial<ServeOptions> = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'carbon-server-'));
  const log: string[] = [];
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir, log: (l) => log.push(l), ...options });
  const keys = {
    test: (await server.sandbox.defaultKey('test'))!,
    live: (await server.sandbox.defaultKey('live'))!,
    readOnly: (await server.sandbox.defaultKey('read_only'))!,
  };
  const h = { server, port: server.port, log, dir, keys };
  open.push(h);
  return h;
}

async function shutdown(h: Harness): Promise<void> {
  await h.server.close();
  rmSync(h.dir, { recursive: true, force: true });
}

afterAll(async () => {
  for (const h of open.splice(0)) await shutdown(h).catch(() => {});
});

async function call(
  h: Harness,
  method: string,
  path: string,
  init: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  const key = init.key === undefined ? h.keys.test : init.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${h.server.origin}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of any answer
  return { status: res.status, headers: res.headers, text, json: json as Record<string, any> };
}

function envelopeOf(raw: { body: string }): { type: string; code: string; message: string; param?: string } {
  return (JSON.parse(raw.body) as { error: { type: string; code: string; message: string; param?: string } }).error;
}

describe('parseTarget', () => {
  it('splits the path from the query, keeps the path raw, and collects repeated parameters', () => {
    expect(parseTarget('/api/v1/offsets?limit=2&limit=3&reference=a%20b&x=')).toEqual({
      path: '/api/v1/offsets',
      query: { limit: ['2', '3'], reference: 'a b', x: '' },
      rawQuery: 'limit=2&limit=3&reference=a%20b&x=',
    });
    expect(parseTarget('/api/v1/offsets/off%2Fx')).toEqual({ path: '/api/v1/offsets/off%2Fx', query: {}, rawQuery: '' });
    expect(parseTarget('http://example.test:80/api/v1/balance?a=1#frag').path).toBe('/api/v1/balance');
    const q = parseTarget('/x?__proto__=1').query;
    expect(Object.keys(q)).toEqual(['__proto__']);
  });
});

describe('carbon serve: HTTP robustness', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await serve({ bodyLimitBytes: 1024, headersTimeoutMs: 400, requestTimeoutMs: 800 });
  });

  it('answers the API with the spec headers: JSON, Request-Id, Idempotent-Replayed', async () => {
    const body = JSON.stringify({ kg: 5 });
    const first = await call(h, 'POST', '/api/v1/offsets', {
      body,
      headers: { 'idempotency-key': 'robust-1', 'content-type': 'application/json' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('content-type')).toBe('application/json');
    expect(first.headers.get('request-id')).toMatch(/^req_/);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await call(h, 'POST', '/api/v1/offsets', { body, headers: { 'idempotency-key': 'robust-1' } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
  });

  it('shows the spec header names in their usual case on the wire', async () => {
    // Its own purchase first (any order of tests), then the replay read at the byte level.
    expect((await call(h, 'POST', '/api/v1/offsets', { body: '{"kg":5}', headers: { 'idempotency-key': 'wire-1' } })).status).toBe(201);
    const r = await rawExchange(
      h.port,
      `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nIdempotency-Key: wire-1\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{"kg": 5} `,
    );
    expect(r.status).toBe(201);
    expect(r.raw).toContain('\r\nIdempotent-Replayed: true\r\n');
    expect(r.raw).toContain('\r\nRequest-Id: req_');
    expect(r.raw).toContain('\r\nContent-Type: application/json\r\n');
  });

  it('serves a small JSON index at /', async () => {
    const r = await call(h, 'GET', '/', { key: null });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: 'api', version: 'v1', base_url: h.server.url });
  });

  it('answers an unknown route in the envelope', async () => {
    for (const path of ['/nope', '/api', '/api/v1', '/api/v1/', '/certificates', '/api/v1/offsets/x/y']) {
      const r = await call(h, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('route_missing');
      expect(r.headers.get('content-type')).toBe('application/json');
    }
  });

  describe('the body limit', () => {
    it('refuses a declared Content-Length over the limit with 413 before the body is sent', async () => {
      const r = await rawExchange(
        h.port,
        `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nContent-Length: 5000000\r\n\r\n{"kg":`,
      );
      expect(r.status).toBe(413);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.connection).toBe('close');
      expect(envelopeOf(r)).toMatchObject({ type: 'invalid_request_error', code: 'body_too_large' });
      expect(r.closedByServer).toBe(true);
    });

    it('stops reading a chunked body once it passes the limit', async () => {
      const r = await rawExchange(h.port, async (s) => {
        s.write(`POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
        // 2000 bytes in 500-byte chunks, then it would go on forever: the server must not wait for the end.
        for (let i = 0; i < 4; i++) s.write(`1f4\r\n${'x'.repeat(500)}\r\n`);
      });
      expect(r.status).toBe(413);
      expect(envelopeOf(r).code).toBe('body_too_large');
      expect(r.closedByServer).toBe(true);
    });

    it('gives fetch a readable 413 for a large body', async () => {
      const r = await call(h, 'POST', '/api/v1/quotes', { body: JSON.stringify({ kg: 1, reference: 'r'.repeat(5000) }) });
      expect(r.status).toBe(413);
      expect(r.json.error.code).toBe('body_too_large');
    });

    it('refuses `Expect: 100-continue` with a large body without asking for it', async () => {
      const r = await rawExchange(
        h.port,
        `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 99999\r\n\r\n`,
      );
      expect(r.raw).not.toContain('100 Continue');
      expect(r.status).toBe(413);
    });

    it('accepts `Expect: 100-continue` with a small body', async () => {
      const r = await rawExchange(h.port, async (s) => {
        s.write(
          `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nExpect: 100-continue\r\nContent-Length: 9\r\nConnection: close\r\n\r\n`,
        );
        await sleep(100);
        s.write('{"kg": 5}');
      });
      expect(r.raw).toContain('HTTP/1.1 100 Continue');
      expect(r.raw).toMatch(/HTTP\/1\.1 200 OK/);
    });

    it('takes a body right at the limit', async () => {
      const body = JSON.stringify({ kg: 1, reference: 'r'.repeat(200) }).padEnd(1024, ' ');
      const r = await call(h, 'POST', '/api/v1/quotes', { body });
      expect(r.status).toBe(200);
    });

    it('answers a body that is not UTF-8 with 400 invalid_json', async () => {
      const payload = Buffer.concat([
        Buffer.from(
          `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nContent-Length: 11\r\nConnection: close\r\n\r\n`,
        ),
        Buffer.from([0x7b, 0x22, 0x6b, 0x67, 0x22, 0x3a, 0x31, 0xff, 0xfe, 0x20, 0x7d]),
      ]);
      const r = await rawExchange(h.port, payload);
      expect(r.status).toBe(400);
      expect(envelopeOf(r).code).toBe('invalid_json');
    });
  });

  describe('a compressed body', () => {
    it.each(['gzip', 'br'])('sent with Content-Encoding: %s is 400 invalid_json saying so, and nothing is bought', async (coding) => {
      const body = gzipSync('{"kg":1}');
      const payload = Buffer.concat([
        Buffer.from(
          `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nIdempotency-Key: gz-${coding}\r\nContent-Type: application/json\r\nContent-Encoding: ${coding}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        ),
        body,
      ]);
      const before = (await call(h, 'GET', '/api/v1/balance')).json.available_cents;
      const r = await rawExchange(h.port, payload);
      expect([r.status, envelopeOf(r).code, envelopeOf(r).message]).toEqual([
        400,
        'invalid_json',
        `Invalid request body: it is sent with Content-Encoding: ${coding}, which this API does not take; send it uncompressed.`,
      ]);
      expect((await call(h, 'GET', '/api/v1/balance')).json.available_cents).toBe(before);
    });
  });

  describe('malformed requests', () => {
    it.each([
      ['a garbage request line', 'GARBAGE\r\n\r\n', 400, 'malformed_request'],
      ['an unknown HTTP version', 'GET /api/v1/balance HTTP/9.9\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
      ['a header without a colon', 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n', 400, 'malformed_request'],
      [
        'Content-Length and Transfer-Encoding together',
        'POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
        400,
        'malformed_request',
      ],
      ['a bad Content-Length', 'POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'malformed_request'],
      [
        'a bad chunk size',
        'POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n',
        400,
        'malformed_request',
      ],
      ['headers over 16 KiB', `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
      ['binary noise', Buffer.from([0, 1, 2, 3, 255, 254, 13, 10, 13, 10]), 400, 'malformed_request'],
    ] as const)("%s: %i %s in the envelope, said to be the sandbox's, then the connection closes", async (_, payload, status, code) => {
      const r = await rawExchange(h.port, payload);
      expect(r.status).toBe(status);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['request-id']).toMatch(/^req_/);
      // Every answer carbon serve gives says it is a sandbox's (openapi.yaml), one written straight to the socket too.
      expect(r.headers['carbon-sandbox']).toBe('true');
      expect(envelopeOf(r)).toMatchObject({ type: 'invalid_request_error', code });
      expect(r.raw).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(r.closedByServer).toBe(true);
    });

    it('HTTP/1.1 without Host, or with two, is 400 in the envelope (RFC 9112 §3.2), and acted on by nothing; HTTP/1.0 needs none', async () => {
      const auth = `Authorization: Bearer ${h.keys.test}\r\n`;
      const none = await rawExchange(h.port, `GET /api/v1/balance HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`);
      expect([none.status, envelopeOf(none).code, envelopeOf(none).message]).toEqual([
        400,
        'malformed_request',
        'The request has no Host header, which HTTP/1.1 requires.',
      ]);
      const two = await rawExchange(h.port, `GET /api/v1/balance HTTP/1.1\r\nHost: a\r\nhost: b\r\n${auth}Connection: close\r\n\r\n`);
      expect([two.status, envelopeOf(two).message]).toEqual([400, 'The request has more than one Host header; send it once.']);
      const old = await rawExchange(h.port, `GET /api/v1/balance HTTP/1.0\r\n${auth}\r\n`);
      expect(old.status).toBe(200);
    });

    it('a query value whose bytes are not UTF-8 is refused naming its parameter, not read as U+FFFD; U+FFFD itself is kept', async () => {
      const list = async (query: string) => {
        const r = await rawExchange(
          h.port,
          `GET /api/v1/offsets?${query} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nConnection: close\r\n\r\n`,
        );
        return r.status === 200 ? [200] : [r.status, envelopeOf(r).code, envelopeOf(r).param];
      };
      expect(await list('reference=%FF')).toEqual([422, 'validation_error', 'reference']);
      expect(await list('reference=%ED%A0%80')).toEqual([422, 'validation_error', 'reference']);
      expect(await list('limit=2&reference=a%C3')).toEqual([422, 'validation_error', 'reference']);
      // The cursor too: not a 404 naming a character nobody sent (the lone surrogate that marks such bytes).
      for (const cursor of ['abc%FFdef', '%80', '%C3%28']) {
        expect(await list(`starting_after=${cursor}`)).toEqual([422, 'validation_error', 'starting_after']);
      }
      // The character itself, sent as UTF-8, and a `%` that starts no escape, are what was sent.
      expect(await list('reference=%EF%BF%BD')).toEqual([200]);
      expect(await list('reference=100%25')).toEqual([200]);
      expect(await list('reference=%zz')).toEqual([200]);
    });

    it('an absolute-form request target is served by its path', async () => {
      const r = await rawExchange(
        h.port,
        `GET http://127.0.0.1:${h.port}/api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nConnection: close\r\n\r\n`,
      );
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ object: 'balance' });
    });
  });

  describe('timeouts', () => {
    it('a client that never finishes its headers gets 408 and is disconnected', async () => {
      const r = await rawExchange(h.port, 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\n', limit(5_000));
      expect(r.status).toBe(408);
      expect(envelopeOf(r).code).toBe('request_timeout');
      expect(r.closedByServer).toBe(true);
      expect(r.elapsedMs).toBeLessThan(limit(3_000));
    });

    it('a client trickling its headers a byte at a time is cut off all the same', async () => {
      const r = await rawExchange(
        h.port,
        async (s) => {
          for (const ch of 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa') {
            if (s.destroyed) return;
            s.write(ch);
            await sleep(50);
          }
        },
        limit(5_000),
      );
      expect(r.status).toBe(408);
      expect(r.elapsedMs).toBeLessThan(limit(3_000));
    });

    it('a body that stops arriving gets 408', async () => {
      const r = await rawExchange(h.port, `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"kg":`, limit(5_000));
      expect(r.status).toBe(408);
      expect(r.closedByServer).toBe(true);
      expect(r.elapsedMs).toBeLessThan(limit(3_000));
    });

    it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
      const short = await serve({ keepAliveTimeoutMs: 200 });
      const request = `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${short.keys.test}\r\n\r\n`;
      const r = await rawExchange(short.port, request, limit(5_000));
      expect(r.status).toBe(200);
      expect(r.closedByServer).toBe(true);
      expect(r.elapsedMs).toBeLessThan(limit(2_000));
    });
  });
});

describe('carbon serve: failures never crash the server or leak a stack', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await serve();
  });
  afterEach(async () => {
    await shutdown(h).catch(() => {});
  });

  it('a locked ledger is 503 service_unavailable with Retry-After, and the server goes on', async () => {
    const blocker = openSqlite(join(h.dir, LEDGER_FILE));
    blocker.exec('BEGIN IMMEDIATE');
    let requestId: string | null = null;
    let waited = 0;
    try {
      // The purchase needs the write lock: it waits out the ledger's busy timeout, then gives up.
      const sent = performance.now();
      const r = await call(h, 'POST', '/api/v1/offsets', { body: '{"kg":1}', headers: { 'idempotency-key': 'locked' } });
      waited = performance.now() - sent;
      requestId = r.headers.get('request-id');
      expect(r.status).toBe(503);
      expect(r.json.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.text).not.toContain(h.dir);
      expect(r.text).not.toMatch(/SQLITE|at .*\.(ts|js)/);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect(h.log.some((l) => /^error req_\w+: The ledger .* is locked/.test(l))).toBe(true);
    // The journal says what the caller waited, as the access log does (it said 0 ms).
    await h.server.sandbox.journal.flush();
    const entry = (await h.server.sandbox.journal.entries({ ...NO_FILTER, limit: 10 })).find((e) => e.id === requestId);
    expect(entry?.status).toBe(503);
    expect(entry!.duration_ms).toBeGreaterThan(waited / 2);
    const after = await call(h, 'POST', '/api/v1/offsets', { body: '{"kg":1}', headers: { 'idempotency-key': 'locked' } });
    expect(after.status).toBe(201);
  }, 20_000);

  it('an unexpected failure is 500 internal_error; the details go to the log only', async () => {
    // A bug under the server: the store's read of the account throws a plain TypeError. (A ledger
    // closed under it is no bug: 503, test/client/library-surface.test.ts.) Reached through the
    // sandbox's private field: nothing in src/ may read the port from here.
    const ledger = (h.server.sandbox as unknown as { ledger: SqliteStore }).ledger;
    ledger.account = () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'status')"));
    const r = await call(h, 'GET', '/api/v1/balance');
    expect(r.status).toBe(500);
    expect(r.json.error).toMatchObject({ type: 'api_error', code: 'internal_error' });
    expect(r.headers.get('request-id')).toMatch(/^req_/);
    expect(r.text).not.toMatch(/undefined|TypeError|at .*\.(ts|js)/i);
    const requestId = r.headers.get('request-id')!;
    expect(h.log.some((l) => l.startsWith(`error ${requestId}: TypeError: Cannot read properties of undefined`))).toBe(true);
    // Still serving: the index needs no ledger.
    expect((await call(h, 'GET', '/', { key: null })).status).toBe(200);
  });
});

describe('carbon serve: answers stay fresh under load', () => {
  it('a commit by another connection is seen by every request sent after it, with batches of requests in flight', async () => {
    const h = await serve();
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const balance = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { port: h.port, path: '/api/v1/balance', agent, headers: { authorization: `Bearer ${h.keys.test}` } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve((JSON.parse(text) as { available_cents: number }).available_cents));
          },
        );
        req.on('error', reject);
        req.end();
      });
    // Ten clients keep the server busy, so requests arrive together and are answered in batches.
    let stop = false;
    const background = Array.from({ length: 10 }, async () => {
      while (!stop) await balance();
    });
    const other = await openSandbox(h.dir);
    try {
      let expected = await balance();
      for (let round = 0; round < 40; round++) {
        await other.topUp('test', 25_000);
        expected += 25_000;
        expect(await Promise.all([balance(), balance(), balance()])).toEqual([expected, expected, expected]);
      }
    } finally {
      stop = true;
      await Promise.all(background);
      await other.close();
      agent.destroy();
    }
    await shutdown(h);
  });
});

describe('carbon serve: the access log', () => {
  it('has one line per request, with method, path, status, time and the key masked, never the key', async () => {
    const h = await serve();
    const created = await h.server.sandbox.createKey('test', 'purchase');
    const lookalike = `ck_test_${'Z'.repeat(40)}`;
    const requests: [string, string, string | null][] = [
      ['GET', '/api/v1/balance', h.keys.test],
      ['GET', '/api/v1/impact', h.keys.live],
      ['GET', '/api/v1/offsets?reference=secret-ref', h.keys.readOnly],
      ['GET', '/api/v1/balance', created.secret],
      ['GET', '/api/v1/balance', lookalike],
      ['GET', '/api/v1/balance', null],
      ['GET', '/nope', h.keys.test],
    ];
    for (const [method, path, key] of requests) await call(h, method, path, { key });
    await call(h, 'GET', '/api/v1/balance', {
      key: null,
      headers: { authorization: `Basic ${Buffer.from(`user:${h.keys.test}`).toString('base64')}` },
    });
    await call(h, 'POST', '/api/v1/offsets', { body: '{"kg":1}', headers: { 'idempotency-key': 'log-1' } });
    await sleep(50);

    const access = h.log.filter((l) => /^\d{4}-\d{2}-\d{2}T/.test(l));
    expect(access).toHaveLength(requests.length + 2);
    const all = h.log.join('\n');
    for (const secret of [h.keys.test, h.keys.live, h.keys.readOnly, created.secret, lookalike]) {
      expect(all).not.toContain(secret);
      expect(all).not.toContain(secret.slice(8, 30));
    }
    expect(all).not.toContain('secret-ref');
    expect(access[0]).toMatch(
      new RegExp(`^\\S+ GET /api/v1/balance 200 \\d+\\.\\dms key=ck_test_\\.\\.\\.${h.keys.test.slice(-4)} req_\\w+$`),
    );
    expect(access[1]).toContain(`key=ck_live_...${h.keys.live.slice(-4)}`);
    expect(access[2]).toMatch(/ GET \/api\/v1\/offsets 200 /);
    expect(access[5]).toMatch(/ GET \/api\/v1\/balance 401 .* key=- /);
    expect(access[6]).toMatch(/ GET \/nope 404 /);
    expect(access[7]).toContain('key=[not a bearer key]');
    expect(access[8]).toMatch(/ POST \/api\/v1\/offsets 201 /);
    // A key with bytes beyond ASCII (an é sent as UTF-8, which Node reads as Latin-1): shown as ?, never as mojibake.
    const odd = await rawExchange(
      h.port,
      Buffer.from(
        `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ck_test_abcdefghijklmnopqrstuvwxyz12345\u00e9\r\nConnection: close\r\n\r\n`,
        'utf8',
      ),
    );
    expect(odd.status).toBe(401);
    await sleep(50);
    expect(h.log.at(-1)).toMatch(/ GET \/api\/v1\/balance 401 [\d.]+ms key=[\x21-\x7e]+ req_\w+$/);
    expect(h.log.at(-1)).toContain('??');
    // A key too short to show any of: the length, in the words every other output uses.
    expect((await call(h, 'GET', '/api/v1/balance', { key: 'ck_test_short' })).status).toBe(401);
    await sleep(50);
    expect(h.log.at(-1)).toMatch(/ GET \/api\/v1\/balance 401 [\d.]+ms key=\[13-character key\] req_\w+$/);
    await shutdown(h);
  });

  it('a log that throws does not break the server', async () => {
    const h = await serve({
      log: () => {
        throw new Error('stderr is gone');
      },
    });
    expect((await call(h, 'GET', '/api/v1/balance')).status).toBe(200);
    expect((await rawExchange(h.port, 'GARBAGE\r\n\r\n')).status).toBe(400);
    expect((await call(h, 'GET', '/api/v1/impact')).status).toBe(200);
    await shutdown(h);
  });

  it('logs a malformed request and a body too large too, once each', async () => {
    const h = await serve({ bodyLimitBytes: 10 });
    await rawExchange(h.port, 'GARBAGE\r\n\r\n');
    await call(h, 'POST', '/api/v1/quotes', { body: '{"kg": 1, "reference": "long enough"}' });
    await sleep(50);
    expect(h.log.filter((l) => / 400 key=- req_\w+ \(HPE_/.test(l))).toHaveLength(1);
    expect(h.log.filter((l) => / POST \/api\/v1\/quotes 413 /.test(l))).toHaveLength(1);
    await shutdown(h);
  });
});

describe('carbon serve: graceful close', () => {
  it('finishes a request in flight, refuses new connections, then closes the ledger', async () => {
    const h = await serve();
    const body = '{"kg": 21}';
    let answer = '';
    const done = new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: h.port,
          method: 'POST',
          path: '/api/v1/offsets',
          headers: { authorization: `Bearer ${h.keys.test}`, 'idempotency-key': 'in-flight', 'content-length': body.length },
          agent: false,
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (d: string) => (answer += d));
          res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`status ${res.statusCode}: ${answer}`))));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 4));
      // The rest arrives after close() has begun.
      setTimeout(() => req.end(body.slice(4)), 300);
    });
    await sleep(100);
    expect(h.server.inFlight()).toBe(1);
    let closed = false;
    const closing = h.server.close().then(() => (closed = true));
    await sleep(50);
    expect(closed).toBe(false);
    await expect(fetch(`${h.server.url}/balance`)).rejects.toThrow();
    await done;
    await closing;
    expect(JSON.parse(answer) as Offset).toMatchObject({ object: 'offset', kg: 21 });
    expect(h.server.inFlight()).toBe(0);
    expect(h.log.some((l) => /finishing 1 request\(s\) in flight/.test(l))).toBe(true);
    expect(h.log.at(-1)).toBe('closed');
    // The ledger was closed, and the purchase is in it.
    const check = await openSandbox(h.dir);
    expect((await check.status()).impact.test.offsets).toBe(1);
    await check.close();
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('answers every request already read on a connection (pipelined), each purchase with its answer, then closes it', async () => {
    const h = await serve();
    // Each answer takes 300 ms: the first is in flight when close() begins, the second read behind it.
    await h.server.sandbox.setFaults({ latency_ms: { min: 300, max: 300 }, mode: 'test' });
    const post = (idempotencyKey: string, kg: number) => {
      const body = JSON.stringify({ kg });
      return (
        `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nIdempotency-Key: ${idempotencyKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
      );
    };
    const exchange = rawExchange(h.port, `${post('drain-a', 3)}${post('drain-b', 4)}`, 5_000);
    await sleep(100);
    const closing = h.server.close();
    const r = await exchange;
    await closing;
    const statuses = [...r.raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([201, 201]);
    expect(r.raw.match(/\r\nConnection: close\r\n/gi)).toHaveLength(1);
    expect(r.closedByServer).toBe(true);
    expect(h.log.filter((l) => /\(aborted\)/.test(l))).toEqual([]);
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('does not wait for idle keep-alive connections', async () => {
    const h = await serve({ keepAliveTimeoutMs: 60_000 });
    const r = await call(h, 'GET', '/api/v1/balance');
    expect(r.status).toBe(200);
    const started = Date.now();
    await h.server.close();
    expect(Date.now() - started).toBeLessThan(limit(1_000));
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('cuts off requests still in flight after the grace period', async () => {
    const h = await serve({ shutdownGraceMs: 200, requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    const stuck = rawExchange(h.port, `POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{`, limit(5_000));
    await sleep(100);
    const started = Date.now();
    await h.server.close();
    expect(Date.now() - started).toBeLessThan(limit(2_000));
    expect((await stuck).closedByServer).toBe(true);
    expect(h.log.some((l) => /cutting off 1 request/.test(l))).toBe(true);
    // Its access-log line is written before the close is over (the CLI exits then): before, it came after "closed".
    const aborted = h.log.findIndex((l) => / POST \/api\/v1\/quotes - \(aborted\) /.test(l));
    expect(aborted).toBeGreaterThan(-1);
    expect(aborted).toBeLessThan(h.log.indexOf('closed'));
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('close() is idempotent: one shutdown, one "closed" line, the same promise each time, and nothing more served', async () => {
    const h = await serve();
    const first = h.server.close();
    expect(h.server.close()).toBe(first);
    await Promise.all([first, h.server.close()]);
    await h.server.close();
    expect(h.log.filter((l) => l === 'closed')).toHaveLength(1);
    expect(h.log.filter((l) => l.startsWith('shutting down'))).toHaveLength(1);
    await expect(fetch(`${h.server.origin}/`)).rejects.toThrow();
    rmSync(h.dir, { recursive: true, force: true });
  });

  it('startServer rejects, and releases the ledger, when the port is taken', async () => {
    const h = await serve();
    const dir = mkdtempSync(join(tmpdir(), 'carbon-server-'));
    await expect(startServer({ host: '127.0.0.1', port: h.port, dataDir: dir })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    rmSync(dir, { recursive: true, force: true });
    await shutdown(h);
  });
});

describe('carbon serve: publicUrl', () => {
  it('certificate URLs use the public origin when one is given', async () => {
    const h = await serve({ publicUrl: 'https://sandbox.example.test' });
    await h.server.sandbox.topUp('live', 25_000);
    const bought = await call(h, 'POST', '/api/v1/offsets', {
      key: h.keys.live,
      body: '{"kg": 10}',
      headers: { 'idempotency-key': 'pub' },
    });
    // A live offset of the sandbox's says so in its id, as its keys do (README, "The sandbox").
    expect(bought.json.id).toMatch(/^off_sandbox[A-Za-z0-9]{17}$/);
    await h.server.sandbox.advanceClock(60_000);
    const r = await call(h, 'GET', `/api/v1/offsets/${bought.json.id as string}`, { key: h.keys.live });
    expect(r.json.certificate_url).toMatch(/^https:\/\/sandbox\.example\.test\/certificates\/cert_[0-9a-f]{24}$/);
    await shutdown(h);
  });
});
