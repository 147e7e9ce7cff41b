import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type RunningServer, type ServeOptions, startServer } from '../../src/server/server.js';

/**
 * `carbon serve` in this process, for a test file or a describe block: a temporary directory,
 * one server (or several sharing one ledger) started before its tests and closed after them,
 * and the directory removed. The ledger is in `dir/data`; the rest of `dir` is the test's own.
 */
export interface InProcessServer {
  /** The temporary directory (removed after the tests). */
  dir: string;
  /** The first server. */
  server: RunningServer;
  /** Every server, all on the same ledger. */
  servers: RunningServer[];
}

export function serveInProcess(prefix: string, options: Partial<ServeOptions> & { servers?: number } = {}): InProcessServer {
  const { servers: count = 1, ...serve } = options;
  const served: InProcessServer = { dir: '', server: undefined as unknown as RunningServer, servers: [] };
  beforeAll(async () => {
    served.dir = mkdtempSync(join(tmpdir(), prefix));
    const dataDir = join(served.dir, 'data');
    mkdirSync(dataDir);
    for (let i = 0; i < count; i++) served.servers.push(await startServer({ host: '127.0.0.1', port: 0, dataDir, ...serve }));
    served.server = served.servers[0]!;
  });
  afterAll(async () => {
    for (const server of served.servers.splice(0)) await server.close();
    rmSync(served.dir, { recursive: true, force: true });
  });
  return served;
}
