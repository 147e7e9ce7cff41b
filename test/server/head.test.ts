import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';

/** HEAD answers wherever GET does, with GET's status and headers and no body. */
describe('HEAD on the API', () => {
  let server: RunningServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-head-'));
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir });
    key = (await server.sandbox.defaultKey('test'))!;
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
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
