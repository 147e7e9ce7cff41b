import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { ServerFaults } from '../../src/server/faults.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * A client that leaves while the service is making its purchase (a PostgreSQL ledger awaits each
 * query, so the server reads the close meanwhile): the purchase is made all the same, and the
 * access log says so, with its status and the Request-Id the journal keeps it under. Before, the
 * line was written at the close, `- (aborted)` with no Request-Id, and the server counted the
 * request done while the purchase was still being made (a shutdown closed the ledger under it).
 */
describe('a client that leaves while its purchase is being made', () => {
  const log: string[] = [];
  const served = serveInProcess('carbon-client-gone-', { log: (l) => log.push(l) });

  it('has its access-log line once the purchase is made, naming its status and Request-Id, and is in flight until then', async () => {
    const { server } = served;
    const key = (await server.sandbox.defaultKey('test'))!;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: (res: ServerResponse) => void;
    const acting = new Promise<ServerResponse>((resolve) => (reached = resolve));
    // The service holds the purchase at its start until the test lets it go: a slow ledger, on cue.
    const original = ServerFaults.prototype.withFaults;
    const spy = vi.spyOn(ServerFaults.prototype, 'withFaults').mockImplementation(async function (this: ServerFaults, ...args) {
      if (args[1].method === 'POST') {
        reached(args[2]);
        await gate;
      }
      return original.apply(this, args);
    });
    try {
      const body = JSON.stringify({ kg: 5 });
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: client-gone\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      const res = await acting;
      socket.destroy();
      await once(res, 'close');
      const lines = () => log.filter((l) => l.includes(' POST /api/v1/offsets '));
      expect(lines()).toEqual([]);
      expect(server.inFlight()).toBe(1);

      release();
      await vi.waitFor(() => expect(server.inFlight()).toBe(0));
      expect(lines()).toHaveLength(1);
      const id = / POST \/api\/v1\/offsets 201 \(aborted\) [\d.]+ms key=ck_test_\S+ (req_\w+)$/.exec(lines()[0]!)?.[1];
      expect(id, lines()[0]).toBeDefined();
      const journal = await fetch(`${server.origin}/_sandbox/requests?method=POST`, { headers: { authorization: `Bearer ${key}` } });
      const entries = ((await journal.json()) as { data: { id: string; status: number; idempotency_key: string }[] }).data;
      expect(entries.map((e) => [e.id, e.status, e.idempotency_key])).toEqual([[id, 201, 'client-gone']]);
    } finally {
      spy.mockRestore();
    }
  });
});
