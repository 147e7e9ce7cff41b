import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';
import { limit } from '../support/load.js';
import { rawExchange } from '../support/raw-http.js';

/**
 * CONNECT: `carbon serve` is no proxy. node:http closes a CONNECT's connection without a word
 * unless the server listens for it; it is answered instead, as another method the path does not
 * take is (the API's envelope), logged, and the connection closed.
 */
describe('CONNECT', () => {
  const log: string[] = [];
  const served = serveInProcess('carbon-connect-', { log: (l) => log.push(l) });
  let server: RunningServer;
  let key: string;

  beforeAll(async () => {
    server = served.server;
    key = (await server.sandbox.defaultKey('test'))!;
  });

  it('on an API path is 405 method_not_allowed with Allow, in the envelope, and the connection closed', async () => {
    const r = await rawExchange(
      server.port,
      `CONNECT /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\ntunnel bytes`,
      limit(5_000),
    );
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, HEAD');
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body).error.code).toBe('method_not_allowed');
    expect(r.closedByServer).toBe(true);
    await expect.poll(() => log.some((l) => / CONNECT \/api\/v1\/balance 405 /.test(l))).toBe(true);
  });

  it('to a host and port (a proxy tunnel) is the API 404 route_missing, not a silent close', async () => {
    const r = await rawExchange(server.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', limit(5_000));
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error.code).toBe('route_missing');
    expect(r.closedByServer).toBe(true);
  });

  it('after a request on the same connection: that one answered first, then the CONNECT, and the server goes on', async () => {
    const r = await rawExchange(
      server.port,
      'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nCONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      limit(5_000),
    );
    expect([...r.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))).toEqual([200, 405]);
    expect(r.closedByServer).toBe(true);
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
  });
});
