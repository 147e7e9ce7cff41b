import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { CarbonClient } from '../../src/client/client.js';
import { CarbonAnswerError, CarbonConfigError, CarbonConnectionError, retryAfterSeconds } from '../../src/client/errors.js';
import { openLocal } from '../../src/engine/local.js';

/**
 * CarbonClient as a library's caller meets it: a policy given with a field unset keeps its
 * default, the key a failed purchase was sent with comes back on its error, the key never shows in
 * a log of the client, and an answer of another service is not asked again.
 */

const KEY = 'ck_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ123456';

/** A client whose every request fails as `fail` says; how many requests were made. */
function failing(fail: () => Error, retry?: ConstructorParameters<typeof CarbonClient>[0]['retry']) {
  let calls = 0;
  const client = new CarbonClient({
    apiKey: KEY,
    sleep: async () => {},
    ...(retry === undefined ? {} : { retry }),
    transport: {
      async request(_request: ApiRequest): Promise<ApiResponse> {
        calls++;
        throw fail();
      },
    },
  });
  return { client, calls: () => calls };
}

describe('CarbonClient as a library', () => {
  test('Retry-After as an HTTP date is counted from now: decades away ends the retries as 3600 s does; a past one is no wait', async () => {
    const at = 'Wed, 21 Oct 2015 07:28:00 GMT';
    expect(retryAfterSeconds(at, Date.parse('2015-10-21T07:27:00.500Z'))).toBe(60);
    expect(retryAfterSeconds(at, Date.parse('2015-10-22T00:00:00Z'))).toBe(0);
    // Not a date: Date.parse would read `-5` and `1.5` as years and days.
    for (const none of ['-5', '1.5', 'abc', '', 'soon']) expect(retryAfterSeconds(none), none).toBeUndefined();
    for (const [header, requests] of [
      ['Wed, 21 Oct 2099 07:28:00 GMT', 1],
      ['3600', 1],
      [at, 3],
      ['0', 3],
    ] as const) {
      let calls = 0;
      const client = new CarbonClient({
        apiKey: KEY,
        sleep: async () => {},
        transport: {
          async request(): Promise<ApiResponse> {
            calls++;
            const error = { type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests.' };
            return { status: 429, headers: { 'retry-after': header }, body: { error } };
          },
        },
      });
      await expect(client.balance()).rejects.toMatchObject({ status: 429 });
      expect([header, calls]).toEqual([header, requests]);
    }
  });

  test('a retry policy with a field left undefined keeps its default (2 retries); NaN, Infinity, -1 and 1.5 retries are refused', async () => {
    const unset = failing(() => new CarbonConnectionError('the connection was dropped'), { maxRetries: undefined });
    await expect(unset.client.balance()).rejects.toBeInstanceOf(CarbonConnectionError);
    expect(unset.calls()).toBe(3);
    for (const maxRetries of [Number.NaN, Number.POSITIVE_INFINITY, -1, 1.5])
      expect(() => failing(() => new Error(), { maxRetries })).toThrow(CarbonConfigError);
    expect(() => failing(() => new Error(), { maxDelayMs: Number.NaN })).toThrow(
      /retry\.maxDelayMs must be a number of 0 or more, not NaN/,
    );
    // No policy at all (null, from JavaScript) is the defaults, as before.
    const none = failing(() => new CarbonConnectionError('the connection was dropped'), null as unknown as undefined);
    await expect(none.client.balance()).rejects.toBeInstanceOf(CarbonConnectionError);
    expect(none.calls()).toBe(3);
  });

  test('a purchase whose outcome is unknown throws with the Idempotency-Key it was sent with, the one the client made included', async () => {
    const made = failing(() => new CarbonConnectionError('the connection was dropped'));
    const err = await made.client.buy({ kg: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarbonConnectionError);
    expect((err as CarbonConnectionError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const given = await made.client.buy({ kg: 5 }, { idempotencyKey: 'order-7' }).catch((e: unknown) => e);
    expect((given as CarbonConnectionError).idempotencyKey).toBe('order-7');
  });

  test('console.log and JSON.stringify of a client show its key masked, never whole', () => {
    const { client } = failing(() => new Error());
    for (const shown of [inspect(client, { depth: 20 }), JSON.stringify(client), String(JSON.stringify({ client }))]) {
      expect(shown).not.toContain('ABCDEFGHIJ');
      expect(shown).toContain('…3456');
    }
  });

  test('an answer of another service (CarbonAnswerError) is not asked again; no answer is, as before', async () => {
    const other = failing(() => new CarbonAnswerError('answered 200 with a body that is not JSON; is the base URL right?', 200));
    await expect(other.client.balance()).rejects.toBeInstanceOf(CarbonAnswerError);
    expect(other.calls()).toBe(1);
    // --verbose is told of it, with the status the answer had.
    const told: number[] = [];
    const verbose = new CarbonClient({
      apiKey: KEY,
      onExchange: (x) => told.push(x.status),
      transport: {
        async request(): Promise<ApiResponse> {
          throw new CarbonAnswerError('answered 200 with a body that is not JSON; is the base URL right?', 200);
        },
      },
    });
    await expect(verbose.balance()).rejects.toBeInstanceOf(CarbonAnswerError);
    expect(told).toEqual([200]);
  });

  test('waitUntilSettled refuses an interval or a timeout that is no number of milliseconds (an unset variable read as NaN)', async () => {
    const { client, calls } = failing(() => new Error('not asked'));
    for (const options of [{ intervalMs: Number.NaN }, { intervalMs: 0 }, { intervalMs: -5 }, { timeoutMs: Number.NaN }])
      await expect(client.waitUntilSettled('off_1', options)).rejects.toBeInstanceOf(CarbonConfigError);
    expect(calls()).toBe(0);
    // Infinity is no time limit: taken.
    const placed = new CarbonClient({
      apiKey: KEY,
      transport: {
        async request(): Promise<ApiResponse> {
          return {
            status: 200,
            headers: {},
            body: { object: 'offset', id: 'off_1', status: 'placed', kg: 1, amount_cents: 4, rate_millicents_per_kg: 4000 },
          };
        },
      },
    });
    expect((await placed.waitUntilSettled('off_1', { timeoutMs: Number.POSITIVE_INFINITY })).status).toBe('placed');
  });

  test('openLocal refuses an empty data directory (an unset variable), as the client refuses an empty key', async () => {
    await expect(openLocal('')).rejects.toThrow(/No data directory \(an unset variable\?\)/);
  });
});
