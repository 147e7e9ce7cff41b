import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, homes, json, ok, pipeline, serve, sh } from '../support/cli.js';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';
import { limit } from '../support/load.js';

/** Each test runs a dozen or more commands one after another (on PostgreSQL too): a hang is caught at this, not a busy minute. */
const SLOW = limit(120_000);

/**
 * `carbon sandbox snapshot save|load` through the built binary (docs/snapshots.md): after save,
 * reset and load, what list, balance, impact and sandbox status answer is what they answered
 * before, the same API keys work and an Idempotency-Key used before the save replays; on SQLite,
 * on PostgreSQL, and from one to the other. A refused file changes nothing.
 */

const newHome = homes();
const schemas: TestSchema[] = [];
afterAll(async () => {
  await Promise.all(schemas.map((s) => s.drop()));
});

/** Where a ledger is: a home's SQLite (no env), or a fresh PostgreSQL schema. */
interface Ledger {
  home: string;
  env: Record<string, string>;
}

function sqliteLedger(): Ledger {
  return { home: newHome(), env: {} };
}

function postgresLedger(): Ledger {
  const schema = freshSchema('snap');
  schemas.push(schema);
  return { home: newHome(), env: { CARBON_DATABASE_URL: schema.url } };
}

const STORES: Array<[string, () => Ledger]> = [['SQLite', sqliteLedger]];
if (postgresAvailable()) STORES.push(['PostgreSQL', postgresLedger]);

/** `carbon …` on a ledger, with more environment (a key) when given. */
const on = (l: Ledger, env: Record<string, string> = {}) => ({ home: l.home, env: { ...l.env, ...env } });

/**
 * A sandbox with something of everything a snapshot holds: settings, placed test offsets, a live
 * offset waiting for review and one refunded, Idempotency-Keys, a created key and a revoked one,
 * the clock moved, the fault setting. Returns the Idempotency-Key of a test purchase and its offset.
 */
async function seed(l: Ledger): Promise<{ idem: string; offsetId: string }> {
  const o = on(l);
  await ok(['sandbox', 'rate', '4125'], o);
  await ok(['sandbox', 'rate-limit', '1000', '--window', '1m'], o);
  const first = await json<{ id: string }>(['buy', '--kg', '10', '--idempotency-key', 'seed-test-1'], o);
  await ok(['buy', '--amount', '7.50', '--reference', 'ops-flight-2'], o);
  await ok(['sandbox', 'topup', '250', '--live'], o);
  await ok(['sandbox', 'review-limit', '0'], o);
  await ok(['buy', '--live', '--kg', '20', '--yes', '--idempotency-key', 'seed-live-1'], o);
  const failed = await json<{ id: string }>(['buy', '--live', '--kg', '30', '--yes'], o);
  await ok(['sandbox', 'fail', failed.id], o);
  await ok(['sandbox', 'keys', 'create'], o);
  const ro = await json<{ id: string }>(['sandbox', 'keys', 'create', '--read-only'], o);
  await ok(['sandbox', 'keys', 'revoke', ro.id], o);
  // The test offsets placed; the live one waits for review whatever the clock says.
  await ok(['sandbox', 'clock', 'advance', '1m'], o);
  await ok(['sandbox', 'faults', 'set', '--latency', '1ms', '--seed', '7', '--route', 'GET /offsets/{id}'], o);
  return { idem: 'seed-test-1', offsetId: first.id };
}

interface Status {
  clock: { now: string; offset_ms: number };
  [field: string]: unknown;
}

/** What the issue names: list --all, balance, impact (both modes) and sandbox status, as JSON; the clock apart. */
async function views(l: Ledger, keys?: { test: string; live: string }) {
  const test = on(l, keys === undefined ? {} : { CARBON_API_KEY: keys.test });
  const live = on(l, keys === undefined ? {} : { CARBON_API_KEY: keys.live });
  const { clock, ...status } = await json<Status>(['sandbox', 'status'], test);
  return {
    views: {
      list: (await ok(['list', '--all', '--json'], test)).stdout,
      listLive: (await ok(['list', '--all', '--live', '--json'], live)).stdout,
      balance: await json(['balance'], test),
      balanceLive: await json(['balance', '--live'], live),
      impact: await json(['impact'], test),
      impactLive: await json(['impact', '--live'], live),
      status,
    },
    clock,
  };
}

/** The model's clock as `sandbox status` shows it, in ms. */
const modelNow = (clock: Status['clock']) => Date.parse(clock.now);

/** The local engine's warning when a configured key is not one of the sandbox's (it then uses its own). */
const NOT_LOCAL = /is not a key of the local sandbox/;

/**
 * The keys (their full text, as revealed) work as before: the sandbox knows each (no warning that
 * it used its own instead), and a revoked one gets 401 (exit 4).
 */
async function keysWork(l: Ledger, keys: Array<{ secret: string; revoked: string | null }>): Promise<void> {
  for (const key of keys) {
    const r = await carbon(['balance', '--json'], on(l, { CARBON_API_KEY: key.secret }));
    expect([key.secret.slice(0, 8), r.exitCode], r.stderr).toEqual([key.secret.slice(0, 8), key.revoked === null ? 0 : 4]);
    expect(r.stderr).not.toMatch(NOT_LOCAL);
  }
}

/** A purchase with an Idempotency-Key used before the save replays its offset; the key with another body is 409 (exit 6). */
async function replays(l: Ledger, idem: string, offsetId: string, env: Record<string, string> = {}): Promise<void> {
  expect((await json<{ id: string }>(['buy', '--kg', '10', '--idempotency-key', idem], on(l, env))).id).toBe(offsetId);
  expect((await carbon(['buy', '--kg', '11', '--idempotency-key', idem], on(l, env))).exitCode).toBe(6);
}

describe.each(STORES)('on %s: save, reset, load', (_name, ledger) => {
  test('list, balance, impact and status answer as before; the same keys work; an Idempotency-Key replays', { timeout: SLOW }, async () => {
    const l = ledger();
    const { idem, offsetId } = await seed(l);
    const before = await views(l);
    const keys = await json<Array<{ secret: string; revoked: string | null }>>(['sandbox', 'keys', '--reveal'], on(l));
    const keysMasked = await json(['sandbox', 'keys'], on(l));
    const file = join(l.home, 'seed.ndjson');
    const saved = await json<{ object: string; format: number; counts: Record<string, number>; clock: { now: string } }>(
      ['sandbox', 'snapshot', 'save', file],
      on(l),
    );
    expect(saved).toMatchObject({ object: 'snapshot', format: 1 });
    expect(saved.counts).toMatchObject({ account: 1, balances: 2, offsets: 4, api_keys: 5, idempotency: 4, meta: 1 });
    // The file holds no key's text.
    const text = readFileSync(file, 'utf8');
    for (const key of keys) expect(text).not.toContain(key.secret);

    await ok(['sandbox', 'reset', '--yes'], on(l));
    expect((await views(l)).views).not.toEqual(before.views);
    // The old keys are unknown to the sandbox started over: the local engine says so and uses its own.
    expect((await carbon(['balance'], on(l, { CARBON_API_KEY: keys[0]!.secret }))).stderr).toMatch(NOT_LOCAL);

    const loaded = await ok(['sandbox', 'snapshot', 'load', file], on(l));
    expect(loaded.stderr).toMatch(/^✓ Loaded .*seed\.ndjson \(4 offsets, 5 keys, 4 Idempotency-Keys\)/);
    const after = await views(l);
    expect(after.views).toEqual(before.views);
    // The clock starts again from the saved moment: never before it, and never by the time between.
    expect(modelNow(after.clock)).toBeGreaterThanOrEqual(Date.parse(saved.clock.now));
    expect(await json(['sandbox', 'keys'], on(l))).toEqual(keysMasked);
    await keysWork(l, keys);
    await replays(l, idem, offsetId);
  });

  test('- writes to stdout and reads from stdin', { timeout: SLOW }, async () => {
    const from = ledger();
    const { idem, offsetId } = await seed(from);
    const to = ledger();
    const env = Object.entries({ ...from.env })
      .map(([k, v]) => `${k}=${sh(v)}`)
      .join(' ');
    const envTo = Object.entries({ ...to.env })
      .map(([k, v]) => `${k}=${sh(v)}`)
      .join(' ');
    const r = await pipeline(
      `${env} CARBON_HOME=${sh(from.home)} carbon sandbox snapshot save - | ${envTo} CARBON_HOME=${sh(to.home)} carbon sandbox snapshot load - --json`,
      { home: from.home },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const fromKeys = await keysOf(from);
    expect((await views(to, fromKeys)).views).toEqual((await views(from)).views);
    await replays(to, idem, offsetId, { CARBON_API_KEY: fromKeys.test });
  });
});

/** The starting test and live keys' text, as the ledger's own sandbox reveals them. */
async function keysOf(l: Ledger): Promise<{ test: string; live: string }> {
  const all = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], on(l));
  return { test: all.find((k) => k.default === 'test')!.secret, live: all.find((k) => k.default === 'live')!.secret };
}

describe.runIf(postgresAvailable())('across stores', () => {
  test('a SQLite snapshot loads into PostgreSQL, and that one back into SQLite', { timeout: SLOW }, async () => {
    const sqlite = sqliteLedger();
    const { idem, offsetId } = await seed(sqlite);
    const keys = await keysOf(sqlite);
    const revealed = await json<Array<{ secret: string; revoked: string | null }>>(['sandbox', 'keys', '--reveal'], on(sqlite));
    const before = await views(sqlite);

    const first = join(sqlite.home, 'from-sqlite.ndjson');
    await ok(['sandbox', 'snapshot', 'save', first], on(sqlite));
    const postgres = postgresLedger();
    await ok(['sandbox', 'snapshot', 'load', first], on(postgres, { CARBON_API_KEY: keys.test }));
    // PostgreSQL's sandbox never saw these keys' text: the keys work for whoever holds them.
    expect((await views(postgres, keys)).views).toEqual(before.views);
    await keysWork(postgres, revealed);
    await replays(postgres, idem, offsetId, { CARBON_API_KEY: keys.test });

    const second = join(sqlite.home, 'from-postgres.ndjson');
    await ok(['sandbox', 'snapshot', 'save', second], on(postgres, { CARBON_API_KEY: keys.test }));
    const back = sqliteLedger();
    await ok(['sandbox', 'snapshot', 'load', second], on(back));
    const replayed = await views(back, keys);
    // The purchase replayed on PostgreSQL made nothing new; the rows came back as they went.
    expect(replayed.views).toEqual(before.views);
    await keysWork(back, revealed);
  });
});

/** Which key is the account's starting test, live and read-only key, as `carbon sandbox keys` says. */
async function rolesOf(l: Ledger): Promise<Record<string, string>> {
  const keys = await json<Array<{ id: string; default: string | null }>>(['sandbox', 'keys'], on(l));
  return Object.fromEntries(keys.filter((k) => k.default !== null).map((k) => [k.default, k.id]));
}

/** The keys' ids, in the order `carbon sandbox keys` lists them. */
async function keyIds(l: Ledger): Promise<string[]> {
  return (await json<Array<{ id: string }>>(['sandbox', 'keys'], on(l))).map((k) => k.id);
}

/** The keys `carbon balance` and `carbon balance --live` used when no key is configured, as `carbon logs` recorded them. */
async function keysUsed(l: Ledger): Promise<{ test: string; live: string }> {
  const used = async (args: string[]) => {
    await ok(args, on(l));
    return (await json<{ key_id: string }>(['logs', '--json', '--limit', '1'], on(l))).key_id;
  };
  return { test: await used(['balance']), live: await used(['balance', '--live']) };
}

/**
 * A ledger with its starting keys and a newer test and live key each: were the starting keys'
 * roles lost, the local engine would use the newer ones. Returns the roles, as the engine uses them.
 */
async function withNewerKeys(l: Ledger): Promise<Record<string, string>> {
  // Provisioned by a command of its own first. Left to `keys create`, the starting keys and the new
  // one are made by one process, often in one millisecond: a tie that PostgreSQL breaks by role and
  // SQLite by the order made, so the two listed them apart now and then (a suite beside two busy cores).
  await ok(['balance'], on(l));
  await ok(['sandbox', 'keys', 'create'], on(l));
  await ok(['sandbox', 'keys', 'create', '--live'], on(l));
  const roles = await rolesOf(l);
  expect(Object.keys(roles).sort()).toEqual(['live', 'read_only', 'test']);
  expect(await keysUsed(l)).toEqual({ test: roles.test, live: roles.live });
  return roles;
}

/** Saves `from` to a file and loads it into `to`. */
async function move(from: Ledger, to: Ledger, name: string): Promise<void> {
  const file = join(from.home, name);
  await ok(['sandbox', 'snapshot', 'save', file], on(from));
  await ok(['sandbox', 'snapshot', 'load', file], on(to));
}

describe.runIf(postgresAvailable())('the starting keys across stores', () => {
  test.each([
    ['SQLite to PostgreSQL and back: each keeps its role, and the local engine uses the starting keys again', sqliteLedger, postgresLedger],
    ['PostgreSQL to SQLite and back: the same', postgresLedger, sqliteLedger],
  ] as const)('%s', { timeout: SLOW }, async (_name, origin, other) => {
    const home = origin();
    const roles = await withNewerKeys(home);
    const order = await keyIds(home);
    const away = other();
    await move(home, away, 'there.ndjson');
    // A store that never held these keys' text still knows which were the starting ones.
    expect(await rolesOf(away)).toEqual(roles);
    // And lists them in the same order: the starting keys, made in one millisecond, too.
    expect(await keyIds(away)).toEqual(order);
    await move(away, home, 'back.ndjson');
    expect(await rolesOf(home)).toEqual(roles);
    expect(await keyIds(home)).toEqual(order);
    expect(await keysUsed(home)).toEqual({ test: roles.test, live: roles.live });
  });
});

/** The ledger's rows as a snapshot holds them (every line but the header and the end, which carry times). */
async function rowsOf(l: Ledger): Promise<string[]> {
  const r = await ok(['sandbox', 'snapshot', 'save', '-'], on(l));
  return r.stdout.trimEnd().split('\n').slice(1, -1);
}

describe.each(STORES)('on %s: a file that is refused changes nothing', (_name, ledger) => {
  test('from a newer carbon, damaged, cut short, or no snapshot at all: one line, exit 2, the ledger as it was', {
    timeout: SLOW,
  }, async () => {
    const l = ledger();
    await seed(l);
    const good = join(l.home, 'good.ndjson');
    await ok(['sandbox', 'snapshot', 'save', good], on(l));
    const lines = readFileSync(good, 'utf8').trimEnd().split('\n');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    // Another ledger's snapshot, so a load that went through would show.
    const other = ledger();
    await ok(['sandbox', 'topup', '999', '--live'], on(other));
    const otherLines = (await ok(['sandbox', 'snapshot', 'save', '-'], on(other))).stdout.trimEnd().split('\n');
    const balanceRow = otherLines.findIndex((line) => line.startsWith('["balances",1,'));

    const cases: Array<[string, string, RegExp, string]> = [
      [
        'newer',
        [JSON.stringify({ ...header, carbon_snapshot: 2, carbon: '9.0.0' }), ...otherLines.slice(1)].join('\n'),
        /was saved in snapshot format 2 \(by carbon 9\.0\.0\), newer than this carbon reads \(up to 1\)/,
        'snapshot_newer',
      ],
      // No carbon writes a format that is not a whole number from 1: not "newer", and said by its field.
      [
        'format 1.5',
        [JSON.stringify({ ...header, carbon_snapshot: 1.5 }), ...otherLines.slice(1)].join('\n'),
        /line 1: its format, carbon_snapshot 1\.5, is none carbon writes/,
        'snapshot_damaged',
      ],
      [
        'format 0',
        [JSON.stringify({ ...header, carbon_snapshot: 0 }), ...otherLines.slice(1)].join('\n'),
        /line 1: its format, carbon_snapshot 0, is none carbon writes/,
        'snapshot_damaged',
      ],
      [
        'a value changed',
        otherLines.map((line, i) => (i === balanceRow ? line.replace(/,\d+\]$/, ',1]') : line)).join('\n'),
        /is damaged|its SHA-256 differs/,
        'snapshot_damaged',
      ],
      // A checkout that turned its LF into CRLF (core.autocrlf): the checksum differs, and the line says why.
      [
        'CRLF line ends',
        `${otherLines.join('\r\n')}\r\n`,
        /its SHA-256 differs\); its lines end in CRLF, .*mark snapshots -text in \.gitattributes\)\. The ledger is unchanged\./,
        'snapshot_damaged',
      ],
      ['cut short', otherLines.slice(0, -2).join('\n'), /ends before its end line/, 'snapshot_damaged'],
      ['cut short in its header', otherLines[0]!.slice(0, 200), /line 1: it is not JSON/, 'snapshot_damaged'],
      [
        'its end line edited',
        [...otherLines.slice(0, -1), '{"end":{"rows":1,"sha256":"00"}}'].join('\n'),
        /SHA-256 differs/,
        'snapshot_damaged',
      ],
      ['a CSV file', 'kg,reference\n10,ops\n', /is not a carbon snapshot/, 'not_a_snapshot'],
      ['an empty file', '', /is not a carbon snapshot/, 'not_a_snapshot'],
      ['JSON of something else', '{"object":"balance"}\n', /is not a carbon snapshot/, 'not_a_snapshot'],
    ];
    // The reads first: a read records the placements that are due (the test offsets' seconds may
    // pass in between on a loaded machine), so the rows compared are the settled ones.
    const before = await views(l);
    const rowsBefore = await rowsOf(l);
    for (const [what, content, says, code] of cases) {
      const file = join(l.home, `${code}.ndjson`);
      writeFileSync(file, content);
      const r = await carbon(['sandbox', 'snapshot', 'load', file], on(l));
      expect([what, r.exitCode, r.stdout], r.stderr).toEqual([what, 2, '']);
      expect(r.stderr.trimEnd().split('\n'), what).toHaveLength(1);
      expect(r.stderr, what).toMatch(says);
      expect(r.stderr, what).toMatch(/The ledger is unchanged\.\n$/);
      const j = await carbon(['sandbox', 'snapshot', 'load', file, '--json'], on(l));
      expect(JSON.parse(j.stderr).error.code, what).toBe(code);
      const dry = await carbon(['sandbox', 'snapshot', 'load', file, '--dry-run'], on(l));
      expect([what, dry.exitCode]).toEqual([what, 2]);
    }
    expect(await rowsOf(l)).toEqual(rowsBefore);
    expect((await views(l)).views).toEqual(before.views);
    const missing = await carbon(['sandbox', 'snapshot', 'load', join(l.home, 'nope.ndjson')], on(l));
    expect([missing.exitCode, missing.stderr]).toEqual([2, `error: No such file: ${join(l.home, 'nope.ndjson')}.\n`]);
    const folder = await carbon(['sandbox', 'snapshot', 'load', l.home], on(l));
    expect([folder.exitCode, folder.stderr]).toEqual([2, `error: ${l.home} is not a file.\n`]);
    // Saved into a directory that is not there: the directory is what is missing, not the file to be made.
    const nowhere = await carbon(['sandbox', 'snapshot', 'save', join(l.home, 'no-dir', 'seed.ndjson')], on(l));
    expect([nowhere.exitCode, nowhere.stdout, nowhere.stderr]).toEqual([
      2,
      '',
      `error: No such directory: ${join(l.home, 'no-dir')}; nothing was saved.\n`,
    ]);
  });

  test('--dry-run says what the file holds and loads nothing', { timeout: SLOW }, async () => {
    const l = ledger();
    await seed(l);
    const file = join(l.home, 'seed.ndjson');
    const saved = await json<{ clock: { now: string } }>(['sandbox', 'snapshot', 'save', file], on(l));
    await ok(['sandbox', 'reset', '--yes'], on(l));
    const rowsBefore = await rowsOf(l);
    const dry = await json<Record<string, unknown>>(['sandbox', 'snapshot', 'load', file, '--dry-run'], on(l));
    expect(dry).toMatchObject({
      object: 'snapshot',
      format: 1,
      journal: false,
      clock: { now: saved.clock.now },
      counts: { account: 1, balances: 2, impact: 2, api_keys: 5, offsets: 4, entries: 7, idempotency: 4, meta: 1 },
    });
    const plain = await ok(['sandbox', 'snapshot', 'load', file, '--dry-run'], on(l));
    expect(plain.stdout).toContain('counts.offsets\t4\n');
    expect(plain.stdout).toContain(`clock.now\t${saved.clock.now}\n`);
    expect(plain.stderr).toMatch(/is a whole snapshot \(4 offsets, 5 keys, 4 Idempotency-Keys\); nothing was loaded/);
    expect(await rowsOf(l)).toEqual(rowsBefore);
  });
});

describe('saving over what is at FILE', () => {
  test('a FIFO is written through, a symlink writes its target, a file keeps its permissions', { timeout: SLOW }, async () => {
    const l = sqliteLedger();
    await seed(l);
    const rows = await rowsOf(l);
    // A named pipe (as /dev/stdout, >(gzip) or /dev/full are devices or pipes): written to, never replaced by a file.
    const fifo = join(l.home, 'pipe');
    const r = await pipeline(
      `mkfifo ${sh(fifo)}; (timeout 20 cat ${sh(fifo)} > ${sh(join(l.home, 'through.ndjson'))} 2>/dev/null &); carbon sandbox snapshot save ${sh(fifo)}`,
      { home: l.home },
    );
    expect([r.exitCode, r.stderr], r.stderr).toEqual([0, `✓ Saved the sandbox (4 offsets, 5 keys, 4 Idempotency-Keys) to ${fifo}.\n`]);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    await ok(['sandbox', 'snapshot', 'load', join(l.home, 'through.ndjson'), '--dry-run'], on(l));
    // Stdout by name: the snapshot alone, nothing printed after it.
    const named = await pipeline('carbon sandbox snapshot save /dev/fd/1 | carbon sandbox snapshot load - --dry-run', { home: l.home });
    expect(named.exitCode, named.stderr).toBe(0);
    // A symlink to a checked-in seed: the seed is saved over, the link stays a link.
    mkdirSync(join(l.home, 'fixtures'));
    const seedFile = join(l.home, 'fixtures', 'seed.ndjson');
    writeFileSync(seedFile, 'old\n', { mode: 0o600 });
    chmodSync(seedFile, 0o600);
    symlinkSync(join('fixtures', 'seed.ndjson'), join(l.home, 'link.ndjson'));
    await ok(['sandbox', 'snapshot', 'save', join(l.home, 'link.ndjson')], on(l));
    expect(lstatSync(join(l.home, 'link.ndjson')).isSymbolicLink()).toBe(true);
    expect(readFileSync(seedFile, 'utf8').trimEnd().split('\n').slice(1, -1)).toEqual(rows);
    // The file saved over keeps the mode it had (a seed made readable by its owner only stays so).
    expect((statSync(seedFile).mode & 0o777).toString(8)).toBe('600');
    expect(readdirSync(join(l.home, 'fixtures'))).toEqual(['seed.ndjson']);
  });
});

describe('an empty FILE', () => {
  test("save '' and load '' are refused in one line that says so: nothing written, not even a hidden temporary file", async () => {
    const home = newHome();
    mkdirSync(join(home, 'cwd'));
    for (const verb of ['save', 'load']) {
      const r = await pipeline(`cd ${sh(join(home, 'cwd'))} && carbon sandbox snapshot ${verb} ''`, { home });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        2,
        '',
        `error: FILE is empty: give a file name, or - for ${verb === 'save' ? 'stdout' : 'stdin'}.\n`,
      ]);
    }
    expect(readdirSync(join(home, 'cwd'))).toEqual([]);
  });

  test('a FILE under a plain file, or where nothing can be made, is said in one line (exit 2), not an errno code', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    const plain = join(home, 'plain');
    writeFileSync(plain, 'x');
    for (const [verb, said] of [
      ['save', `error: ${plain} is a file, not a directory; nothing was done.\n`],
      ['load', `error: ${plain} is a file, not a directory; nothing was done.\n`],
    ] as const)
      expect(await carbon(['sandbox', 'snapshot', verb, join(plain, 'x.ndjson')], { home })).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: said,
      });
    // /proc is a directory, but no file can be made in it: not "no such directory".
    expect(await carbon(['sandbox', 'snapshot', 'save', '/proc/x.ndjson'], { home })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'error: /proc/x.ndjson cannot be made in /proc; nothing was saved.\n',
    });
    expect(readFileSync(plain, 'utf8')).toBe('x');
  });
});

describe('a home with no sandbox yet', () => {
  test('a file load refuses, or a save that cannot be made, makes no sandbox either: the home as it was', { timeout: SLOW }, async () => {
    const home = newHome();
    const valid = join(home, 'valid.ndjson');
    // A whole snapshot, cut short: refused at its end, after the rest was read.
    const other = newHome();
    await ok(['buy', '--kg', '5'], { home: other });
    await ok(['sandbox', 'snapshot', 'save', valid], { home: other });
    const whole = readFileSync(valid, 'utf8');
    writeFileSync(join(home, 'cut.ndjson'), whole.slice(0, whole.lastIndexOf('\n', whole.length - 2) + 1));
    writeFileSync(join(home, 'bad.ndjson'), 'garbage\n');
    // Every line well made and the checksum right, but the offset's amount is not its kg at its rate:
    // a rule across rows, which only a load (into a scratch ledger here) can check.
    const rows = whole.trimEnd().split('\n').slice(1, -1);
    const forged = [whole.split('\n')[0]!, ...rows.map((l) => (l.startsWith('["offsets",') ? l.replace(',5,20,4000,', ',5,19,4000,') : l))];
    const body = forged.map((l) => `${l}\n`).join('');
    writeFileSync(
      join(home, 'forged.ndjson'),
      `${body}${JSON.stringify({ end: { rows: rows.length, sha256: createHash('sha256').update(body).digest('hex') } })}\n`,
    );
    const files = ['bad.ndjson', 'cut.ndjson', 'forged.ndjson', 'valid.ndjson'];
    for (const args of [
      ['load', join(home, 'bad.ndjson')],
      ['load', join(home, 'cut.ndjson')],
      ['load', join(home, 'forged.ndjson')],
      ['load', join(home, 'forged.ndjson'), '--dry-run'],
      ['save', join(home, 'no-such-dir', 'x.ndjson')],
    ]) {
      const r = await carbon(['sandbox', 'snapshot', ...args], { home });
      expect([args, r.exitCode, r.stdout]).toEqual([args, 2, '']);
      expect(readdirSync(home).sort()).toEqual(files);
    }
    expect((await carbon(['sandbox', 'snapshot', 'load', join(home, 'forged.ndjson')], { home })).stderr).toMatch(
      /the ledger it holds does not add up: offset off_\w+: amount_cents 19 is not 5 kg/,
    );
    // Where the scratch ledger cannot be made, that is said (not the file as missing), and nothing is made.
    const noTmp = await carbon(['sandbox', 'snapshot', 'load', valid], { home, env: { TMPDIR: join(home, 'no-such-tmp') } });
    expect([noTmp.exitCode, noTmp.stdout]).toEqual([1, '']);
    expect(noTmp.stderr).toContain('no-such-tmp cannot hold the scratch ledger a snapshot is checked in (ENOENT); nothing was loaded.');
    expect(readdirSync(home).sort()).toEqual(files);
    // A whole file still makes the sandbox, loaded (its one offset).
    expect((await ok(['sandbox', 'snapshot', 'load', valid], { home })).stderr).toContain('(1 offset, ');
    expect(readdirSync(home)).toContain('data');
  });
});

describe('a check stopped', () => {
  // The check's scratch ledger is removed in a finally: a signal that killed the process left it in TMPDIR.
  test('Ctrl-C or SIGTERM while a file is checked (stdin sending no more): exit 130, one line, nothing left in TMPDIR', {
    timeout: SLOW,
  }, async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    const whole = (await ok(['sandbox', 'snapshot', 'save', '-'], { home })).stdout;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const tmp = join(home, `tmp-${signal}`);
      mkdirSync(tmp);
      const child = execa(process.execPath, [BIN(), 'sandbox', 'snapshot', 'load', '-', '--dry-run'], {
        env: baseEnv(home, { TMPDIR: tmp }),
        extendEnv: false,
        reject: false,
        stdin: 'pipe',
      });
      // The header and the first rows, then nothing more: the check waits, its scratch ledger made.
      child.stdin!.write(`${whole.split('\n').slice(0, 3).join('\n')}\n`);
      while (readdirSync(tmp).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill(signal);
      const r = await child;
      expect([signal, r.exitCode, r.stdout, r.stderr]).toEqual([
        signal,
        130,
        '',
        `Stopped${signal === 'SIGTERM' ? ' (SIGTERM)' : ''}: stdin was not checked, and nothing was loaded.`,
      ]);
      expect(readdirSync(tmp)).toEqual([]);
    }
  });
});

describe.each(STORES)('on %s: a served sandbox', (_name, ledger) => {
  test('carbon serve answers from the loaded ledger at once: the old keys again, the Idempotency-Key replayed', {
    timeout: SLOW,
  }, async () => {
    const l = ledger();
    const served = await serve(l.home, [], l.env);
    const api = (key: string) => ({ CARBON_BASE_URL: served.url, CARBON_API_KEY: key, CARBON_ALLOW_INSECURE_HTTP: '1' });
    const key = (await keysOf(l)).test;
    const first = await json<{ id: string }>(['buy', '--kg', '10', '--idempotency-key', 'served-1'], { home: l.home, env: api(key) });
    const file = join(l.home, 'served.ndjson');
    await ok(['sandbox', 'snapshot', 'save', file], on(l));
    await ok(['sandbox', 'reset', '--yes'], on(l));
    expect((await carbon(['balance'], { home: l.home, env: api(key) })).exitCode).toBe(4);
    await ok(['sandbox', 'snapshot', 'load', file], on(l));
    const again = await json<{ id: string }>(['buy', '--kg', '10', '--idempotency-key', 'served-1'], { home: l.home, env: api(key) });
    expect(again.id).toBe(first.id);
    expect((await json<{ data: Array<{ id: string }> }>(['list'], { home: l.home, env: api(key) })).data.map((o) => o.id)).toEqual([
      first.id,
    ]);
    await served.stop();
  });
});

describe('another home', () => {
  test('loaded where its keys were never known: the load and each local command say so and name the way on', {
    timeout: SLOW,
  }, async () => {
    const from = sqliteLedger();
    const theirs = await keysOf(from);
    const file = join(from.home, 'teammate.ndjson');
    await ok(['sandbox', 'snapshot', 'save', file], on(from));
    // Loaded back where it was saved, the texts are known: nothing more to say.
    expect((await ok(['sandbox', 'snapshot', 'load', file], on(from))).stderr).not.toMatch(/not known here/);

    const to = sqliteLedger();
    const loaded = await ok(['sandbox', 'snapshot', 'load', file], on(to));
    expect(loaded.stderr).toMatch(/\nIts keys' text is not known here .*`carbon sandbox keys create`.*CARBON_API_KEY/);
    for (const [args, create] of [
      [['balance'], 'carbon sandbox keys create'],
      [['buy', '--live', '--kg', '1', '--yes'], 'carbon sandbox keys create --live'],
    ] as const) {
      const r = await carbon([...args], on(to));
      expect(r.exitCode, r.stderr).toBe(4);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/not known here: its ledger came from a snapshot .* or another CARBON_HOME/);
      expect(r.stderr).toContain(`Run \`${create}\``);
      // Starting over would throw the loaded ledger away: not the way on here.
      expect(r.stderr).not.toMatch(/sandbox reset/);
    }
    const asJson = await carbon(['balance', '--json'], on(to));
    expect(JSON.parse(asJson.stderr).error).toMatchObject({ code: 'api_key_missing', message: expect.stringMatching(/not known here/) });
    // Asked for by name, texts not known here are said so on stderr, the list (masked) on stdout.
    const revealed = await carbon(['sandbox', 'keys', '--reveal', '--json'], on(to));
    expect(revealed.exitCode).toBe(0);
    expect((JSON.parse(revealed.stdout) as Array<{ secret?: string }>).filter((k) => k.secret !== undefined)).toEqual([]);
    expect(revealed.stderr).toMatch(/^warning: The full text of 3 keys is not known here .*`carbon sandbox keys create`/);

    // Each way on works: one of the snapshot's keys, or a key made here (used from then on).
    await ok(['balance'], on(to, { CARBON_API_KEY: theirs.test }));
    await ok(['sandbox', 'keys', 'create'], on(to));
    expect((await json<{ available_cents: number }>(['balance'], on(to))).available_cents).toBe(100_000);
  });
});

describe('the rate limit across a load or a reset', () => {
  test("a running carbon serve counts every key afresh after a snapshot is loaded or the sandbox reset (another process's)", async () => {
    const home = newHome();
    await ok(['sandbox', 'rate-limit', '3', '--window', '1h'], { home });
    const server = await serve(home, ['--show-keys']);
    try {
      const hits = async (key: string) => {
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await fetch(`${server.ready.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
          await res.text();
          statuses.push(res.status);
        }
        return statuses;
      };
      const key = server.ready.test_key as string;
      expect(await hits(key)).toEqual([200, 200, 200, 429]);
      // Saved after the window began: loaded, the clock is inside that window again.
      const saved = join(home, 'limited.ndjson');
      await ok(['sandbox', 'snapshot', 'save', saved], { home });
      await ok(['sandbox', 'snapshot', 'load', saved], { home });
      expect(await hits(key)).toEqual([200, 200, 200, 429]);
      await ok(['sandbox', 'reset', '--yes'], { home });
      await ok(['sandbox', 'rate-limit', '3', '--window', '1h'], { home });
      const fresh = (await json<Array<{ default: string | null; secret?: string }>>(['sandbox', 'keys', '--reveal'], { home })).find(
        (k) => k.default === 'test',
      )!.secret!;
      expect(await hits(fresh)).toEqual([200, 200, 200, 429]);
    } finally {
      await server.stop();
    }
  });
});

describe('a large file', () => {
  test('is read a line at a time: a file of 300,000 rows is checked under a 48 MB heap, and refused at its end as damaged', {
    timeout: SLOW,
  }, async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    const lines = (await ok(['sandbox', 'snapshot', 'save', '-'], { home })).stdout.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith('["offsets",'));
    const offset = JSON.parse(lines[at]!) as unknown[];
    // Offsets of unique ids and seqs after the one saved; the end line left as it was, so the file is
    // refused only once it has all been read (its row count and SHA-256 differ).
    const more = Array.from({ length: 300_000 }, (_, i) => {
      const row = [...offset];
      row[1] = i + 2;
      row[2] = `off_sandboxbig${i}`;
      return JSON.stringify(row);
    });
    const file = join(home, 'big.ndjson');
    writeFileSync(file, `${[...lines.slice(0, at + 1), ...more, ...lines.slice(at + 1)].join('\n')}\n`);
    // Each line raced with the stop signal once left a reaction on it for good: 300,000 of them
    // took the heap past 48 MB (V8 then ends the process), where reading a line at a time stays under 30.
    const r = await carbon(['sandbox', 'snapshot', 'load', file, '--dry-run'], {
      home,
      env: { NODE_OPTIONS: '--max-old-space-size=48' },
    });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(/^error: \S*big\.ndjson was not loaded: the checksum: the file is not what was saved \(its SHA-256 differs\)/);
  });
});
