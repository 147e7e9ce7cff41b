import { beforeAll, expect, test } from 'vitest';
import { serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * The headers docs/security.md promises: every answer says `X-Content-Type-Options: nosniff` and
 * `Cache-Control: no-store` (the API, the page, the probes, the certificate, refusals); every page
 * of the developer page says it may not be framed, and keeps its addresses to itself.
 */

const served = serveInProcess('carbon-answer-headers-');
let cookie: string;
let key: string;

beforeAll(async () => {
  const server = served.server;
  key = (await server.sandbox.defaultKey('test'))!;
  cookie = await sessionCookie(server);
});

async function headersOf(path: string, init: { method?: string; signedIn?: boolean; api?: boolean; html?: boolean } = {}) {
  const { origin, url } = served.server;
  const res = await fetch(`${init.api ? url : origin}${path}`, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: {
      ...(init.html ? { accept: 'text/html' } : {}),
      ...(init.signedIn ? { cookie } : {}),
      ...(init.api ? { authorization: `Bearer ${key}` } : {}),
    },
  });
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
}

test('every answer says nosniff and no-store: the API (200, 404, 405, 401), the probes, the certificate, the page', async () => {
  const answers = {
    'GET /balance': await headersOf('/balance', { api: true }),
    'GET /offsets/off_nope': await headersOf('/offsets/off_nope', { api: true }),
    'POST /balance': await headersOf('/balance', { api: true, method: 'POST' }),
    'GET /balance, no key': await headersOf('/api/v1/balance'),
    'GET /healthz': await headersOf('/healthz'),
    'GET /livez': await headersOf('/livez'),
    'GET /certificates/cert_…': await headersOf(`/certificates/cert_${'0'.repeat(24)}`),
    'GET / signed in': await headersOf('/', { signedIn: true, html: true }),
    'GET / signed out': await headersOf('/', { html: true }),
    'GET /requests': await headersOf('/requests', { signedIn: true, html: true }),
    'GET /no-such-page': await headersOf('/no-such-page', { signedIn: true, html: true }),
  };
  const seen = Object.fromEntries(
    Object.entries(answers).map(([name, { status, headers }]) => [
      name,
      [status, headers.get('x-content-type-options'), headers.get('cache-control')],
    ]),
  );
  expect(seen).toEqual({
    'GET /balance': [200, 'nosniff', 'no-store'],
    'GET /offsets/off_nope': [404, 'nosniff', 'no-store'],
    'POST /balance': [405, 'nosniff', 'no-store'],
    'GET /balance, no key': [401, 'nosniff', 'no-store'],
    'GET /healthz': [200, 'nosniff', 'no-store'],
    'GET /livez': [200, 'nosniff', 'no-store'],
    'GET /certificates/cert_…': [404, 'nosniff', 'no-store'],
    'GET / signed in': [200, 'nosniff', 'no-store'],
    'GET / signed out': [401, 'nosniff', 'no-store'],
    'GET /requests': [200, 'nosniff', 'no-store'],
    'GET /no-such-page': [404, 'nosniff', 'no-store'],
  });
});

test("the developer page's answers may not be framed, and keep their addresses to themselves", async () => {
  for (const [path, signedIn] of [
    ['/', true],
    ['/', false],
    ['/requests', true],
    ['/no-such-page', true],
  ] as const) {
    const { headers } = await headersOf(path, { signedIn, html: true });
    expect([path, signedIn, headers.get('x-frame-options'), headers.get('referrer-policy')]).toEqual([
      path,
      signedIn,
      'DENY',
      'same-origin',
    ]);
    expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  }
});
