import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, ok, plain, sandboxKeys, TTY } from '../support/cli.js';

/**
 * `carbon sandbox …`: every operation of the local model, --json and plain, and its errors'
 * exit codes; refused on the remote engine.
 */

const newHome = homes();

interface Offset {
  id: string;
  status: string;
  livemode: boolean;
  certificate_url: string | null;
  placed: string | null;
}

describe('top-ups', () => {
  test('dollars, cents, --live; the smallest is $250', async () => {
    const home = newHome();
    expect(await json(['sandbox', 'topup', '250'], { home })).toEqual({
      object: 'balance',
      livemode: false,
      available_cents: 125_000,
      currency: 'usd',
      rate_millicents_per_kg: 4000,
    });
    expect(await json<{ available_cents: number; livemode: boolean }>(['sandbox', 'topup', '1,000.50', '--live'], { home })).toMatchObject({
      available_cents: 100_050,
      livemode: true,
    });
    expect((await json<{ available_cents: number }>(['sandbox', 'topup', '--cents', '25000', '--live'], { home })).available_cents).toBe(
      125_050,
    );
    const plain = await ok(['sandbox', 'topup', '300'], { home });
    expect(plain.stdout).toContain('available_cents\t155000\n');
    expect(plain.stderr).toBe('✓ Topped up $300.00 (test balance).\n');
    expect((await json<{ available_cents: number }>(['balance', '--live'], { home })).available_cents).toBe(125_050);

    // Money given twice with two values is refused, as buy's is: not the last one winning.
    for (const args of [
      ['249.99'],
      ['12.345'],
      ['--cents', '100'],
      [],
      ['250', '--cents', '25000'],
      ['ten'],
      ['--cents', '30000', '--cents', '25000'],
    ]) {
      const r = await carbon(['sandbox', 'topup', ...args], { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
  });
});

describe('keys', () => {
  test('create prints the key once on stdout; list masks unless --reveal; revoke', async () => {
    const home = newHome();
    const created = await ok(['sandbox', 'keys', 'create', '--live'], { home });
    expect(created.stdout).toMatch(/^ck_live_sandbox[A-Za-z0-9]{25}\n$/);
    expect(created.stderr).toMatch(/Created live key key_\S+ with purchase access/);
    const secret = created.stdout.trim();

    const ro = await json<{ id: string; secret: string; mode: string; permission: string; masked: string }>(
      ['sandbox', 'keys', 'create', '--read-only'],
      { home },
    );
    expect(ro).toMatchObject({ mode: 'test', permission: 'read_only' });
    expect(ro.masked).toBe(`ck_test_…${ro.secret.slice(-4)}`);

    const masked = await ok(['sandbox', 'keys'], { home });
    expect(masked.stdout.trimEnd().split('\n')).toHaveLength(5);
    expect(masked.stdout).not.toContain(secret);
    expect(masked.stdout).toContain(`ck_live_…${secret.slice(-4)}`);
    expect((await ok(['sandbox', 'keys', 'list', '--reveal'], { home })).stdout).toContain(secret);
    const list = await json<Array<{ id: string; secret?: string }>>(['sandbox', 'keys'], { home });
    expect(list.every((k) => k.secret === undefined)).toBe(true);

    // The new keys work.
    expect((await ok(['balance', '--json'], { home, env: { CARBON_API_KEY: secret } })).stdout).toContain('"livemode": true');
    const ro401 = await carbon(['buy', '--kg', '1'], { home, env: { CARBON_API_KEY: ro.secret } });
    expect(ro401.exitCode).toBe(4);

    const revoked = await json<{ id: string; revoked: string | null }>(['sandbox', 'keys', 'revoke', ro.id], { home });
    expect(revoked.revoked).not.toBeNull();
    expect((await carbon(['balance'], { home, env: { CARBON_API_KEY: ro.secret } })).exitCode).toBe(4);
    const again = await carbon(['sandbox', 'keys', 'revoke', ro.id], { home });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('already revoked');
    const missing = await carbon(['sandbox', 'keys', 'revoke', 'key_nope', '--json'], { home });
    expect(missing.exitCode).toBe(5);
    expect(JSON.parse(missing.stderr).error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });

  test('revoking the default test key says what local commands use from then on: another test key, or none (exit 4, as the refusal then says)', async () => {
    const home = newHome();
    const { all } = await sandboxKeys(home);
    const first = (all.find((k) => k.default === 'test') as { id: string }).id;
    const second = await json<{ id: string }>(['sandbox', 'keys', 'create'], { home });
    const one = await ok(['sandbox', 'keys', 'revoke', first], { home });
    expect(one.stderr).toContain(`Local commands used it as the sandbox's test key: they use ${second.id} from now on.`);
    expect((await ok(['balance'], { home })).exitCode).toBe(0);
    const two = await ok(['sandbox', 'keys', 'revoke', second.id], { home });
    expect(two.stderr).toContain(
      "Local commands used it as the sandbox's test key, and no other is left: those that need one stop with exit 4 until `carbon sandbox keys create` makes a new one.",
    );
    // A key the commands do not use (the read-only one: for the library's openLocal) says nothing of the sort.
    const ro = (all.find((k) => k.default === 'read_only') as { id: string }).id;
    expect((await ok(['sandbox', 'keys', 'revoke', ro], { home })).stderr).toBe(`✓ Revoked ${ro}.\n`);
    const none = await carbon(['balance'], { home });
    expect([none.exitCode, none.stderr.split('\n')[0]]).toEqual([
      4,
      expect.stringMatching(/^error: The local sandbox has no test key that is not revoked\. Create one with/),
    ]);
  });
});

describe('account, rate, limits', () => {
  test('account standing, rate, review limit and rate limit; each prints the account', async () => {
    const home = newHome();
    expect(await json(['sandbox', 'account', 'unapproved'], { home })).toMatchObject({ status: 'unapproved' });
    const blocked = await carbon(['quote', '--kg', '1', '--json'], { home });
    expect(blocked.exitCode).toBe(4);
    expect(JSON.parse(blocked.stderr).error.code).toBe('api_access_inactive');
    expect((await ok(['sandbox', 'account', 'active'], { home })).stdout).toContain('status\tactive\n');
    expect((await carbon(['sandbox', 'account', 'closed'], { home })).exitCode).toBe(2);

    expect(await json(['sandbox', 'rate', '5000'], { home })).toMatchObject({ rate: 5000 });
    expect((await json<{ amount_cents: number }>(['quote', '--kg', '100'], { home })).amount_cents).toBe(500);
    for (const bad of ['0', '1.5', 'cheap']) expect((await carbon(['sandbox', 'rate', bad], { home })).exitCode).toBe(2);
    // The least said is the least taken: 0 is refused too.
    for (const bad of ['-1', '0'])
      expect((await carbon(['sandbox', 'rate', bad], { home })).stderr).toBe(
        `error: The rate (millicents per kg) must be a whole number of at least 1, not "${bad}".\n`,
      );

    expect(await json(['sandbox', 'review-limit', '10'], { home })).toMatchObject({ review_limit_cents: 1000 });
    expect((await json<{ requires_review: boolean }>(['quote', '--kg', '1000'], { home })).requires_review).toBe(true);
    // Each says what it set, as every other change does (and as the page's notices say it); --json keeps stderr empty.
    expect((await ok(['sandbox', 'rate', '1234'], { home })).stderr).toBe('✓ The rate is 1,234 millicents per kg: $12.34 a tonne.\n');
    expect((await ok(['sandbox', 'review-limit', '2,500'], { home })).stderr).toBe(
      '✓ The review limit is $2,500.00: a live purchase above it waits for review.\n',
    );

    expect(await json(['sandbox', 'rate-limit', '5', '--window', '1m'], { home })).toMatchObject({
      rate_limit_requests: 5,
      rate_limit_window_ms: 60_000,
    });
    // Without --window the window stays.
    expect(await json(['sandbox', 'rate-limit', '10'], { home })).toMatchObject({ rate_limit_requests: 10, rate_limit_window_ms: 60_000 });
    expect(await json(['sandbox', 'rate-limit', 'off'], { home })).toMatchObject({ rate_limit_requests: null });
    for (const args of [['lots'], ['5', '--window', 'soon'], ['-1']]) {
      expect((await carbon(['sandbox', 'rate-limit', ...args], { home })).exitCode, args.join(' ')).toBe(2);
    }
  });
});

describe('rate-limit: where the count is kept', () => {
  test('on the SQLite ledger each local command counts afresh, and `rate-limit N` says so; 0 says it refuses every call, off that none is refused', async () => {
    const home = newHome();
    const set = await ok(['sandbox', 'rate-limit', '2', '--window', '1d'], { home });
    // What a script would rehearse: three one-shot calls, a limit of two. Each process counts alone.
    for (let i = 0; i < 3; i++) await ok(['balance'], { home });
    expect(set.stderr).toBe(
      '✓ 2 requests per 1d per key. Each process counts its own: a carbon serve every request it answers, a local ' +
        'command only its own requests (three `carbon balance` in a row are never refused); `rate-limit 0` refuses every one.\n',
    );
    // 0 shuts every call, and says so, as `account suspended` does.
    expect((await ok(['sandbox', 'rate-limit', '0'], { home })).stderr).toBe(
      '✓ Rate limit 0: every request now gets 429 rate_limited (exit 7), until `carbon sandbox rate-limit off`.\n',
    );
    expect((await carbon(['balance'], { home })).exitCode).toBe(7);
    expect((await ok(['sandbox', 'rate-limit', 'off'], { home })).stderr).toBe('✓ Rate limit off: no request is refused for its rate.\n');
    await ok(['balance'], { home });
    expect((await ok(['sandbox', 'rate-limit', '2', '--json'], { home })).stderr).toBe('');
    // One request is one.
    expect((await ok(['sandbox', 'rate-limit', '1'], { home })).stderr).toMatch(/^✓ 1 request per 1d per key\. /);
  });
});

describe('lifecycle: review, fail, clock', () => {
  test('a live purchase above the review limit waits; approve places it with a certificate, reject refunds', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    await ok(['sandbox', 'review-limit', '1'], { home });
    const keys = await sandboxKeys(home);
    const live = { home, env: { CARBON_API_KEY: keys.live } };
    const a = await json<Offset>(['buy', '--kg', '100', '--yes'], live);
    const b = await json<Offset>(['buy', '--kg', '100', '--yes'], live);
    // Far past the 60 s placement: offsets under review stay processing.
    await ok(['sandbox', 'clock', 'advance', '10m'], { home });
    expect((await json<Offset>(['show', a.id], live)).status).toBe('processing');

    const approved = await json<Offset>(['sandbox', 'review', 'approve', a.id], { home });
    expect(approved).toMatchObject({ id: a.id, status: 'placed', livemode: true });
    expect(approved.certificate_url).toMatch(/\/certificates\/cert_[0-9a-f]{24}$/);
    const rejected = await ok(['sandbox', 'review', 'reject', b.id], { home });
    expect(rejected.stdout).toContain('status\trefunded\n');
    expect(rejected.stderr).toContain(`Rejected ${b.id}`);
    expect((await json<{ available_cents: number }>(['balance'], live)).available_cents).toBe(25_000 - 400);

    const twice = await carbon(['sandbox', 'review', 'approve', a.id], { home });
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(/is placed, not processing\. \(param: id\)/);
    expect((await carbon(['sandbox', 'review', 'approve', 'off_missing'], { home })).exitCode).toBe(5);
    expect((await carbon(['sandbox', 'review', 'maybe', a.id], { home })).exitCode).toBe(2);
  });

  test('fail refunds a processing offset; the clock places the rest', async () => {
    const home = newHome();
    // The offset to fail is a live one held for review (a limit of $0): processing until the
    // test says otherwise, however long the commands take.
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    await ok(['sandbox', 'review-limit', '0'], { home });
    const a = await json<Offset>(['buy', '--kg', '100', '--live', '--yes'], { home });
    const b = await json<Offset>(['buy', '--kg', '200'], { home });
    const failed = await json<Offset>(['sandbox', 'fail', a.id], { home });
    expect(failed.status).toBe('refunded');
    const warned = await carbon(['show', a.id, '--live'], { home });
    expect(warned.stderr).toContain(`warning: ${a.id} was refunded`);

    const before = await json<{ now: string; offset_ms: number }>(['sandbox', 'clock'], { home });
    expect(before.offset_ms).toBe(0);
    const after = await json<{ now: string; offset_ms: number }>(['sandbox', 'clock', 'advance', '90s'], { home });
    expect(after.offset_ms).toBe(90_000);
    expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(90_000);
    expect((await ok(['sandbox', 'clock', 'show'], { home })).stdout).toContain('offset_ms\t90000\n');

    const placed = await json<Offset>(['show', b.id, '--wait'], { home });
    expect(placed.status).toBe('placed');
    expect(placed.certificate_url).toBeNull();
    expect((await carbon(['sandbox', 'fail', b.id], { home })).exitCode).toBe(2);
    expect(await json(['impact'], { home })).toMatchObject({ placed_kg: 200, processing_kg: 0, offsets: 1 });

    for (const bad of ['0s', 'soon', '-5m', ''])
      expect((await carbon(['sandbox', 'clock', 'advance', bad], { home })).exitCode, bad).toBe(2);
    // Said why: the clock goes back only by a reset or a snapshot.
    expect((await carbon(['sandbox', 'clock', 'advance', '0s'], { home })).stderr).toMatch(
      /above zero \(the clock only moves forward: `carbon sandbox reset` or a snapshot loaded takes it back\)/,
    );
    // `-5m` reads as a flag: the way to give it as a value is said, and given so, the clock's own answer comes.
    expect((await carbon(['sandbox', 'clock', 'advance', '-5m'], { home })).stderr).toBe(
      "error: unknown option '-5m' (a value that starts with - is read as a flag: put -- before it, as in `-- -5m`, or add --help for usage)\n",
    );
    expect((await carbon(['sandbox', 'clock', 'advance', '--', '-5m'], { home })).stderr).toMatch(
      /above zero \(the clock only moves forward/,
    );
    expect((await carbon(['list', '--bogus'], { home })).stderr).toBe("error: unknown option '--bogus' (add --help for usage)\n");
  });
});

describe('reset', () => {
  test('without a terminal it needs --yes (exit 2, nothing deleted); with --yes it starts over', async () => {
    const home = newHome();
    const offset = await json<Offset>(['buy', '--kg', '10'], { home });
    const oldKeys = await sandboxKeys(home);

    const refused = await carbon(['sandbox', 'reset'], { home, input: 'y\n' });
    expect(refused.exitCode).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('Add --yes');
    expect((await ok(['show', offset.id], { home })).exitCode).toBe(0);

    const status = await json<{ balances: { test: number; live: number }; account: { status: string } }>(['sandbox', 'reset', '--yes'], {
      home,
    });
    expect(status.balances).toEqual({ test: 100_000, live: 0 });
    expect((await carbon(['show', offset.id], { home })).exitCode).toBe(5);
    const newKeys = await sandboxKeys(home);
    expect(newKeys.test).not.toBe(oldKeys.test);
    // A key the sandbox no longer knows does not stop local runs: its own key is used, and it says so.
    const withOld = await carbon(['balance'], { home, env: { CARBON_API_KEY: oldKeys.test } });
    expect(withOld.exitCode).toBe(0);
    expect(withOld.stderr).toMatch(/^warning: CARBON_API_KEY is not a key of the local sandbox: using the sandbox's own test key/);
    // Nor does one the sandbox never made, whatever follows its ck_test_ (a dash, few letters): it is never sent anywhere.
    for (const foreign of ['ck_test_abc-defghijklmnopqrstu', 'ck_test_short']) {
      const r = await carbon(['balance'], { home, env: { CARBON_API_KEY: foreign } });
      expect([foreign, r.exitCode]).toEqual([foreign, 0]);
      expect(r.stderr).toMatch(/^warning: CARBON_API_KEY is not a key of the local sandbox/);
    }
  });
});

describe('a word after a group that is none of its commands', () => {
  test('is an unknown command (exit 2, with a suggestion when one is close), not an argument of the default command', async () => {
    const home = newHome();
    const cases: Array<[string[], string]> = [
      [['sandbox', 'faults', 'clear'], "error: unknown command 'clear' (`carbon sandbox faults help` lists the commands)"],
      [['sandbox', 'keys', 'revok', 'key_x'], "error: unknown command 'revok' (Did you mean revoke?)"],
      [['sandbox', 'clock', 'advanc', '1m'], "error: unknown command 'advanc' (Did you mean advance?)"],
      [['sandbox', 'keys', '--reveal', 'extra'], "error: unknown command 'extra' (`carbon sandbox keys help` lists the commands)"],
      // The default command named, then a command of the group: not "unknown command 'show' (Did you mean show?)".
      [
        ['logs', 'list', 'show', 'req_x'],
        "error: `carbon logs list` takes no words, and 'show' is a command of its own: `carbon logs show`.",
      ],
      [
        ['sandbox', 'clock', 'show', 'advance', '1m'],
        "error: `carbon sandbox clock show` takes no words, and 'advance' is a command of its own: `carbon sandbox clock advance`.",
      ],
    ];
    for (const [args, line] of cases) {
      const r = await carbon(args, { home });
      expect([r.exitCode, r.stdout, r.stderr.trim()], args.join(' ')).toEqual([2, '', line]);
    }
    // The default commands still run with no word, and take their own flags.
    expect(JSON.parse((await ok(['sandbox', 'keys', '--reveal', '--json'], { home })).stdout)).toHaveLength(3);
    expect((await ok(['sandbox', 'clock', '--json'], { home })).stdout).toContain('"offset_ms": 0');
  });
});

describe('on the remote engine', () => {
  test('refused with a clear error (exit 2) unless --local', async () => {
    const home = newHome();
    const env = { CARBON_BASE_URL: 'http://127.0.0.1:9/api/v1', CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` };
    for (const args of [['status'], ['topup', '250'], ['keys'], ['clock', 'advance', '1m'], ['reset', '--yes']]) {
      const r = await carbon(['sandbox', ...args], { home, env });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('acts on the local model');
      expect(r.stderr).toContain('--local');
    }
    const json = await carbon(['sandbox', 'status', '--json'], { home, env });
    expect(JSON.parse(json.stderr).error.code).toBe('usage_error');
    expect((await carbon(['sandbox', 'status', '--local'], { home, env })).exitCode).toBe(0);
  });
});

test('sandbox status says "1 offset"', async () => {
  const home = newHome();
  await ok(['buy', '--kg', '5'], { home });
  const r = await carbonTty(['sandbox', 'status'], { home, env: TTY });
  expect(plain(r.output)).toMatch(/, 1 offset$/m);
  expect(plain(r.output)).toMatch(/, 0 offsets$/m);
});
