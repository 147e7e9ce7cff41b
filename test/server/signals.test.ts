import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { limit } from '../support/load.js';
import { sleep } from '../support/raw-http.js';
import { defaultLauncher, type ServerProcess, startServerProcess } from '../support/server-process.js';
import { openSandbox } from '../support/world.js';

/**
 * `carbon serve` in its own process, stopped by a signal with a request in flight: the request
 * is finished, then the process exits 0 on its own.
 */

const launcher = defaultLauncher();

async function keyOf(dataDir: string): Promise<string> {
  const sandbox = await openSandbox(dataDir);
  try {
    return (await sandbox.defaultKey('test'))!;
  } finally {
    await sandbox.close();
  }
}

/** Starts a purchase whose body arrives in two parts; `finish()` sends the rest. */
function slowPurchase(url: string, key: string, body: string) {
  const target = new URL(`${url}/offsets`);
  let answer = '';
  let send: () => void = () => {};
  const response = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: target.pathname,
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'sigterm-1', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (d: string) => (answer += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: answer, connection: res.headers.connection }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 3));
    send = () => req.end(body.slice(3));
  });
  return { response, finish: () => send() };
}

describe(`carbon serve stopped by a signal (${launcher})`, () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s with a request in flight: the request completes, then the process exits 0',
    async (signal) => {
      server = await startServerProcess();
      const key = await keyOf(server.dataDir);
      const purchase = slowPurchase(server.url, key, '{"kg": 33}');
      await sleep(200);

      const exited = new Promise<number | null>((resolve) => server!.child.once('exit', (code) => resolve(code)));
      server.child.kill(signal);
      await sleep(300);
      // Still running: it is waiting for the request in flight.
      expect(server.child.exitCode).toBeNull();
      // And no longer accepting new connections.
      await expect(fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } })).rejects.toThrow();

      purchase.finish();
      const answer = await purchase.response;
      expect(answer.status).toBe(201);
      expect(JSON.parse(answer.body)).toMatchObject({ object: 'offset', kg: 33, status: 'processing' });
      expect(answer.connection).toBe('close');
      expect(await exited).toBe(0);

      const sandbox = await openSandbox(server.dataDir);
      expect((await sandbox.status()).impact.test.offsets).toBe(1);
      await sandbox.close();
      const log = server.stderr();
      expect(log).toMatch(/ POST \/api\/v1\/offsets 201 /);
      expect(log).not.toContain(key);
    },
  );

  it('an idle server exits 0 at once on SIGTERM', async () => {
    server = await startServerProcess();
    const started = Date.now();
    const { code } = await server.stop('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(limit(3_000));
  });
});
