import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';

/** HEAD answers wherever GET does, with GET's status and headers and no body. */
describe('HEAD on the API', () => {
  const served = serveInProcess('carbon-head-');
  let server: RunningServer;
  let key: string;

  beforeAll(async () => {
    server = served.server;
    key = (await server.sandbox.defaultKey('test'))!;
  });

  it.each(['/balance', '/impact', '/offsets'])('HEAD %s is GET without a body', async (path) => {
    const headers = { authorization: `Bearer ${key}` };
    const get = await fetch(`${server.url}${path}`, { headers });
    const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
  });

  it('HEAD still authenticates', async () => {
    const head = await fetch(`${server.url}/balance`, { method: 'HEAD' });
    expect(head.status).toBe(401);
    expect(await head.text()).toBe('');
  });

  it('HEAD on a POST-only path is 405 naming HEAD', async () => {
    const res = await fetch(`${server.url}/quotes`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});
