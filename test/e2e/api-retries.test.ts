import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { carbon, homes, ok, type Served, sandboxKeys, serve } from '../support/cli.js';

/**
 * `carbon api` retries as every command does (--max-retries, CARBON_MAX_RETRIES): through a real
 * `carbon serve` whose faults (`carbon sandbox faults`, seeded) answer a first attempt 503 or drop
 * its connection. Seeds 7, 8 and 9 at half the requests draw a fault for a setting's first request
 * and none for its second; each case sets its own route or seed, so its sequence starts again.
 * Retry-After is 0, so each retry waits only the client's backoff (about half a second).
 */

const newHome = homes();
let home: string;
let server: Served;
let env: Record<string, string>;

beforeAll(async () => {
  home = newHome();
  const keys = await sandboxKeys(home);
  server = await serve(home);
  env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test };
});
afterAll(() => server?.stop());
// Each test sets the faults it needs, in any order (the suite may run shuffled).
beforeEach(async () => {
  await ok(['sandbox', 'faults', 'off'], { home });
});

const faults = (...args: string[]) => ok(['sandbox', 'faults', 'set', '--retry-after', '0', ...args], { home });
/** The --verbose lines' statuses, attempt by attempt: `503 1`, `200 2`. */
const attempts = (stderr: string) =>
  [...stderr.matchAll(/^http: \S+ \S+ (\d+|no answer) \S+ (?:req_\w+ )?attempt (\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`);

describe('carbon api: retried as every command is', () => {
  test('a 503 then a 200: retried, and the 200 is what is printed, exit 0', async () => {
    await faults('--error-rate', '0.5', '--errors', '503', '--seed', '8', '--route', 'GET /balance');
    const r = await carbon(['api', 'GET', '/balance', '--verbose'], { home, env });
    expect(attempts(r.stderr)).toEqual(['503 1', '200 2']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ object: 'balance' });
  });

  test('retries used up: the last answer printed with its exit code; --max-retries 0 is one attempt; no answer is the network failure', async () => {
    await faults('--error-rate', '1', '--errors', '503', '--route', 'GET /balance');
    const once = await carbon(['api', 'GET', '/balance', '--verbose', '--max-retries', '0'], { home, env });
    expect(attempts(once.stderr)).toEqual(['503 1']);
    expect([once.exitCode, JSON.parse(once.stdout).error.code]).toEqual([1, 'service_unavailable']);
    expect(once.stderr).toContain('error: GET /balance answered 503 service_unavailable.');
    const twice = await carbon(['api', 'GET', '/balance', '--verbose'], { home, env: { ...env, CARBON_MAX_RETRIES: '1' } });
    expect(attempts(twice.stderr)).toEqual(['503 1', '503 2']);
    expect([twice.exitCode, JSON.parse(twice.stdout).error.code]).toEqual([1, 'service_unavailable']);

    // Never an answer: the network failure, said as `carbon balance` says it, nothing on stdout.
    await faults('--error-rate', '1', '--errors', 'drop-before', '--route', 'GET /balance');
    const dropped = await carbon(['api', 'GET', '/balance', '--verbose', '--max-retries', '1'], { home, env });
    expect(attempts(dropped.stderr)).toEqual(['no answer 1', 'no answer 2']);
    expect([dropped.exitCode, dropped.stdout]).toEqual([1, '']);
    const balance = await carbon(['balance', '--max-retries', '1'], { home, env });
    expect(dropped.stderr).toContain(balance.stderr.split('\n').find((line) => line.startsWith('error: ')));
  });

  test('POST /offsets whose answer was lost: retried with the same Idempotency-Key, so one purchase, charged once', async () => {
    const before = JSON.parse((await ok(['api', 'GET', '/balance'], { home, env })).stdout) as { available_cents: number };
    await faults('--error-rate', '0.5', '--errors', 'drop-after', '--seed', '8', '--route', 'POST /offsets');
    const r = await carbon(['api', 'POST', '/offsets', '-d', '{"kg": 5, "reference": "lost-answer"}', '--verbose'], { home, env });
    expect(attempts(r.stderr)).toEqual(['no answer 1', '201 2']);
    expect(r.exitCode).toBe(0);
    const offset = JSON.parse(r.stdout) as { id: string; kg: number; amount_cents: number };
    expect(offset.kg).toBe(5);
    await ok(['sandbox', 'faults', 'off'], { home });
    const list = JSON.parse((await ok(['api', 'GET', '/offsets?reference=lost-answer'], { home, env })).stdout);
    expect(list.data.map((o: { id: string }) => o.id)).toEqual([offset.id]);
    const after = JSON.parse((await ok(['api', 'GET', '/balance'], { home, env })).stdout) as { available_cents: number };
    expect(after.available_cents).toBe(before.available_cents - offset.amount_cents);
  });

  test.each([
    ['422', '{"kg": 0}', 7, 'validation_error', 2],
    ['400', '[]', 9, 'invalid_json', 2],
  ])('a %s is an answer: after a 503 it is retried to, never past', async (status, body, seed, code, exitCode) => {
    await faults('--error-rate', '0.5', '--errors', '503', '--seed', String(seed), '--route', 'POST /quotes');
    const r = await carbon(['api', 'POST', '/quotes', '-d', body, '--verbose', '--max-retries', '3'], { home, env });
    expect(attempts(r.stderr)).toEqual(['503 1', `${status} 2`]);
    expect([r.exitCode, JSON.parse(r.stdout).error.code]).toEqual([exitCode, code]);
  });

  test('POST /offsets with no answer after its retries: the Idempotency-Key to retry with, in the line and in --json; retried with it, one purchase', async () => {
    await faults('--error-rate', '1', '--errors', 'drop-after', '--route', 'POST /offsets');
    const data = '{"kg": 7, "reference": "unknown-outcome"}';
    const lost = await carbon(['api', 'POST', '/offsets', '-d', data, '--max-retries', '1'], { home, env });
    expect([lost.exitCode, lost.stdout]).toEqual([1, '']);
    const key = /--idempotency-key (\S+):/.exec(lost.stderr)?.[1];
    expect(lost.stderr).toContain('The purchase may or may not have been made.');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const asJson = await carbon(['api', 'POST', '/offsets', '-d', data, '--max-retries', '0', '--json'], { home, env });
    expect(JSON.parse(asJson.stderr).error).toMatchObject({
      code: 'connection_error',
      idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    // A 503 answer (after the purchase, for all the caller knows) names it too, with the body on stdout.
    await faults('--error-rate', '1', '--errors', '503', '--retry-after', '0', '--route', 'POST /offsets');
    const failed = await carbon(['api', 'POST', '/offsets', '-d', data, '--max-retries', '0', '--idempotency-key', 'mine-1'], {
      home,
      env,
    });
    expect([failed.exitCode, JSON.parse(failed.stdout).error.code]).toEqual([1, 'service_unavailable']);
    expect(failed.stderr).toContain('Retry safely with --idempotency-key mine-1');

    await ok(['sandbox', 'faults', 'off'], { home });
    const again = await ok(['api', 'POST', '/offsets', '-d', data, '--idempotency-key', key!], { home, env });
    const offset = JSON.parse(again.stdout) as { id: string };
    const list = JSON.parse((await ok(['api', 'GET', '/offsets?reference=unknown-outcome'], { home, env })).stdout);
    // The first attempt's purchase (its answer lost), and the --json run's: the retry with the key bought nothing new.
    expect(list.data).toHaveLength(2);
    expect(list.data.map((o: { id: string }) => o.id)).toContain(offset.id);
  });

  test('a refused POST /offsets (422, a reused key) is said as it is: no key to retry with', async () => {
    const invalid = await carbon(['api', 'POST', '/offsets', '-d', '{"kg": 0}'], { home, env });
    expect(invalid.exitCode).toBe(2);
    await ok(['api', 'POST', '/offsets', '-d', '{"kg": 3}', '--idempotency-key', 'reused-1'], { home, env });
    const reused = await carbon(['api', 'POST', '/offsets', '-d', '{"kg": 4}', '--idempotency-key', 'reused-1'], { home, env });
    expect([reused.exitCode, JSON.parse(reused.stdout).error.code]).toEqual([6, 'idempotency_key_reused']);
    for (const r of [invalid, reused]) {
      expect(r.stderr).not.toContain('--idempotency-key');
      expect(r.stderr).not.toContain('may or may not');
    }
  });
});

describe('carbon api: an error answer that is not JSON', () => {
  test('prints nothing on stdout (no made-up null), exit as its status says', async () => {
    const other = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>boom</h1>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/api/v1`;
      const r = await carbon(['api', 'GET', '/balance', '--max-retries', '0'], {
        home,
        env: { CARBON_BASE_URL: url, CARBON_API_KEY: 'ck_test_abcdefghijklmnop' },
      });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([1, '', 'error: GET /balance answered 500 http_error.\n']);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});

describe('carbon api: an error answer that echoes the key it was sent', () => {
  test('is printed with the key masked, on stdout and in the --json envelope, as every command masks it', async () => {
    const key = 'ck_test_sandboxbpYAfhUFQ7s1hrtmefWtM5R17';
    const echo = createServer((req, res) => {
      req.resume();
      const message = `Invalid API key provided: ${req.headers.authorization}`;
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { type: 'authentication_error', code: 'api_key_invalid', message } }));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/api/v1`;
      const r = await carbon(['api', 'GET', '/balance', '--json'], { home, env: { CARBON_BASE_URL: url, CARBON_API_KEY: key } });
      expect(r.exitCode).toBe(4);
      expect(`${r.stdout}${r.stderr}`).not.toContain(key.slice(8));
      expect(JSON.parse(r.stdout).error.message).toBe('Invalid API key provided: Bearer ck_test_…5R17');
      expect(JSON.parse(r.stderr).error.message).toBe('Invalid API key provided: Bearer ck_test_…5R17');
    } finally {
      await new Promise((resolve) => echo.close(resolve));
    }
  });
});
