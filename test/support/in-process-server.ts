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

/**
 * Noon (UTC) of today, for a model clock a test holds still (`clock: () => middayToday()`'s value):
 * moved on by minutes or hours it stays within today whenever the suite runs, where Date.now() at
 * 23:59 crossed midnight under a test that moved it a minute ("the first day of purchases").
 */
export function middayToday(): number {
  return Math.floor(Date.now() / 86_400_000) * 86_400_000 + 12 * 3_600_000;
}

/** Signs in to `server`'s developer page as the owner (a fresh login link followed): its session cookie, `carbon_session=…`. */
export async function sessionCookie(server: RunningServer): Promise<string> {
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const res = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  return /carbon_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
}

/** `POST /offsets` of `body` to `server` with the sandbox's default test key, under `idempotencyKey`: its answer. */
export async function buyOver(server: RunningServer, body: Record<string, unknown>, idempotencyKey: string): Promise<Response> {
  const key = (await server.sandbox.defaultKey('test'))!;
  return fetch(`${server.url}/offsets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify(body),
  });
}
