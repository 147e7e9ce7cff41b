import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CarbonClient } from '../../src/client/client.js';
import { CarbonApiError, CarbonConnectionError } from '../../src/client/errors.js';
import { HttpTransport } from '../../src/client/http-transport.js';
import type { RunningServer } from '../../src/server/server.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * A lost response must never buy twice: a proxy between the client and `carbon serve` drops
 * connections after the server has done the work, answers 503, or answers 429. The client's
 * retries reuse the purchase's Idempotency-Key, so each buy ends with exactly one purchase,
 * or with the right error once retries run out.
 */

const served = serveInProcess('carbon-fault-');
let server: RunningServer;
let proxy: FaultProxy;
let key: string;
let waits: number[];

const BUY = { method: 'POST', path: '/api/v1/offsets' };

function client(maxRetries: number): CarbonClient {
  return new CarbonClient({
    apiKey: key,
    transport: new HttpTransport({ baseUrl: proxy.url, timeoutMs: 5_000 }),
    retry: { maxRetries, baseDelayMs: 1, maxDelayMs: 5 },
    // Record the waits instead of sleeping them: Retry-After: 1 would otherwise cost a second each.
    sleep: async (ms) => void waits.push(ms),
  });
}

/** The ledger's view, read directly: what was really bought. */
async function purchases(): Promise<{ offsets: number; balance: number }> {
  const status = await server.sandbox.status();
  return { offsets: status.impact.test.offsets, balance: status.balances.test };
}

beforeAll(() => {
  server = served.server;
});

beforeEach(async () => {
  await server.sandbox.reset();
  key = (await server.sandbox.defaultKey('test'))!;
  waits = [];
});

afterEach(async () => {
  await proxy?.close();
});

describe('buying through faults', () => {
  it("a dropped response is retried with the same key: one purchase, this call's own, not reported as an earlier one", async () => {
    proxy = await startFaultProxy({ target: server.url, plan: ['drop', 'drop'], only: BUY });
    const result = await client(2).buy({ kg: 100 });
    // The server replayed the purchase the first, dropped attempt made: this call bought it.
    expect(result.replayed).toBe(false);
    expect(result.offset).toMatchObject({ object: 'offset', kg: 100, amount_cents: 400 });
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 400 });
    expect(proxy.requests.map((r) => r.fault)).toEqual(['drop', 'drop', 'forward']);
    const keys = new Set(proxy.requests.map((r) => r.idempotencyKey));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toBe(result.idempotencyKey);
  });

  it('a 503 is retried: one purchase', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: ['503', '503'], only: BUY });
    const result = await client(2).buy({ kg: 5 });
    expect(result.replayed).toBe(false);
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 20 });
    expect(proxy.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
  });

  it('a 429 is retried after Retry-After: one purchase', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: [{ status: 429, retryAfter: 2 }], only: BUY });
    const result = await client(2).buy({ kg: 5 });
    expect(result.replayed).toBe(false);
    expect((await purchases()).offsets).toBe(1);
    expect(waits).toEqual([2_000]);
  });

  it('a mix of every fault still ends with one purchase', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: ['drop', '503', '429', 'drop', '500'], only: BUY });
    const result = await client(5).buy({ kg: 7, reference: 'mixed' });
    expect(result.replayed).toBe(false);
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 28 });
    expect(proxy.requests).toHaveLength(6);
    expect(new Set(proxy.requests.map((r) => r.idempotencyKey)).size).toBe(1);
  });

  it('reads through the proxy are untouched when only purchases are faulted', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => 'drop', only: BUY });
    const c = client(0);
    expect((await c.balance()).available_cents).toBe(100_000);
    expect((await c.list()).data).toEqual([]);
    expect(proxy.requests.map((r) => r.fault)).toEqual(['forward', 'forward']);
  });
});

describe('when retries run out', () => {
  it('dropped every time: CarbonConnectionError, yet the purchase happened exactly once', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => 'drop', only: BUY });
    const err = await client(2)
      .buy({ kg: 9 }, { idempotencyKey: 'lost-forever' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarbonConnectionError);
    expect((err as Error).message).toMatch(/connection closed before a response arrived/);
    expect(proxy.requests).toHaveLength(3);
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 36 });
    // Retrying later with the same key finds it, and does not buy again.
    proxy.setPlan([]);
    const later = await client(0).buy({ kg: 9 }, { idempotencyKey: 'lost-forever' });
    expect(later.replayed).toBe(true);
    expect((await purchases()).offsets).toBe(1);
  });

  it('503 every time: CarbonApiError 503 service_unavailable, nothing bought', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => '503', only: BUY });
    const err = await client(2)
      .buy({ kg: 9 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarbonApiError);
    expect(err).toMatchObject({ status: 503, code: 'service_unavailable', type: 'api_error' });
    expect(proxy.requests).toHaveLength(3);
    expect(await purchases()).toEqual({ offsets: 0, balance: 100_000 });
  });

  it('429 every time: CarbonApiError 429 rate_limited with retryAfter, nothing bought', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => '429', only: BUY });
    const err = await client(3)
      .buy({ kg: 9 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 });
    expect(waits).toEqual([1_000, 1_000, 1_000]);
    expect((await purchases()).offsets).toBe(0);
    // Every attempt was refused before it was handled: the error says nothing can have been bought.
    expect((err as CarbonApiError).earlierMaybeSent).toBe(false);
  });

  it('a dropped answer, then 429 every time: the 429 says an earlier attempt may have bought (and it did)', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: (n) => (n === 0 ? 'drop' : '429'), only: BUY });
    const err = await client(2)
      .buy({ kg: 9 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', earlierMaybeSent: true });
    expect((await purchases()).offsets).toBe(1);
  });

  it('a Retry-After beyond the cap is not waited for', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: [{ status: 429, retryAfter: 3_600 }], only: BUY });
    const err = await client(3)
      .buy({ kg: 9 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, retryAfter: 3_600 });
    expect(waits).toEqual([]);
    expect(proxy.requests).toHaveLength(1);
  });

  it('the real server’s 429 is retried the same way', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: [] });
    await server.sandbox.setRateLimit(0);
    const err = await client(1)
      .buy({ kg: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1_000);
    expect((await purchases()).offsets).toBe(0);
  });
});

describe('CarbonClient.raw (carbon api): retried as every request, the last answer returned', () => {
  const purchase = { body: '{"kg": 5}', headers: { 'idempotency-key': 'raw-1' } };

  it('a 429 waits its Retry-After, a drop and a 503 are retried, all with one Idempotency-Key: one purchase', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: [{ status: 429, retryAfter: 2 }, 'drop', '503'], only: BUY });
    const { response } = await client(3).raw('POST', '/offsets', purchase);
    expect(response).toMatchObject({ status: 201, body: { object: 'offset', kg: 5 } });
    expect(waits[0]).toBe(2_000);
    expect(waits).toHaveLength(3);
    expect(proxy.requests.map((r) => r.idempotencyKey)).toEqual(['raw-1', 'raw-1', 'raw-1', 'raw-1']);
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 20 });
  });

  it('retries used up: the last 503 is the answer, not thrown; a 422 is an answer at once', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => '503', only: BUY });
    const { response, earlierMaybeSent } = await client(2).raw('POST', '/offsets', purchase);
    expect(response).toMatchObject({ status: 503, body: { error: { code: 'service_unavailable' } } });
    expect(earlierMaybeSent).toBe(true);
    expect(proxy.requests).toHaveLength(3);
    expect(await purchases()).toEqual({ offsets: 0, balance: 100_000 });
    const { response: invalid } = await client(2).raw('POST', '/quotes', { body: '{"kg": 0}' });
    expect(invalid).toMatchObject({ status: 422, body: { error: { code: 'validation_error' } } });
    expect(proxy.requests).toHaveLength(4);
    expect(waits).toHaveLength(2);
  });
});

describe('the fault proxy', () => {
  it('forwards to loopback only', async () => {
    await expect(startFaultProxy({ target: 'http://192.0.2.1:80/api/v1', plan: [] })).rejects.toThrow(/loopback/);
  });

  it('answers 502 in the envelope when the server is gone', async () => {
    proxy = await startFaultProxy({ target: 'http://127.0.0.1:9/api/v1', plan: [] });
    const r = await fetch(`${proxy.url}/balance`);
    expect(r.status).toBe(502);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('internal_error');
  });
});

describe('a fetch given to the transport (the library’s `fetch` option)', () => {
  it('sends every request, and a lost answer is the same error, with the same retries, as with node:http', async () => {
    proxy = await startFaultProxy({ target: server.url, plan: () => 'drop', only: BUY });
    const sent: string[] = [];
    const given: typeof fetch = (input, init) => {
      sent.push(`${init?.method} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    };
    const c = new CarbonClient({
      apiKey: key,
      transport: new HttpTransport({ baseUrl: proxy.url, timeoutMs: 5_000, fetch: given }),
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 },
      sleep: async (ms) => void waits.push(ms),
    });
    expect((await c.balance()).available_cents).toBe(100_000);
    const err = await c.buy({ kg: 9 }, { idempotencyKey: 'through-a-fetch' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarbonConnectionError);
    expect((err as Error).message).toMatch(/connection closed before a response arrived/);
    expect(sent).toEqual(['GET /api/v1/balance', 'POST /api/v1/offsets', 'POST /api/v1/offsets']);
    expect(await purchases()).toEqual({ offsets: 1, balance: 100_000 - 36 });
  });
});

describe('an answer that does not come (the per-request timeout, --timeout)', () => {
  /** A server that reads requests and, with `headers`, starts an answer; nothing more. */
  async function silent(headers: boolean): Promise<{ url: string; close: () => Promise<void> }> {
    const { createServer } = await import('node:http');
    const s = createServer((_req, res) => {
      if (headers) res.writeHead(200, { 'content-type': 'application/json' }).write('{"object":');
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const { port } = s.address() as { port: number };
    return {
      url: `http://127.0.0.1:${port}/api/v1`,
      close: () => new Promise((resolve) => s.close(() => resolve()).closeAllConnections()),
    };
  }

  for (const [name, given] of [
    ['node:http', undefined],
    ['a fetch given', fetch],
  ] as const) {
    for (const headers of [false, true]) {
      it(`${name}: ${headers ? 'a body that stops' : 'no answer at all'} is a CarbonConnectionError that says the timeout`, async () => {
        const s = await silent(headers);
        try {
          const transport = new HttpTransport({ baseUrl: s.url, timeoutMs: 100, ...(given === undefined ? {} : { fetch: given }) });
          const err = await transport
            .request({ method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' })
            .catch((e: unknown) => e);
          expect(err).toBeInstanceOf(CarbonConnectionError);
          expect((err as Error).message).toBe(`Could not reach ${new URL(s.url).origin}: timed out after 100 ms.`);
          // It may have been received: a retry of a purchase must reuse its key.
          expect((err as CarbonConnectionError).neverSent).toBe(false);
        } finally {
          await s.close();
        }
      });
    }
  }
});
