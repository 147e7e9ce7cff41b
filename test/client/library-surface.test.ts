import { inspect } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { ApiError, CarbonClient, CarbonConfigError, DEFAULT_RETRY, HttpTransport, LedgerError, openLocal } from '../../src/index.js';
import { tempDirs } from '../support/temp.js';

/**
 * The library as a JavaScript caller meets it (types give no protection there): what it refuses,
 * before anything is sent, and what its objects show. Each was once a quiet wrong answer.
 */

const dirs = tempDirs('carbon-library-');
afterAll(() => dirs.removeAll());

test('an idempotencyKey that is not text is refused before anything is sent (an object went out as "[object Object]", one key for two purchases)', async () => {
  const { client } = await openLocal(dirs.make());
  try {
    for (const key of [{ orderId: 'A-1' }, 42, null] as unknown as string[])
      await expect(client.buy({ kg: 1 }, { idempotencyKey: key })).rejects.toThrow(CarbonConfigError);
    await expect(client.buy({ kg: 1 }, { idempotencyKey: { orderId: 'A-1' } as unknown as string })).rejects.toThrow(
      'idempotencyKey must be a string, not an object; nothing was sent.',
    );
    expect((await client.list()).data).toEqual([]);
  } finally {
    await client.close();
  }
});

test('the local engine answers a number where text goes as HTTP would carry it (it threw TypeError)', async () => {
  const { client } = await openLocal(dirs.make());
  try {
    await expect(client.list({ starting_after: 123 as unknown as string })).rejects.toMatchObject({
      status: 404,
      code: 'resource_missing',
    });
    expect((await client.list({ reference: 5 as unknown as string })).data).toEqual([]);
  } finally {
    await client.close();
  }
});

test("openLocal's key names one of the sandbox's own keys, or is refused before the ledger is opened", async () => {
  const dir = dirs.make();
  await expect(openLocal(dir, { key: 'bogus' as 'test' })).rejects.toThrow('key is test, live or read_only');
});

test("HttpTransport's timeoutMs is a whole number of milliseconds a timer takes, or refused at once", () => {
  for (const timeoutMs of [Number.NaN, -1, 0, 1.5, Number.POSITIVE_INFINITY, 2 ** 32, '5' as unknown as number])
    expect(() => new HttpTransport({ baseUrl: 'http://127.0.0.1:1/api/v1', timeoutMs })).toThrow(CarbonConfigError);
  expect(() => new HttpTransport({ baseUrl: 'http://127.0.0.1:1/api/v1', timeoutMs: 250 })).not.toThrow();
});

test("the Sandbox's refusals are ApiError, exported; a top-up to a mode that is none is refused, not made to test", async () => {
  const { client, sandbox } = await openLocal(dirs.make());
  try {
    await expect(sandbox.approve('off_nope')).rejects.toBeInstanceOf(ApiError);
    const before = await sandbox.status();
    await expect(sandbox.topUp('Live' as 'live', 30_000)).rejects.toMatchObject({ status: 422, code: 'validation_error' });
    expect((await sandbox.status()).balances).toEqual(before.balances);
  } finally {
    await client.close();
  }
});

test('closed either way, both closes are fine, and what is used after says it was closed', async () => {
  const { client, sandbox } = await openLocal(dirs.make());
  await sandbox.close();
  await client.close();
  await expect(sandbox.status()).rejects.toBeInstanceOf(LedgerError);
  await expect(sandbox.topUp('test', 30_000)).rejects.toThrow(/was closed in this process/);
});

test('no inspect of the sandbox, however deep, shows a key whole', async () => {
  const { client, sandbox } = await openLocal(dirs.make());
  try {
    const key = (await sandbox.defaultKey('test'))!;
    await client.balance();
    expect(inspect(sandbox, { depth: 8 })).not.toContain(key.slice(8));
  } finally {
    await client.close();
  }
});

test('DEFAULT_RETRY cannot be changed for every client; a value of the wrong type is said as given', () => {
  expect(() => {
    (DEFAULT_RETRY as { maxRetries: number }).maxRetries = 0;
  }).toThrow(TypeError);
  expect(DEFAULT_RETRY.maxRetries).toBe(2);
  const transport = new HttpTransport({ baseUrl: 'http://127.0.0.1:1/api/v1' });
  expect(() => new CarbonClient({ apiKey: 'ck_test_x', transport, retry: { maxRetries: '3' as unknown as number } })).toThrow(
    'retry.maxRetries must be a whole number of 0 or more, not "3".',
  );
});
