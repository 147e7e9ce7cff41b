/**
 * Bad input, fuzzed over HTTP against `carbon serve`: the same kinds of requests as the service
 * fuzz, written byte for byte on a socket (so nothing a client library would refuse to send is
 * missed), plus what only a server sees: bodies past its limit, chunked bodies, odd header bytes.
 * Every request gets a documented answer and the connection closes (never a hang); a refused
 * request changes nothing; the access log shows no key and no stack trace.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanupHomes, ledgerState, openLedger, provision, requireBuilt, STACK_FRAME, tempHome } from '../support/children.js';
import { type Served, serve } from '../support/cli.js';
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
import { rawExchange } from '../support/raw-http.js';
import type { Db } from '../support/sqlite.js';

let home: string;
let server: Served;
let port: number;
let keys: Keys & { all: string[] };
let db: Db;

beforeAll(async () => {
  requireBuilt();
  home = tempHome();
  keys = await provision(home);
  server = await serve(home);
  port = Number(new URL(server.url).port);
  db = openLedger(home, { readonly: true });
});
afterAll(async () => {
  db?.close();
  await server?.stop();
  cleanupHomes();
});

function state() {
  return ledgerState(db);
}

/** Header values as bytes on the wire: CR and LF would end the header, so they become spaces. */
const headerSafe = (s: string) => s.replace(/[\r\n]/g, ' ');

const rawRequests = (k: Keys) =>
  fc
    .record({
      method: fc.oneof({ weight: 9, arbitrary: methods }, fc.constantFrom('G ET', 'GET\u0000', 'BREW', '')),
      path: paths,
      query: fc.oneof(
        queries.map((q) => {
          const search = new URLSearchParams();
          for (const [name, v] of Object.entries(q)) for (const one of Array.isArray(v) ? v : [v]) search.append(name, one);
          const text = search.toString();
          return text ? `?${text}` : '';
        }),
        fc.constantFrom('?a=%ZZ', '?&&=&', '?limit=1&limit=2', '?limit', '?%00=1', '?reference=%F0%9F%98%80', `?${'x'.repeat(6000)}`),
      ),
      authorization: authorizations(k),
      idempotencyKey: idempotencyKeys,
      extra: fc.array(
        fc.tuple(
          fc.constantFrom(
            'X-Junk',
            'Content-Type',
            'Accept',
            'Authorization',
            'Idempotency-Key',
            'Transfer-Encoding',
            'Content-Length',
            'Expect',
          ),
          fc.string({ maxLength: 30 }),
        ),
        { maxLength: 2 },
      ),
      body: purchaseBodies({ hugeBytes: 100_000 }),
      framing: fc.constantFrom('length', 'length', 'length', 'chunked', 'short-length', 'none'),
    })
    .map((r) => {
      const head: string[] = [`${r.method} ${r.path}${r.query} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
      if (r.authorization !== undefined) head.push(`Authorization: ${headerSafe(r.authorization)}`);
      if (r.idempotencyKey !== undefined) head.push(`Idempotency-Key: ${headerSafe(r.idempotencyKey)}`);
      for (const [name, value] of r.extra) head.push(`${name}: ${headerSafe(value)}`);
      const body = Buffer.from(r.body, 'utf8');
      let payload: Buffer = Buffer.alloc(0);
      if (r.framing === 'length' || r.framing === 'short-length') {
        head.push(`Content-Length: ${r.framing === 'length' ? body.length : Math.floor(body.length / 2)}`);
        payload = body;
      } else if (r.framing === 'chunked') {
        head.push('Transfer-Encoding: chunked');
        payload =
          body.length === 0
            ? Buffer.from('0\r\n\r\n')
            : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      }
      const wire = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), payload]);
      return { wire, method: r.method, describe: `${head[0]!.slice(0, 100)} [${r.framing}] body=${JSON.stringify(r.body.slice(0, 80))}` };
    });

describe('fuzzing carbon serve over raw HTTP', () => {
  test(
    'any request: a documented answer, the connection closes, a refusal changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(rawRequests(keys), async ({ wire, method, describe: context }) => {
          const before = state();
          // The client closes its side once the request is written: a request that declares more
          // body than it sends (an `extra` Content-Length) then ends, as when any client hangs up,
          // instead of waiting out the server's 30 s request timeout (that case: server.test.ts).
          const res = await rawExchange(port, (socket) => void socket.end(wire), 10_000);
          expect(res.closedByServer, `${context}: no answer in 10 s`).toBe(true);
          expect(res.status, `${context}: ${res.raw.slice(0, 200)}`).not.toBeNull();
          let body: unknown;
          try {
            body = JSON.parse(res.body);
          } catch {
            body = undefined;
          }
          if (method.toUpperCase() === 'HEAD') {
            expect(res.status!, context).toBeLessThan(500);
          } else {
            expectDocumented({ status: res.status!, body, text: res.raw }, keys.all, context);
            expect(res.headers['content-type'], context).toMatch(/^application\/json/);
          }
          const after = state();
          const offset = body as { livemode?: boolean; amount_cents?: number } | undefined;
          if (res.status === 201 && res.headers['idempotent-replayed'] !== 'true') {
            expect(after.offsets, context).toBe(before.offsets + 1);
            expect(after[offset?.livemode ? 'live' : 'test'], context).toBe(
              before[offset?.livemode ? 'live' : 'test'] - offset!.amount_cents!,
            );
          } else {
            expect(after, context).toEqual(before);
          }
        }),
        { numRuns: 600 },
      );
      // The access log: one line per request, no full key, no stack trace.
      const log = server.output();
      for (const key of keys.all) expect(log.includes(key), 'a full key in the access log').toBe(false);
      expect(log).not.toMatch(STACK_FRAME);
    },
    limit(90_000),
  );

  test('a body past the limit is 413 body_too_large; a 256-character key is 401; duplicate JSON keys are 400', async () => {
    const send = (body: string, extra = '') =>
      rawExchange(
        port,
        `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${keys.test}\r\nIdempotency-Key: k-${Math.random()}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    const before = state();
    const huge = await send(JSON.stringify({ kg: 1, reference: 'x'.repeat(200_000) }));
    expect([huge.status, JSON.parse(huge.body).error.code]).toEqual([413, 'body_too_large']);
    const longKey = await rawExchange(
      port,
      `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${'k'.repeat(256)}\r\n\r\n`,
    );
    expect([longKey.status, JSON.parse(longKey.body).error.code]).toEqual([401, 'api_key_invalid']);
    const dup = await send('{"kg":1,"kg":1000000}');
    expect([dup.status, JSON.parse(dup.body).error.code]).toEqual([400, 'invalid_json']);
    const notUtf8 = Buffer.from('{"kg":1,"reference":"\xe9"}', 'latin1');
    const latin1 = await rawExchange(
      port,
      Buffer.concat([
        Buffer.from(
          `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${keys.test}\r\nIdempotency-Key: k\r\nContent-Length: ${notUtf8.length}\r\n\r\n`,
        ),
        notUtf8,
      ]),
    );
    expect([latin1.status, JSON.parse(latin1.body).error.code]).toEqual([400, 'invalid_json']);
    expect(state()).toEqual(before);
  });

  test('an Expect header other than 100-continue still gets an answer in the envelope', async () => {
    for (const expectation of ['foo', '', '200-ok']) {
      const res = await rawExchange(
        port,
        `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${keys.test}\r\nExpect: ${expectation}\r\n\r\n`,
      );
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {
        body = undefined;
      }
      expectDocumented({ status: res.status ?? 0, body, text: res.raw }, keys.all, `Expect: ${expectation} → ${res.raw.slice(0, 120)}`);
    }
  });
});
