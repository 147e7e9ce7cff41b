import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerFaults } from '../../src/server/faults.js';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * A client that leaves while the service is making its purchase (a PostgreSQL ledger awaits each
 * query, so the server reads the close meanwhile): the purchase is made all the same, and the
 * access log says so, with its status and the Request-Id the journal keeps it under. Before, the
 * line was written at the close, `- (aborted)` with no Request-Id, and the server counted the
 * request done while the purchase was still being made (a shutdown closed the ledger under it).
 */

/** The service holds each purchase at its start until `release()`: a slow ledger, on cue. `acting`: the first one's response, once held. */
function holdPurchases() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: (res: ServerResponse) => void;
  const acting = new Promise<ServerResponse>((resolve) => (reached = resolve));
  const original = ServerFaults.prototype.withFaults;
  vi.spyOn(ServerFaults.prototype, 'withFaults').mockImplementation(async function (this: ServerFaults, ...args) {
    if (args[1].method === 'POST') {
      reached(args[2]);
      await gate;
    }
    return original.apply(this, args);
  });
  return { release, acting };
}
afterEach(() => vi.restoreAllMocks());

/** Sends a purchase on a connection of its own, and leaves once the service holds it; resolves once the server has seen it leave. */
async function leaveWhileActing(server: RunningServer, acting: Promise<ServerResponse>, idempotencyKey: string): Promise<void> {
  const key = (await server.sandbox.defaultKey('test'))!;
  const body = JSON.stringify({ kg: 5 });
  const socket = connect(server.port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: ${idempotencyKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  const res = await acting;
  socket.destroy();
  await once(res, 'close');
}

const posts = (log: string[]) => log.filter((l) => l.includes(' POST /api/v1/offsets '));

describe('a client that leaves while its purchase is being made', () => {
  const log: string[] = [];
  const served = serveInProcess('carbon-client-gone-', { log: (l) => log.push(l) });

  it('has its access-log line once the purchase is made, naming its status and Request-Id, and is in flight until then', async () => {
    const { server } = served;
    const { release, acting } = holdPurchases();
    await leaveWhileActing(server, acting, 'client-gone');
    expect(posts(log)).toEqual([]);
    expect(server.inFlight()).toBe(1);

    release();
    await vi.waitFor(() => expect(server.inFlight()).toBe(0));
    expect(posts(log)).toHaveLength(1);
    const id = / POST \/api\/v1\/offsets 201 \(aborted\) [\d.]+ms key=ck_test_\S+ (req_\w+)$/.exec(posts(log)[0]!)?.[1];
    expect(id, posts(log)[0]).toBeDefined();
    const key = (await server.sandbox.defaultKey('test'))!;
    const journal = await fetch(`${server.origin}/_sandbox/requests?method=POST`, { headers: { authorization: `Bearer ${key}` } });
    const entries = ((await journal.json()) as { data: { id: string; status: number; idempotency_key: string }[] }).data;
    expect(entries.map((e) => [e.id, e.status, e.idempotency_key])).toEqual([[id, 201, 'client-gone']]);
  });
});

describe('a shutdown while such a purchase is being made', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const start = async (shutdownGraceMs: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'carbon-client-gone-close-'));
    dirs.push(dir);
    const log: string[] = [];
    const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir, log: (l) => log.push(l), shutdownGraceMs });
    return { server, log };
  };

  it('waits for it within the grace: its line, 201 with its Request-Id, comes before "closed"', async () => {
    const { server, log } = await start(60_000);
    const { release, acting } = holdPurchases();
    await leaveWhileActing(server, acting, 'gone-at-close');
    const closing = server.close();
    // The connection is gone, so node:http's close is over at once: before, the drain waited 1 s and closed the ledger under it.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(log).not.toContain('closed');
    release();
    await closing;
    expect(posts(log)).toHaveLength(1);
    expect(posts(log)[0]).toMatch(/ 201 \(aborted\) .* req_\w+$/);
    expect(log.indexOf(posts(log)[0]!)).toBeLessThan(log.indexOf('closed'));
  });

  it('past the grace, says it cut it off, its line before "closed", and once', async () => {
    const { server, log } = await start(200);
    const { release, acting } = holdPurchases();
    await leaveWhileActing(server, acting, 'cut-at-close');
    await server.close();
    expect(posts(log)).toEqual([expect.stringMatching(/ POST \/api\/v1\/offsets - \(aborted\) /)]);
    expect(log.indexOf(posts(log)[0]!)).toBeLessThan(log.indexOf('closed'));
    expect(log).toContain('shutdown: cutting off 1 request(s) still in flight after 200 ms');
    // The purchase, let go after the ledger closed, fails: no second line of it.
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(posts(log)).toHaveLength(1);
  });
});
