import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok, serve } from '../support/cli.js';

/**
 * Bad input changes nothing, the first time too: in a home with no sandbox yet, a request the
 * model would refuse as malformed whatever its ledger held is refused by the model's own checks
 * without creating the ledger (no data/ledger.db, no sandbox-keys.json), with the line and the
 * exit code the model's answer gets. Against a server, the server's own answer is what is seen.
 */

const newHome = homes();

/** What a home holds under data/ (nothing at all: not even the directory). */
function dataFiles(home: string): string[] {
  try {
    return readdirSync(join(home, 'data'));
  } catch {
    return [];
  }
}

const KG = 'error: kg must be a whole number from 1 to 1,000,000. (param: kg)\n';
const CENTS = 'error: amount_cents must be a whole number from 1 to 5,000,000. (param: amount_cents)\n';
const REFERENCE = 'error: reference must be 1 to 200 characters long. (param: reference)\n';
const EMPTY_ID = 'error: The <id> given is empty: give the offset id (off_…); nothing was done.\n';

const REFUSED: Array<[string[], number, string]> = [
  [['buy', '--kg', '-5'], 2, KG],
  [['buy', '--kg', '0'], 2, KG],
  [['buy', '--kg', '1.5'], 2, KG],
  [['buy', '--amount-cents', '99999999'], 2, CENTS],
  [['buy', '--kg', '5', '--reference', ''], 2, REFERENCE],
  [
    ['buy', '--kg', '5', '--idempotency-key', ' padded'],
    2,
    'error: The Idempotency-Key header must be 1 to 255 characters of UTF-8 text, without control characters or white space at either end.\n',
  ],
  [['buy', '--kg', '-5', '--dry-run'], 2, KG],
  [['buy', '--kg', '-5', '--max-cents', '100'], 2, KG],
  [['buy', '--kg', '-5', '--live', '--yes'], 2, KG],
  [['quote', '--kg', '99999999999'], 2, KG],
  [['quote', '--amount-cents', '0'], 2, CENTS],
  [['list', '--reference', ''], 2, REFERENCE],
  [['list', '--starting-after', ''], 2, 'error: starting_after must be an offset ID. (param: starting_after)\n'],
  // An empty id (`carbon show "$ID"` with $ID unset) is the script's mistake: a usage error, not a 404 (exit 5), whatever the command.
  [['show', ''], 2, EMPTY_ID],
  [['show', ' '], 2, EMPTY_ID],
  [['sandbox', 'fail', ''], 2, EMPTY_ID],
  [['sandbox', 'review', 'approve', ''], 2, EMPTY_ID],
  [['open', ''], 2, 'error: The <id> given is empty: give a placed live offset (off_…); nothing was done.\n'],
  [
    ['sandbox', 'keys', 'revoke', ''],
    2,
    "error: The <id> given is empty: give the key's id (key_…), from `carbon sandbox keys`; nothing was done.\n",
  ],
  [
    ['logs', 'show', ''],
    2,
    'error: The <request-id> given is empty: give the Request-Id (req_…), from carbon logs or a response; nothing was done.\n',
  ],
];

describe('a home with no sandbox yet: a malformed request creates none', () => {
  test.each(REFUSED)("carbon %j → exit %i, the model's line, nothing on stdout, no data/ files", async (args, code, line) => {
    const home = newHome();
    const r = await carbon(args, { home });
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([code, '', line]);
    expect(dataFiles(home)).toEqual([]);
  });

  test("--json: the API's error object, and still nothing created", async () => {
    const home = newHome();
    const r = await carbon(['buy', '--kg', '-5', '--json'], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(JSON.parse(r.stderr)).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'validation_error',
        message: 'kg must be a whole number from 1 to 1,000,000.',
        param: 'kg',
      },
    });
    expect(dataFiles(home)).toEqual([]);
  });

  test("carbon api: the model's 422 and 404 answers printed, nothing created; with --json, stderr the API's envelope whole", async () => {
    const home = newHome();
    const bad = await carbon(['api', 'POST', '/offsets', '-d', '{"kg":0}'], { home });
    expect([bad.exitCode, bad.stderr]).toEqual([2, 'error: POST /offsets answered 422 validation_error.\n']);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'validation_error', param: 'kg' } });
    // With --json, stderr carries the API's envelope whole (its message, its param), as every command's does.
    const said = await carbon(['api', 'POST', '/offsets', '-d', '{"kg":0}', '--json'], { home });
    expect([said.exitCode, JSON.parse(said.stderr)]).toEqual([2, JSON.parse(said.stdout)]);
    expect(JSON.parse(said.stderr)).toMatchObject({ error: { type: 'invalid_request_error', code: 'validation_error', param: 'kg' } });
    const nowhere = await carbon(['api', 'GET', '/nope'], { home });
    // An address the API does not serve is exit 1, not 5 ("no such offset"): README, "Exit codes".
    expect([nowhere.exitCode, nowhere.stderr]).toEqual([1, 'error: GET /nope answered 404 route_missing.\n']);
    expect(dataFiles(home)).toEqual([]);
    // A well-formed purchase the balance cannot pay: the 402's balance_cents and required_cents too.
    const short = await carbon(['api', 'POST', '/offsets', '-d', '{"kg":900000}', '--json'], { home });
    expect([short.exitCode, JSON.parse(short.stderr)]).toEqual([3, JSON.parse(short.stdout)]);
    expect(JSON.parse(short.stderr).error).toMatchObject({ code: 'insufficient_balance', balance_cents: 100000, required_cents: 3600000 });
  });

  test('a well-formed request creates the sandbox as before, and the same refusal is then journaled', async () => {
    const home = newHome();
    expect((await json<{ kg: number }>(['quote', '--kg', '5'], { home })).kg).toBe(5);
    expect(dataFiles(home)).toContain('ledger.db');
    const r = await carbon(['buy', '--kg', '-5'], { home });
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', KG]);
    const entries = (await ok(['logs', '--json'], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries[0]).toMatchObject({ method: 'POST', path: '/api/v1/offsets', status: 422, error: { code: 'validation_error' } });
  });
});

const TOP_UP =
  'error: A top-up is a whole number of cents from 25000 cents ($250.00) to 100000000000 cents ($1,000,000,000.00). (param: amount_cents)\n';

/** The sandbox's settings, refused by the model's own bounds (service/settings.ts) before the ledger is opened. */
const SANDBOX_REFUSED: Array<[string[], string]> = [
  // Given in dollars, said in dollars; given in cents, in cents.
  [['sandbox', 'topup', '249.99'], 'error: A top-up is from $250.00 to $1,000,000,000.00; $249.99 is less.\n'],
  [['sandbox', 'topup', '1000000000.01', '--live'], 'error: A top-up is from $250.00 to $1,000,000,000.00; $1,000,000,000.01 is more.\n'],
  [['sandbox', 'topup', '--cents', '1', '--live'], TOP_UP],
  [
    ['sandbox', 'rate', '99999999'],
    'error: The rate is a whole number of millicents per kg from 1 to 10,000,000. (param: rate_millicents_per_kg)\n',
  ],
  [
    ['sandbox', 'rate-limit', '5', '--window', '2d'],
    'error: The window is a whole number of milliseconds from 1 to 86,400,000 (a day). (param: window)\n',
  ],
  [
    ['sandbox', 'faults', 'set', '--error-rate', '0.5', '--errors', 'nope'],
    'error: The faults are one or more of 429, 500, 503, drop-before, drop-after, not "nope". (param: errors)\n',
  ],
  [
    ['sandbox', 'faults', 'set', '--error-rate', '0'],
    'error: Nothing to inject: give an error rate above 0, or a latency. (param: error_rate)\n',
  ],
];

describe('carbon sandbox in a home with no sandbox yet: a setting out of bounds makes none', () => {
  test.each(SANDBOX_REFUSED)("carbon %j → exit 2, the model's line, no data/ files", async (args, line) => {
    const home = newHome();
    const r = await carbon(args, { home });
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', line]);
    expect(dataFiles(home)).toEqual([]);
  });

  test('with a base URL, the command still says first that it acts on the local model', async () => {
    const home = newHome();
    const r = await carbon(['sandbox', 'topup', '1'], { home, env: { CARBON_BASE_URL: 'http://127.0.0.1:9/api/v1' } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error: carbon sandbox topup acts on the local model, but this command is set to use the remote API/);
  });
});

describe('against carbon serve', () => {
  test("the server's own answer, which the server journals; the client's home stays empty", async () => {
    const served = newHome();
    const server = await serve(served, ['--show-keys']);
    const home = newHome();
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    const r = await carbon(['buy', '--kg', '-5'], { home, env });
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', KG]);
    expect(dataFiles(home)).toEqual([]);
    const entries = (await ok(['logs', '--json'], { home, env })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries[0]).toMatchObject({ method: 'POST', status: 422, error: { code: 'validation_error' } });
    await server.stop();
  });
});
