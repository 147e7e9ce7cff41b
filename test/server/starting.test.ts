import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { startServer } from '../../src/server/server.js';
import { PageAccess } from '../../src/service/page-access.js';
import { openSandbox } from '../support/world.js';

/**
 * A server whose last start-up write waits for the ledger (on PostgreSQL, another instance's lock):
 * it listens already, and answers as it will once started. Before, every request meanwhile, /livez
 * too, was answered 503 "The server is shutting down."
 */
const dir = mkdtempSync(join(tmpdir(), 'carbon-starting-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a server still writing its start-up record answers /livez, /healthz and the API as a started one', async () => {
  const ledger = await openSandbox(dir);
  const key = (await ledger.defaultKey('test'))!;
  await ledger.close();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: (origin: string) => void;
  const listening = new Promise<string>((resolve) => (reached = resolve));
  const original = PageAccess.prototype.recordUrl;
  const spy = vi.spyOn(PageAccess.prototype, 'recordUrl').mockImplementation(async function (this: PageAccess, origin: string) {
    reached(origin);
    await gate;
    return original.call(this, origin);
  });
  try {
    const starting = startServer({ host: '127.0.0.1', port: 0, dataDir: dir, log: () => {} });
    const origin = await listening;
    const statuses = [];
    for (const path of ['/livez', '/healthz', '/api/v1/balance'])
      statuses.push((await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${key}` } })).status);
    expect(statuses).toEqual([200, 200, 200]);
    release();
    const server = await starting;
    await server.close();
  } finally {
    spy.mockRestore();
  }
});
