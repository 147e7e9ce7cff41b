import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';
import { limit } from '../support/load.js';
import { rawExchange } from '../support/raw-http.js';

/**
 * Requests sent together in one write (pipelined), followed by bytes node:http refuses: every
 * request read whole is answered with its own answer, in order, and only then is the rest refused
 * (or, after `Connection: close`, ignored). Before, the refusal of the trailing bytes went out as the
 * answer to the first request still unanswered: a purchase was made, its client told 400.
 */

/** The status lines and bodies of every response in `raw`, in order. */
function responses(raw: string): { status: number; body: string }[] {
  const found: { status: number; body: string }[] = [];
  const re = /HTTP\/1\.1 (\d{3}) [^\r]*\r\n([\s\S]*?)\r\n\r\n/g;
  for (let m = re.exec(raw); m !== null; m = re.exec(raw)) {
    const length = Number(/^content-length: (\d+)$/im.exec(m[2]!)?.[1] ?? 0);
    const start = m.index + m[0].length;
    found.push({ status: Number(m[1]), body: raw.slice(start, start + length) });
    re.lastIndex = start + length;
  }
  return found;
}

describe('pipelined requests before bytes the server refuses', () => {
  const log: string[] = [];
  const served = serveInProcess('carbon-pipelining-', { log: (l) => log.push(l) });
  let server: RunningServer;
  let key: string;

  beforeAll(async () => {
    server = served.server;
    key = (await server.sandbox.defaultKey('test'))!;
  });

  const post = (idempotencyKey: string, kg: number) => {
    const body = JSON.stringify({ kg });
    return (
      `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: ${idempotencyKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    );
  };

  /** The ids of the offsets the sandbox holds. */
  const offsetIds = async (): Promise<string[]> => {
    const list = await fetch(`${server.url}/offsets`, { headers: { authorization: `Bearer ${key}` } });
    return ((await list.json()) as { data: { id: string }[] }).data.map((o) => o.id);
  };

  it('answers each purchase read whole, in order, then refuses the malformed request after them with 400', async () => {
    // Another test of this file may have bought before this one (in any order): only what this one made counts.
    const before = new Set(await offsetIds());
    const r = await rawExchange(server.port, `${post('pipe-a', 7)}${post('pipe-b', 9)}NOT-HTTP\r\n\r\n`, limit(5_000));
    const answers = responses(r.raw);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 400]);
    const [a, b] = answers.map((x) => JSON.parse(x.body) as { id: string; kg: number });
    expect([a!.kg, b!.kg]).toEqual([7, 9]);
    expect(JSON.parse(answers[2]!.body).error.code).toBe('malformed_request');
    expect(r.closedByServer).toBe(true);
    // Exactly the two purchases answered, each once.
    const made = (await offsetIds()).filter((id) => !before.has(id));
    expect(made.sort()).toEqual([a!.id, b!.id].sort());
  });

  it('answers each request after the one before it: a read sent after a purchase sees the purchase', async () => {
    const get = (path: string, close = false) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const raw = `${get('/api/v1/balance')}${post('pipe-read', 25)}${get('/api/v1/balance')}${get('/api/v1/offsets?limit=1', true)}`;
    const answers = responses((await rawExchange(server.port, raw, limit(5_000))).raw);
    expect(answers.map((a) => a.status)).toEqual([200, 201, 200, 200]);
    const [first, bought, then, newest] = answers.map((a) => JSON.parse(a.body));
    // Before: the balance and the list were read alongside the purchase, and showed the sandbox before it.
    expect(then.available_cents).toBe(first.available_cents - bought.amount_cents);
    expect(newest.data[0].id).toBe(bought.id);
  });

  it('a request refused at once between them (not UTF-8) does not let the next act before the one still being answered', async () => {
    await server.sandbox.setFaults({ error_rate: 0, latency_ms: { min: 300, max: 300 }, route: 'POST /offsets' });
    try {
      const bad = Buffer.from([0xff, 0xfe]);
      const first = Buffer.concat([
        Buffer.from(post('pipe-slow', 10)),
        Buffer.from(`POST /api/v1/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 2\r\n\r\n`),
        bad,
      ]);
      const read = `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`;
      // The read comes once the refusal is made (it waits its turn behind the purchase's answer), while the purchase waits its 300 ms.
      const exchange = await rawExchange(
        server.port,
        async (socket) => {
          socket.write(first);
          await new Promise((resolve) => setTimeout(resolve, 100));
          socket.write(read);
        },
        limit(5_000),
      );
      const answers = responses(exchange.raw);
      expect(answers.map((a) => a.status)).toEqual([201, 400, 200]);
      const bought = JSON.parse(answers[0]!.body) as { amount_cents: number };
      const after = (await (await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        available_cents: number;
      };
      // Before: the balance was read while the purchase waited, and showed the sandbox without it.
      expect(JSON.parse(answers[2]!.body).available_cents).toBe(after.available_cents);
      expect(bought.amount_cents).toBeGreaterThan(0);
    } finally {
      await server.sandbox.clearFaults();
    }
  });

  it('a request behind one whose connection went away is not acted on: a purchase is not made for a client that left', async () => {
    await server.sandbox.setFaults({ error_rate: 0, latency_ms: { min: 300, max: 300 }, route: 'GET /offsets' });
    try {
      const before = new Set(await offsetIds());
      const raw = `GET /api/v1/offsets?reference=left-behind HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n${post('pipe-left', 4)}`;
      // The client writes both and leaves before the first is answered.
      await rawExchange(
        server.port,
        async (socket) => {
          socket.write(raw);
          await new Promise((resolve) => setTimeout(resolve, 50));
          socket.destroy();
        },
        limit(2_000),
      );
      // Past the first's 300 ms: by then the purchase behind it would have been made (the first is not acted on either: its client left).
      await new Promise((resolve) => setTimeout(resolve, 600));
      await server.sandbox.journal.flush();
      expect((await offsetIds()).filter((id) => !before.has(id))).toEqual([]);
    } finally {
      await server.sandbox.clearFaults();
    }
  });

  it('a client that half-closes after its pipelined purchases: each one made is answered to it, none made unseen', async () => {
    const before = new Set(await offsetIds());
    const exchange = await rawExchange(
      server.port,
      (socket) => {
        socket.write(`${post('half-1', 1)}${post('half-2', 2)}${post('half-3', 3)}`);
        socket.end();
      },
      limit(5_000),
    );
    const answered = responses(exchange.raw).filter((a) => a.status === 201).length;
    // Before: the second was made as its connection ended, its answer never sent (a moment after the exchange).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await offsetIds()).filter((id) => !before.has(id))).toHaveLength(answered);
    expect(answered).toBeGreaterThan(0);
  });

  it('a request asking to Upgrade is answered with Connection: close (node:http reads nothing after it), and what follows is not acted on', async () => {
    const before = new Set(await offsetIds());
    const upgrade = `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
    const r = await rawExchange(server.port, `${upgrade}${post('after-upgrade', 1)}`, limit(5_000));
    // Before: 200 with keep-alive, and the connection held for the keep-alive timeout, the purchase never answered.
    expect([r.status, r.headers.connection, r.closedByServer]).toEqual([200, 'close', true]);
    expect(responses(r.raw)).toHaveLength(1);
    expect((await offsetIds()).filter((id) => !before.has(id))).toEqual([]);
  });

  it('answers a request with `Connection: close` and ignores what follows it', async () => {
    const get = 'GET /healthz HTTP/1.1\r\nHost: x\r\n';
    const r = await rawExchange(server.port, `${get}Connection: close\r\n\r\n${get}\r\n`, limit(5_000));
    expect(responses(r.raw).map((a) => a.status)).toEqual([200]);
    expect(r.closedByServer).toBe(true);
  });

  it('answers an HTTP/1.0 request without keep-alive, sent with another after it', async () => {
    const r = await rawExchange(server.port, 'GET /healthz HTTP/1.0\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n', limit(5_000));
    expect(responses(r.raw).map((a) => a.status)).toEqual([200]);
  });

  it('keeps one access-log line for each request answered and one for the refused bytes', async () => {
    log.length = 0;
    await rawExchange(server.port, `${post('pipe-c', 3)}NOT-HTTP\r\n\r\n`, limit(5_000));
    await expect.poll(() => log.filter((l) => / POST \/api\/v1\/offsets /.test(l))).toHaveLength(1);
    expect(log.filter((l) => / POST \/api\/v1\/offsets 201 /.test(l))).toHaveLength(1);
    await expect.poll(() => log.filter((l) => / - - 400 key=- req_\w+ \(HPE_/.test(l))).toHaveLength(1);
  });
});
