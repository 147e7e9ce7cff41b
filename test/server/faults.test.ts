import { beforeAll, describe, expect, test } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { FaultDice } from '../../src/service/faults.js';
import { NO_FILTER } from '../../src/service/journal-view.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * `carbon sandbox faults` through the server in this process: the statuses follow the seeded
 * schedule exactly, dropped connections are cut before or after the purchase commits, latency
 * delays the answer, and a second server on the same ledger follows a change at once.
 */

const served = serveInProcess('carbon-faults-', { servers: 2 });
let a: RunningServer;
let b: RunningServer;
let key: string;

beforeAll(async () => {
  [a, b] = served.servers as [RunningServer, RunningServer];
  key = (await a.sandbox.defaultKey('test'))!;
});

const balance = (server: RunningServer) => fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
const buy = (server: RunningServer, idem: string) =>
  fetch(`${server.url}/offsets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
    body: '{"kg": 1}',
  });
/** A request's status, or "drop" when the connection was cut without an answer. */
const outcome = (p: Promise<Response>) =>
  p.then(
    (r) => r.text().then(() => String(r.status)),
    () => 'drop',
  );

describe('faults through carbon serve', () => {
  test('one request after another: the statuses are the seeded schedule, on every instance', async () => {
    const config = await a.sandbox.setFaults({
      error_rate: 0.5,
      errors: ['429', '500', '503', 'drop-before'],
      seed: 7,
      retry_after_seconds: 0,
    });
    const expected = new FaultDice();
    expected.use(JSON.stringify(config));
    const want = (n: number) =>
      Array.from({ length: n }, () => expected.draw({ method: 'GET', path: '/api/v1/balance', headers: {} })?.kind ?? '200');
    const got: string[] = [];
    for (let i = 0; i < 40; i++) got.push((await outcome(balance(b))).replace(/^drop$/, 'drop-before'));
    expect(got).toEqual(want(40));
    expect(new Set(got)).toEqual(new Set(['200', '429', '500', '503', 'drop-before']));
    // The 429 says when to come back, as set.
    await a.sandbox.setFaults({ error_rate: 1, errors: ['429'], retry_after_seconds: 0 });
    const r = await balance(b);
    expect([r.status, r.headers.get('retry-after'), ((await r.json()) as { error: { code: string } }).error.code]).toEqual([
      429,
      '0',
      'rate_limited',
    ]);
    await a.sandbox.clearFaults();
    expect((await balance(b)).status).toBe(200);
  });

  test('a 429, 500 or 503 a fault gave is in the journal, as the caller met it (Request-Id, key, mode, code)', async () => {
    await a.sandbox.setFaults({ error_rate: 1, errors: ['500', '503', '429'], seed: 3, route: 'GET /balance' });
    const answers = [await balance(a), await balance(a), await balance(a)];
    await a.sandbox.clearFaults();
    const keyId = (await a.sandbox.findKey(key))!.id;
    const got = await fetch(`${a.origin}/_sandbox/requests?path=/api/v1/balance&limit=3`, { headers: { authorization: `Bearer ${key}` } });
    const entries = ((await got.json()) as { data: Record<string, unknown>[] }).data.reverse();
    const met = await Promise.all(
      answers.map(async (r) => {
        const body = (await r.json()) as { error: { code: string; message: string } };
        return { id: r.headers.get('request-id'), status: r.status, code: body.error.code, message: body.error.message };
      }),
    );
    expect(new Set(met.map((m) => m.status))).not.toEqual(new Set([200]));
    expect(
      entries.map((e) => ({
        id: e.id,
        status: e.status,
        code: (e.error as { code: string }).code,
        message: (e.error as { message: string }).message,
      })),
    ).toEqual(met);
    expect(entries.map((e) => [e.key_id, e.livemode, e.method])).toEqual(met.map(() => [keyId, false, 'GET']));
  });

  test('drop-before: nothing bought; drop-after: bought, the answer lost, and a retry with the key replays it', async () => {
    const before = (await a.sandbox.status()).impact.test.offsets;
    await a.sandbox.setFaults({ error_rate: 1, errors: ['drop-before'], route: 'POST /offsets' });
    expect(await outcome(buy(a, 'fault-before'))).toBe('drop');
    expect((await balance(a)).status).toBe(200); // another route is left alone
    expect((await a.sandbox.status()).impact.test.offsets).toBe(before);

    await a.sandbox.setFaults({ error_rate: 1, errors: ['drop-after'], route: 'POST /offsets' });
    expect(await outcome(buy(a, 'fault-after'))).toBe('drop');
    expect((await a.sandbox.status()).impact.test.offsets).toBe(before + 1);
    await a.sandbox.clearFaults();
    const retried = await buy(b, 'fault-after');
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect((await a.sandbox.status()).impact.test.offsets).toBe(before + 1);
  });

  test('a drop pipelined behind another request: that one is answered, then the connection is cut (it hung open, silent)', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(a.url);
    /** Two requests sent together on one connection: the status lines that came back, once the connection closed (or after 4 s). */
    const pipelined = (second: string) =>
      new Promise<{ statuses: string[]; closed: boolean }>((resolve) => {
        const auth = `Host: x\r\nAuthorization: Bearer ${key}\r\n`;
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(`GET /api/v1/balance HTTP/1.1\r\n${auth}\r\n${second.replace('AUTH', auth)}`),
        );
        let got = '';
        const done = (closed: boolean) => {
          clearTimeout(timer);
          socket.destroy();
          resolve({ statuses: got.match(/HTTP\/1\.1 \d+/g) ?? [], closed });
        };
        const timer = setTimeout(() => done(false), 4_000);
        socket.on('data', (d) => (got += d));
        socket.on('close', () => done(true));
        socket.on('error', () => {});
      });
    const before = (await a.sandbox.status()).impact.test.offsets;
    await a.sandbox.setFaults({ error_rate: 1, errors: ['drop-before'], route: 'GET /impact' });
    expect(await pipelined('GET /api/v1/impact HTTP/1.1\r\nAUTH\r\n')).toEqual({ statuses: ['HTTP/1.1 200'], closed: true });
    await a.sandbox.setFaults({ error_rate: 1, errors: ['drop-after'], route: 'POST /offsets' });
    const body = '{"kg": 1}';
    const post = `POST /api/v1/offsets HTTP/1.1\r\nAUTHIdempotency-Key: pipelined-drop\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    expect(await pipelined(post)).toEqual({ statuses: ['HTTP/1.1 200'], closed: true });
    // Bought, its answer lost.
    expect((await a.sandbox.status()).impact.test.offsets).toBe(before + 1);
    await a.sandbox.clearFaults();
  });

  test('latency: the answer comes no sooner than the least delay set', async () => {
    await a.sandbox.setFaults({ latency_ms: { min: 250, max: 300 }, mode: 'test' });
    const started = performance.now();
    expect((await balance(b)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(245);
    await a.sandbox.clearFaults();
  });
});

describe('the access log of a request a fault cut', () => {
  const log: string[] = [];
  const own = serveInProcess('carbon-faults-log-', { log: (line) => log.push(line) });

  test('drop-after: the status the service answered and its Request-Id, said cut (the purchase was made); drop-before: said cut', async () => {
    const server = own.server;
    const k = (await server.sandbox.defaultKey('test'))!;
    const post = (idem: string) =>
      fetch(`${server.url}/offsets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}`, 'idempotency-key': idem, 'content-type': 'application/json' },
        body: '{"kg":2}',
      }).then(
        () => 'answered',
        () => 'cut',
      );
    await server.sandbox.setFaults({ error_rate: 1, errors: ['drop-after'], route: 'POST /offsets' });
    expect(await post('cut-after')).toBe('cut');
    await server.sandbox.setFaults({ error_rate: 1, errors: ['drop-before'], route: 'POST /offsets' });
    expect(await post('cut-before')).toBe('cut');
    await server.sandbox.clearFaults();
    // A line is written once its response is over: wait for both, not for a fixed time.
    const posts = () => log.filter((l) => l.includes(' POST /api/v1/offsets '));
    while (posts().length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const [after, before] = posts();
    await server.sandbox.journal.flush();
    const bought = (await server.sandbox.journal.entries({ ...NO_FILTER, limit: 10 })).find((e) => e.idempotency_key === 'cut-after');
    expect(bought?.status).toBe(201);
    // Before: both read `- (aborted)`, with no Request-Id, as if the client had gone.
    expect(after).toMatch(new RegExp(` POST /api/v1/offsets 201 \\(cut: drop-after\\) [\\d.]+ms key=\\S+ ${bought!.id}$`));
    expect(before).toMatch(/ POST \/api\/v1\/offsets - \(cut: drop-before\) [\d.]+ms key=\S+$/);
  });
});
