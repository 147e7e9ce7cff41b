import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, leakedKeys, ok, type Run, type RunOptions, sandboxKeys, serve, spawnCarbon } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Each documented exit code from a real cause, on both engines: the local model in-process, and
 * the remote engine over HTTP to a `carbon serve` of the same CARBON_HOME (so `carbon sandbox …`
 * drives the served model too). Every failure also shows the error contract: nothing on stdout,
 * one line on stderr, and with --json one error envelope line.
 */

const newHome = homes();

type Engine = 'local' | 'remote';

interface World {
  home: string;
  /** Runs a command on the engine under test (a test key unless `key` says otherwise). */
  run(args: string[], options?: { key?: 'test' | 'live' | 'read_only'; env?: Record<string, string> }): Promise<Run>;
  /** Runs a sandbox (admin) command on the local model of the same CARBON_HOME. */
  admin(args: string[]): Promise<Run>;
}

async function world(engine: Engine): Promise<World> {
  const home = newHome();
  const admin = (args: string[]) => ok(args, { home });
  if (engine === 'local') {
    return {
      home,
      admin,
      run: async (args, o = {}) => {
        const keys = o.key === undefined || o.key === 'test' ? undefined : await sandboxKeys(home);
        const env: RunOptions['env'] = { ...o.env };
        if (o.key === 'live') env.CARBON_API_KEY = keys!.live;
        if (o.key === 'read_only') env.CARBON_API_KEY = keys!.readOnly;
        return carbon(args, { home, env });
      },
    };
  }
  const server = await serve(home);
  const keys = await sandboxKeys(home);
  return {
    home,
    admin,
    run: (args, o = {}) =>
      carbon(args, {
        home,
        env: {
          CARBON_BASE_URL: server.url,
          CARBON_API_KEY: o.key === 'live' ? keys.live : o.key === 'read_only' ? keys.readOnly : keys.test,
          ...o.env,
        },
      }),
  };
}

/** The error contract of a failed command, in both forms. */
async function expectFailure(
  w: World,
  args: string[],
  code: number,
  errorCode: string,
  options: Parameters<World['run']>[1] = {},
): Promise<string> {
  const human = await w.run(args, options);
  expect(human.exitCode, human.stderr).toBe(code);
  expect(human.stdout).toBe('');
  const lines = human.stderr.trimEnd().split('\n');
  expect(
    lines.filter((l) => !l.startsWith('warning:')),
    human.stderr,
  ).toHaveLength(1);
  expect(human.stderr).toMatch(/^error: /m);
  expect(human.stderr).not.toMatch(/^\s+at /m);

  const machine = await w.run([...args, '--json'], options);
  expect(machine.exitCode).toBe(code);
  expect(machine.stdout).toBe('');
  const envelope = machine.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('warning:'));
  expect(envelope).toHaveLength(1);
  const parsed = JSON.parse(envelope[0]!) as { error: { type: string; code: string; message: string } };
  expect(parsed.error.code).toBe(errorCode);
  expect(typeof parsed.error.message).toBe('string');
  return human.stderr;
}

/** A loopback port with nothing listening: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A test that runs a dozen commands one after another, beside the rest of this file's tests at once: a hang is caught at this. */
const SLOW = limit(120_000);

describe.concurrent.each<Engine>(['local', 'remote'])('exit codes, %s engine', (engine) => {
  test('0: a purchase', async () => {
    const w = await world(engine);
    const r = await w.run(['buy', '--kg', '500', '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ object: 'offset', kg: 500, amount_cents: 2000, livemode: false, status: 'processing' });
  });

  test('2: bad options, a 400 and 422s (validation_error with its param, amount_too_small)', { timeout: SLOW }, async () => {
    const w = await world(engine);
    expect(await expectFailure(w, ['buy'], 2, 'usage_error')).toContain('--kg');
    await expectFailure(w, ['buy', '--kg', '5', '--amount-cents', '5'], 2, 'usage_error');
    await expectFailure(w, ['buy', '--kg', 'lots'], 2, 'usage_error');
    await expectFailure(w, ['buy', '--kg', '5', '--nope'], 2, 'usage_error');
    await expectFailure(w, ['show'], 2, 'usage_error');
    await expectFailure(w, ['list', '--format', 'xml'], 2, 'usage_error');
    expect(await expectFailure(w, ['buy', '--kg', '0'], 2, 'validation_error')).toContain('(param: kg)');
    expect(await expectFailure(w, ['quote', '--kg', '1000001'], 2, 'validation_error')).toContain('(param: kg)');
    expect(await expectFailure(w, ['buy', '--amount-cents', '1'], 2, 'amount_too_small')).toContain('(param: amount_cents)');
    // Dollars over the API's bound are said in the dollars typed, naming the flag (the API would name amount_cents).
    expect(await expectFailure(w, ['quote', '--amount', '50000.01'], 2, 'usage_error')).toBe(
      'error: --amount is at most $50,000.00 (the API\'s amount_cents, 5,000,000), not "50000.01".\n',
    );
    expect((await w.run(['quote', '--amount', '50000'])).exitCode).toBe(0);
    // The page size is judged by carbon, naming its flag (the API's 422 names `limit`, another flag's name).
    expect(await expectFailure(w, ['list', '--page-size', '101'], 2, 'usage_error')).toContain(
      '--page-size must be a whole number from 1 to 100, not "101".',
    );
    // 400: an Idempotency-Key longer than 255 characters.
    await expectFailure(w, ['buy', '--kg', '1', '--idempotency-key', 'k'.repeat(256)], 2, 'idempotency_key_invalid');
    // Nothing was bought by any of them.
    expect((await json(['impact'], { home: w.home })).offsets).toBe(0);
  });

  test('3: 402 insufficient_balance, with the balance and the cost', async () => {
    const w = await world(engine);
    const line = await expectFailure(w, ['buy', '--kg', '1000000'], 3, 'insufficient_balance');
    expect(line).toContain(
      `The test balance ($1,000.00) does not cover this purchase ($40,000.00). ${engine === 'local' ? 'Top it up with `carbon sandbox topup 39000`' : 'Top up the test balance on the developer page'}.`,
    );
    const r = await w.run(['buy', '--kg', '1000000', '--json']);
    expect(JSON.parse(r.stderr).error).toMatchObject({ balance_cents: 100_000, required_cents: 4_000_000 });
  });

  test('4: a revoked key (401), a suspended account and a read-only key (403)', { timeout: SLOW }, async () => {
    const w = await world(engine);
    await expectFailure(w, ['buy', '--kg', '1'], 4, 'insufficient_permissions', { key: 'read_only' });
    await w.admin(['sandbox', 'account', 'suspended']);
    await expectFailure(w, ['balance'], 4, 'api_access_inactive');
    await w.admin(['sandbox', 'account', 'active']);
    expect((await w.run(['balance'])).exitCode).toBe(0);
    const testKey = (await sandboxKeys(w.home)).test;
    const keys = await json<Array<{ id: string; default: string | null }>>(['sandbox', 'keys'], { home: w.home });
    await w.admin(['sandbox', 'keys', 'revoke', keys.find((k) => k.default === 'test')!.id]);
    await expectFailure(w, ['balance'], 4, 'api_key_revoked', { env: { CARBON_API_KEY: testKey } });
    if (engine === 'local') {
      // With no key configured, the local engine has no active test key left to use: it says so.
      expect(await expectFailure(w, ['balance'], 4, 'api_key_missing')).toContain('carbon sandbox keys create');
      const created = await w.admin(['sandbox', 'keys', 'create']);
      expect(created.exitCode).toBe(0);
      expect((await w.run(['balance'])).exitCode).toBe(0);
    }
  });

  test('5: an unknown offset', async () => {
    const w = await world(engine);
    expect(await expectFailure(w, ['show', 'off_doesnotexist0000000000'], 5, 'resource_missing')).toContain('off_doesnotexist');
  });

  test('6: the same --idempotency-key with a different body; the same body replays', async () => {
    const w = await world(engine);
    const first = await w.run(['buy', '--kg', '10', '--idempotency-key', 'order-42', '--json']);
    expect(first.exitCode).toBe(0);
    const replay = await w.run(['buy', '--kg', '10', '--idempotency-key', 'order-42']);
    expect(replay.exitCode).toBe(0);
    expect(replay.stderr).toContain('Already bought with this idempotency key');
    expect(replay.stdout).toContain(`id\t${JSON.parse(first.stdout).id}`);
    // Said on stderr in every format: --json's stdout stays the API's object, the first one's.
    expect(first.stderr).toBe('');
    const replayJson = await w.run(['buy', '--kg', '10', '--idempotency-key', 'order-42', '--json']);
    expect(replayJson.exitCode).toBe(0);
    // (its status may have moved on: test offsets place after 3 s)
    const fields = (o: Record<string, unknown>) => [o.object, o.id, o.kg, o.amount_cents, o.created, o.livemode];
    expect(fields(JSON.parse(replayJson.stdout))).toEqual(fields(JSON.parse(first.stdout)));
    expect(replayJson.stderr).toMatch(
      /^↺ Already bought with this idempotency key: 10 kg for \$[\d.]+ \(off_\w+\); nothing new was charged\.\n$/,
    );
    const replayQuiet = await w.run(['buy', '--kg', '10', '--idempotency-key', 'order-42', '--quiet']);
    expect([replayQuiet.exitCode, replayQuiet.stdout]).toEqual([0, `${JSON.parse(first.stdout).id}\n`]);
    expect(replayQuiet.stderr).toContain('Already bought with this idempotency key');
    await expectFailure(w, ['buy', '--kg', '11', '--idempotency-key', 'order-42'], 6, 'idempotency_key_reused');
    expect((await json(['impact'], { home: w.home })).offsets).toBe(1);
  });

  test('7: rate limited, no retries left', async () => {
    const w = await world(engine);
    await w.admin(['sandbox', 'rate-limit', '0']);
    const line = await expectFailure(w, ['balance', '--max-retries', '0'], 7, 'rate_limited');
    expect(line).toMatch(/Retry after \d+ s/);
  });

  test('8: --wait times out on a live purchase still processing; the offset is still printed', async () => {
    const w = await world(engine);
    await w.admin(['sandbox', 'topup', '250', '--live']);
    // Held for review (a limit of $0): processing for both waits however long they take (unheld, a minute places it).
    await w.admin(['sandbox', 'review-limit', '0']);
    const started = Date.now();
    const r = await w.run(['buy', '--kg', '10', '--yes', '--wait', '--timeout', '1', '--json'], { key: 'live' });
    expect(r.exitCode, r.stderr).toBe(8);
    // Ended by --timeout 1 (10 s on a quiet machine).
    expect(Date.now() - started).toBeLessThan(limit(10_000));
    // The purchase happened: a script needs its id to follow it (`carbon show ID --wait`).
    const offset = JSON.parse(r.stdout);
    expect(offset).toMatchObject({ object: 'offset', livemode: true, status: 'processing' });
    expect(JSON.parse(r.stderr.trim()).error.code).toBe('wait_timeout');
    const human = await w.run(['show', offset.id, '--wait', '--timeout', '1'], { key: 'live' });
    expect(human.exitCode).toBe(8);
    expect(human.stderr.trim().split('\n')).toHaveLength(1);
    expect(human.stderr).toContain(`carbon show ${offset.id} --wait`);
  });
});

describe('exit 1', () => {
  test('the remote engine pointed at a closed loopback port, no retries', async () => {
    const home = newHome();
    const port = await closedPort();
    const env = { CARBON_BASE_URL: `http://127.0.0.1:${port}/api/v1`, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` };
    for (const args of [
      ['balance', '--max-retries', '0'],
      ['balance', '--max-retries', '0', '--json'],
    ]) {
      const r = await carbon(args, { home, env });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // The connection was refused: nothing was sent, so the buy says plainly that nothing was bought.
    const r = await carbon(['buy', '--kg', '5', '--max-retries', '0'], { home, env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('Nothing was sent, so nothing was bought.');
  });

  test('a config file that is not JSON', async () => {
    const home = newHome();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${home}/config.json`, '{ not json');
    const r = await carbon(['balance'], { home });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('config.json cannot be used');
  });
});

describe('stack traces', () => {
  test('only with CARBON_DEBUG=1', async () => {
    const home = newHome();
    const quiet = await carbon(['show', 'off_nope'], { home });
    expect(quiet.stderr).not.toMatch(/^\s+at /m);
    const debug = await carbon(['show', 'off_nope'], { home, env: { CARBON_DEBUG: '1' } });
    expect(debug.exitCode).toBe(5);
    expect(debug.stdout).toBe('');
    expect(debug.stderr).toMatch(/^error: No such offset/m);
    expect(debug.stderr).toMatch(/^\s+at /m);
  });

  test('mask a key the message repeats, as the line above them does: a debug log is a log too', async () => {
    const home = newHome();
    const { test: key } = await sandboxKeys(home);
    // A key pasted where a number goes: the message quotes what was typed.
    const debug = await carbon(['buy', '--kg', key], { home, env: { CARBON_DEBUG: '1' } });
    expect(debug.exitCode).toBe(2);
    expect(debug.stderr).toMatch(/^\s+at /m);
    expect(debug.stderr).toContain(`not "${key.slice(0, 8)}…${key.slice(-4)}"`);
    expect(leakedKeys(debug.stderr, [key])).toEqual([]);
  });

  test('mask every secret typed where something else was expected: a key in a CSV cell, a signing secret, a URL password', async () => {
    const home = newHome();
    const { test: key } = await sandboxKeys(home);
    const csv = join(home, 'keyed.csv');
    writeFileSync(csv, `reference,kg\nx,${key}\n`);
    const rows = await carbon(['buy', '--from-csv', csv], { home });
    expect(rows.exitCode).toBe(2);
    expect(rows.stderr).toContain(
      `row 1 (line 2): kg must be a whole number such as 500 or 1,000, not "${key.slice(0, 8)}…${key.slice(-4)}"`,
    );
    expect(leakedKeys(rows.stderr, [key])).toEqual([]);
    const signing = 'whsec__EH5qbuq69d-eQDUkqKP0Xsk1yOUM0iLSoMUf383Oto';
    const password = 'SuperSecret123';
    for (const [args, shown] of [
      [['show', signing], "No such offset: 'whsec_…3Oto'."],
      [['show', `postgres://u:${password}@127.0.0.1:1/db`], "No such offset: 'postgres://u:***@127.0.0.1:1/db'."],
      [['--profile', `postgres://u:${password}@h/db`, 'balance'], 'postgres://u:***@h/db'],
    ] as const) {
      const r = await carbon([...args], { home });
      expect(r.stderr, args.join(' ')).toContain(shown);
      expect(r.stderr).not.toContain(password);
      expect(r.stderr).not.toContain(signing.slice(6, 30));
    }
  });

  test('the Idempotency-Key to retry with is shown whole (a git SHA, a key of words and dashes): only what is masked anywhere is masked', async () => {
    const { createServer: httpServer } = await import('node:http');
    const down = httpServer((_req, res) => {
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"error":{"type":"api_error","code":"service_unavailable","message":"Down."}}');
    });
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        CARBON_BASE_URL: `http://127.0.0.1:${(down.address() as { port: number }).port}/api/v1`,
        CARBON_API_KEY: `ck_test_${'a'.repeat(32)}`,
      };
      for (const key of ['0377db6849b176f67f2856af20707fca8664a3fb', 'deploy-2026-11-30-build-4711']) {
        const r = await carbon(['buy', '--kg', '1', '--idempotency-key', key, '--max-retries', '0'], { home: newHome(), env });
        expect(r.exitCode).toBe(1);
        expect(r.stderr).toContain(`Retry safely with --idempotency-key ${key}: `);
      }
      // A key given as the Idempotency-Key is masked in the line and in --json's envelope alike.
      const secret = 'Zq8Kp2Lm4Nx7Rt6Vw3Yb5Cd1Ef0GhJkM';
      for (const json of [[], ['--json']]) {
        const r = await carbon(['buy', '--kg', '1', '--idempotency-key', `ck_live_${secret}`, '--max-retries', '0', ...json], {
          home: newHome(),
          env,
        });
        expect(r.exitCode).toBe(1);
        expect(r.stderr).toContain('JkM');
        expect(r.stderr).not.toContain(secret.slice(0, 20));
      }
    } finally {
      down.close();
    }
  });

  test('an error quoting what was typed never sends its control characters (an escape sequence, a newline) to the terminal', async () => {
    const home = newHome();
    for (const [args, env] of [
      [['show', 'off_\u001b[2J\u009b31m\nx'], {}],
      [['balance'], { CARBON_PROFILE: '\u001b]0;pwned\u0007' }],
    ] as const) {
      const r = await carbon([...args], { home, env });
      expect(r.exitCode).toBeGreaterThan(0);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
  });

  test('name the TypeScript the minified bundle was built from, through its source map', async () => {
    const debug = await carbon(['show', 'off_nope'], { home: newHome(), env: { CARBON_DEBUG: '1' } });
    expect(debug.exitCode).toBe(5);
    const frames = debug.stderr.split('\n').filter((l) => /^\s+at /.test(l));
    expect(frames.length).toBeGreaterThan(2);
    // The command's own frame, at its line in src/cli/commands/show/run.ts; no frame left in the
    // bundle, its first line included (the module wrapper is the bundle's own, in its source map).
    expect(frames.some((f) => /src\/cli\/commands\/show\/run\.ts:\d+:\d+\)$/.test(f))).toBe(true);
    expect(frames.filter((f) => /dist\/cli\.cjs:\d+:\d+/.test(f))).toEqual([]);
  });
});

describe('a refused connection says plainly that nothing was bought', () => {
  test('no server on the port: one line, exit 1, "nothing was bought", no retry key offered', async () => {
    const home = newHome();
    // A port nobody listens on: taken from a server that is started and stopped again.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const r = await carbon(['buy', '--kg', '1', '--base-url', `http://127.0.0.1:${port}/api/v1`, '--max-retries', '1'], {
      home,
      env: { CARBON_API_KEY: `ck_test_${'A'.repeat(32)}` },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('connection refused (is the server running?). Nothing was sent, so nothing was bought.');
    expect(r.stderr).not.toContain('may or may not');
  });
});

describe('a mode flag against the key given', () => {
  test('--live with a test key from CARBON_API_KEY or --api-key: exit 2, nothing sent, and how to mend it', async () => {
    const home = newHome();
    const key = `ck_test_${'a'.repeat(32)}`;
    const fromEnv = await carbon(['balance', '--live'], { home, env: { CARBON_API_KEY: key } });
    expect([fromEnv.exitCode, fromEnv.stdout, fromEnv.stderr]).toEqual([
      2,
      '',
      "error: --live was given, but the API key from CARBON_API_KEY is a test key. Give a live key there, or unset CARBON_API_KEY to use the profile's live key.\n",
    ]);
    const fromFlag = await carbon(['balance', '--test', '--api-key', key.replace('test', 'live')], { home });
    expect(fromFlag.exitCode).toBe(2);
    expect(fromFlag.stderr).toContain(
      "error: --test was given, but the API key from --api-key is a live key. Give a test key there, or leave out --api-key to use the profile's test key.\n",
    );
  });
});

describe('a key that is no key (a CI secret mangled or unset to a placeholder)', () => {
  test('is a malformed setting, as a bad CARBON_TIMEOUT is: exit 2, one line naming where it came from, nothing sent', async () => {
    const home = newHome();
    const server = await serve(home);
    try {
      for (const [args, env, said] of [
        [['balance'], { CARBON_API_KEY: '***' }, 'The API key from CARBON_API_KEY is not a test or live key'],
        [['buy', '--kg', '5', '--json', '--api-key', 'garbage'], {}, 'The API key from --api-key is not a test or live key'],
        // Shaped as a key, but holding what no bearer token can (a space, a letter outside ASCII): not sent to the API.
        [
          ['buy', '--kg', '5', '--api-key', 'ck_test_ABCDEFGHIJKLMNOP QRS'],
          {},
          'The API key from --api-key holds a character no bearer token has (a space, or a letter outside ASCII); nothing was sent.',
        ],
        [
          ['balance'],
          { CARBON_API_KEY: 'ck_test_naïveabcdefghijk' },
          'The API key from CARBON_API_KEY holds a character no bearer token has',
        ],
      ] as const) {
        const r = await carbon([...args], { home, env: { CARBON_BASE_URL: server.url, ...env } });
        expect([r.exitCode, r.stdout]).toEqual([2, '']);
        expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning:'))).toHaveLength(1);
        expect(r.stderr).toContain(said);
      }
      // The server never saw them: the mode a key is sent in is read from its prefix.
      expect((await ok(['logs', '--json'], { home })).stdout).toBe('');
    } finally {
      await server.stop();
    }
  });
});

describe('exit 8 from a server that takes a read and never answers', () => {
  test("`show --wait`'s first read is bounded by --timeout too, as its polls are: exit 8, saying how to follow it", async () => {
    const stuck = createHttpServer(() => {});
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/api/v1`;
    const id = `off_sandbox${'a'.repeat(17)}`;
    try {
      // Before: the read's three attempts each waited the 2 s, then the backoff: "Could not reach …", exit 1, after about 7.5 s.
      const r = await carbon(['show', id, '--wait', '--timeout', '2'], {
        home: newHome(),
        env: { CARBON_BASE_URL: base, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` },
      });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        8,
        '',
        `error: No answer from ${base} by --timeout (2 s): the read of ${id} was given up. Follow it with \`carbon show ${id} --wait\`.\n`,
      ]);
    } finally {
      stuck.closeAllConnections();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });
});

describe("Ctrl-C or SIGTERM during `show --wait`'s first read", () => {
  test.each<[NodeJS.Signals, string]>([
    ['SIGINT', ''],
    ['SIGTERM', ' (SIGTERM)'],
  ])('%s: exit 130, and a line saying how to follow the offset', async (signal, named) => {
    let reads = 0;
    const stuck = createHttpServer((req) => {
      req.resume();
      reads++;
    });
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/api/v1`;
    const id = `off_sandbox${'b'.repeat(17)}`;
    try {
      const child = spawnCarbon(newHome(), ['show', id, '--wait'], { CARBON_BASE_URL: base, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` });
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      // The read is on the wire (the server holds it): only then is the signal sent.
      while (reads === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill(signal);
      // Before: SIGTERM ended it with Node's own 143 and nothing said.
      expect([(await child).exitCode, stdout, stderr]).toEqual([
        130,
        '',
        `Stopped waiting${named} before ${id} was read. Follow it with \`carbon show ${id} --wait\`.\n`,
      ]);
    } finally {
      stuck.closeAllConnections();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });
});
