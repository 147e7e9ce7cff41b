/**
 * Storage faults: a damaged ledger, a locked ledger, a read-only data directory, a full disk, and
 * a config or keys file broken by hand. Each gives a clear one-line error naming the file and
 * what to do, exit 1 (or, from `carbon serve`, a 503 the client can retry), and nothing
 * half-written: the files keep their bytes, the ledger adds up, nothing is charged.
 *
 * The read-only directory and the full disk use a small tmpfs (`mount -t tmpfs`), which needs
 * root (CI runs as root); elsewhere those tests are skipped and say why, once on stderr.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  cleanupHomes,
  dataDir,
  http,
  ledgerPath,
  printedError,
  printedOffsetId,
  provision,
  ROOT,
  readLedger,
  requireBuilt,
  runCli,
  tempHome,
} from '../support/children.js';
import { serve } from '../support/cli.js';
import { limit } from '../support/load.js';
import { openSqlite } from '../support/sqlite.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The one line a person reads (warnings aside). */
/**
 * The server's output once it says `says`: its request log is written in batches, at most 50 ms
 * after a line (serve/run.ts, requestLog), so a line may not be there the moment an answer is.
 */
async function logged(server: { output(): string }, says: RegExp): Promise<string> {
  const deadline = Date.now() + limit(5_000);
  while (!says.test(server.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return server.output();
}

function errorLine(stderr: string): string {
  const lines = stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('warning:'));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  return lines[0]!;
}

/** Runs `args` twice, as text and as --json, and checks the storage error both ways. */
async function expectStorageError(home: string, args: string[], file: string, says: RegExp, env: Record<string, string> = {}) {
  const text = await runCli(home, args, { env });
  expect(text.code, text.stderr).toBe(1);
  expect(text.stdout).toBe('');
  const line = errorLine(text.stderr);
  expect(line).toContain(file);
  expect(line).toMatch(says);
  const json = await runCli(home, [...args, '--json'], { env });
  expect(json.code, json.stderr).toBe(1);
  expect(json.stdout).toBe('');
  const err = printedError(json.stderr);
  expect(err?.code).toBe('storage_error');
  expect(err?.message).toContain(file);
  return line;
}

// ---------------------------------------------------------------------------------------------

describe('a damaged ledger', () => {
  test('not a database at all: every command says which file and what to do, and leaves it alone', async () => {
    const home = tempHome();
    await provision(home);
    writeFileSync(ledgerPath(home), 'this is not a database, it was overwritten by mistake\n'.repeat(100));
    const before = sha(ledgerPath(home));
    for (const args of [['balance'], ['buy', '--kg', '1'], ['list']]) {
      await expectStorageError(home, args, ledgerPath(home), /damaged.*Move it aside/);
    }
    expect(sha(ledgerPath(home))).toBe(before);
  });

  test('damaged pages: the same clear error, no purchase half-made', async () => {
    const home = tempHome();
    await provision(home);
    for (let i = 0; i < 3; i++) expect((await runCli(home, ['buy', '--kg', '5'])).code).toBe(0);
    const bytes = readFileSync(ledgerPath(home));
    // Keep the header page (it says "SQLite format 3"); overwrite every table page after it.
    bytes.fill(0xab, 4096);
    writeFileSync(ledgerPath(home), bytes);
    const before = sha(ledgerPath(home));
    for (const args of [['buy', '--kg', '1'], ['balance']]) {
      await expectStorageError(home, args, ledgerPath(home), /damaged \(database disk image is malformed\).*Move it aside/);
    }
    expect(sha(ledgerPath(home))).toBe(before);
  });

  test('a directory where the ledger should be: said as such, not as permissions, and left alone', async () => {
    const home = tempHome();
    mkdirSync(ledgerPath(home), { recursive: true });
    await expectStorageError(
      home,
      ['balance'],
      ledgerPath(home),
      /is a directory, not a file\. Move it aside: carbon makes a new ledger there\.$/,
    );
    // A purchase met it as its ledger opened: it says nothing was bought.
    await expectStorageError(
      home,
      ['buy', '--kg', '1'],
      ledgerPath(home),
      /is a directory, not a file\. Nothing was bought\. Move it aside: carbon makes a new ledger there\.$/,
    );
    expect(readdirSync(ledgerPath(home))).toEqual([]);
  });

  test('a table carbon made, dropped: every command that meets it says the ledger is damaged, not "Unexpected error", and buys nothing', async () => {
    const home = tempHome();
    await provision(home);
    expect((await runCli(home, ['buy', '--kg', '5'])).code).toBe(0);
    const db = openSqlite(ledgerPath(home));
    db.exec('DROP TABLE offsets');
    db.close();
    const damaged = /is damaged: it lacks a part carbon made \(no such table: offsets\)\..*Move it aside/;
    for (const args of [['list'], ['show', 'off_x'], ['impact']]) await expectStorageError(home, args, ledgerPath(home), damaged);
    const line = await expectStorageError(home, ['buy', '--kg', '1'], ledgerPath(home), damaged);
    expect(line).toContain('Nothing was bought.');
    expect(JSON.parse((await runCli(home, ['balance', '--json'])).stdout).available_cents).toBe(99_980);
  });

  test('some pages damaged: a batch that meets one stops saying so, and what to do first', async () => {
    const home = tempHome();
    await provision(home);
    for (let i = 0; i < 2; i++) expect((await runCli(home, ['buy', '--kg', '5'])).code).toBe(0);
    // Pages 3 to 6 zeroed (the offsets' and their charges'): the balance and the keys still read.
    const bytes = readFileSync(ledgerPath(home));
    bytes.fill(0, 3 * 4096, 7 * 4096);
    writeFileSync(ledgerPath(home), bytes);
    writeFileSync(join(home, 'rows.csv'), 'reference,kg\nr1,1\n');
    const r = await runCli(home, ['buy', '--from-csv', join(home, 'rows.csv')]);
    expect(r.code).toBe(10);
    // Before: "(the batch stopped at row 1: storage_error). Run the same command again", which meets it again.
    expect(errorLine(r.stderr)).toMatch(
      /stopped at row 1: the ledger \S+ is damaged \(database disk image is malformed\)\)\. Move it aside/,
    );
  });

  test('some pages damaged under carbon serve: 503 without Retry-After (trying again will not mend it), and the log says what to do', async () => {
    const home = tempHome();
    const key = (await provision(home)).test;
    for (let i = 0; i < 2; i++) expect((await runCli(home, ['buy', '--kg', '5'])).code).toBe(0);
    const bytes = readFileSync(ledgerPath(home));
    bytes.fill(0, 3 * 4096, 7 * 4096);
    writeFileSync(ledgerPath(home), bytes);
    const server = await serve(home);
    try {
      const res = await http(`${server.url}/offsets`, { key, idem: 'damaged-1', body: '{"kg":3}' });
      expect([res.status, res.headers['retry-after'], (res.json as { error: { code: string } }).error.code]).toEqual([
        503,
        undefined,
        'service_unavailable',
      ]);
      expect((res.json as { error: { message: string } }).error.message).toContain("until its operator acts on what the server's log says");
    } finally {
      await server.stop();
    }
    // The log (written by the stop at the latest) says what, and what to do.
    expect(server.stderr()).toMatch(/is damaged \(database disk image is malformed\)\. Move it aside/);
  });

  test('written by a newer carbon: every command says to upgrade, and leaves the file alone', async () => {
    const home = tempHome();
    await provision(home);
    const db = openSqlite(ledgerPath(home));
    db.exec('PRAGMA user_version = 99');
    db.close();
    const before = sha(ledgerPath(home));
    for (const args of [['balance'], ['buy', '--kg', '1'], ['sandbox', 'status']]) {
      await expectStorageError(home, args, ledgerPath(home), /written by a newer carbon .*version 99.*Upgrade carbon/);
    }
    expect(sha(ledgerPath(home))).toBe(before);
  });

  test('carbon serve on a damaged ledger refuses to start, with the same one line', async () => {
    const home = tempHome();
    await provision(home);
    writeFileSync(ledgerPath(home), 'garbage');
    const r = await runCli(home, ['serve', '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorLine(r.stderr)).toContain(ledgerPath(home));
  });
});

// ---------------------------------------------------------------------------------------------

/** A process that holds the ledger's lock until it is killed. */
async function holdLock(path: string, how: 'write' | 'exclusive-mode'): Promise<ChildProcess> {
  const script = `
    const db = new (process.getBuiltinModule('node:sqlite').DatabaseSync)(process.argv[1]);
    if (process.argv[2] === 'exclusive-mode') { db.exec('PRAGMA locking_mode = EXCLUSIVE'); db.exec('BEGIN EXCLUSIVE'); db.exec('COMMIT'); }
    else db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script, path, how], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => resolve());
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return child;
}

function release(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a locked ledger', () => {
  const FAST = { CARBON_BUSY_TIMEOUT_MS: '300' };

  test('another process holds the write lock past the busy timeout: buy fails clearly and charges nothing; reads go on', async () => {
    const home = tempHome();
    await provision(home);
    const before = readLedger(home);
    const holder = await holdLock(ledgerPath(home), 'write');
    try {
      await expectStorageError(home, ['buy', '--kg', '1'], ledgerPath(home), /locked by another process.*try again/i, FAST);
      // WAL lets readers through a writer's lock.
      const balance = await runCli(home, ['balance', '--json'], { env: FAST });
      expect(balance.code, balance.stderr).toBe(0);
      expect(JSON.parse(balance.stdout).available_cents).toBe(before.balances[0]);
    } finally {
      await release(holder);
    }
    const after = readLedger(home);
    expect(after.problems).toEqual([]);
    expect(after.offsets).toEqual(before.offsets);
    expect(after.balances).toEqual(before.balances);
    // And once the lock is gone, the same command works.
    expect((await runCli(home, ['buy', '--kg', '1'])).code).toBe(0);
  });

  test('a process holding the file in exclusive locking mode: even reads fail clearly', async () => {
    const home = tempHome();
    await provision(home);
    const holder = await holdLock(ledgerPath(home), 'exclusive-mode');
    try {
      await expectStorageError(home, ['balance'], ledgerPath(home), /locked by another process/, FAST);
    } finally {
      await release(holder);
    }
  });

  test('carbon serve on a locked ledger answers 503 with Retry-After; the retry with the same key buys once', async () => {
    const home = tempHome();
    const key = (await provision(home)).test;
    const server = await serve(home, [], FAST);
    const cliHome = tempHome();
    const env = { ...FAST, CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
    try {
      const holder = await holdLock(ledgerPath(home), 'write');
      try {
        const res = await http(`${server.url}/offsets`, { key, idem: 'locked-1', body: '{"kg":3}' });
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect((res.json as { error: { code: string } }).error.code).toBe('service_unavailable');
        const r = await runCli(cliHome, ['buy', '--kg', '4', '--max-retries', '0', '--idempotency-key', 'locked-2'], { env });
        expect(r.code).toBe(1);
        expect(errorLine(r.stderr)).toMatch(/may or may not have been made.*--idempotency-key locked-2/);
      } finally {
        await release(holder);
      }
      expect(readLedger(home).offsets).toEqual([]);
      const again = await runCli(cliHome, ['buy', '--kg', '4', '--idempotency-key', 'locked-2', '--json'], { env });
      expect(again.code, again.stderr).toBe(0);
      const twice = await runCli(cliHome, ['buy', '--kg', '4', '--idempotency-key', 'locked-2', '--json'], { env });
      expect(printedOffsetId(twice.stdout)).toBe(printedOffsetId(again.stdout));
      const ledger = readLedger(home);
      expect(ledger.problems).toEqual([]);
      expect(ledger.offsets.map((o) => o.id)).toEqual([printedOffsetId(again.stdout)]);
      // The server logged the storage trouble for its operator, not a stack trace.
      const output = await logged(server, /locked by another process/);
      expect(output).toMatch(/locked by another process/);
      expect(output).not.toMatch(/\n\s+at /);
    } finally {
      await server.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** Why no tmpfs can be mounted here, once a mount has failed. */
let unmountable: string | undefined;

/**
 * A fresh small tmpfs, or the reason this process may not mount one: said once on stderr, as
 * every skipped suite says why. In CI (which runs as root) a failed mount fails the test instead.
 */
function smallDisk(kib: number): { dir: string; remountReadOnly(): void; unmount(): void } | string {
  const dir = tempHome('carbon-disk-');
  if (unmountable !== undefined) return unmountable;
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir]);
  if (r.status !== 0) {
    unmountable = `cannot mount a tmpfs here (${r.stderr.toString().trim() || 'mount failed'}); run as root`;
    if (process.env.CI === 'true') throw new Error(`${unmountable}: in CI the small-disk tests must run (.ci/run runs as root).`);
    process.stderr.write(`Storage-fault tests on a small disk (read-only, full) skipped: ${unmountable}.\n`);
    return unmountable;
  }
  return {
    dir,
    remountReadOnly: () => {
      const ro = spawnSync('mount', ['-o', 'remount,ro', dir]);
      if (ro.status !== 0) throw new Error(`remount ro failed: ${ro.stderr}`);
    },
    unmount: () => void spawnSync('umount', ['-l', dir]),
  };
}

/** Fills the file system holding `dir` to the last byte. */
function fill(dir: string): string {
  const filler = join(dir, 'filler');
  const { bavail, bsize } = statfsSync(dir);
  writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 4096)));
  for (const size of [4096, 512, 1]) {
    try {
      for (;;) writeFileSync(filler, Buffer.alloc(size), { flag: 'a' });
    } catch {
      // ENOSPC: next, smaller.
    }
  }
  return filler;
}

describe('a read-only data directory', () => {
  test('every command fails with one line naming the ledger and saying what to do; nothing changes', async (ctx) => {
    const disk = smallDisk(2048);
    if (typeof disk === 'string') return ctx.skip(disk);
    try {
      const home = join(disk.dir, 'home');
      await provision(home);
      expect((await runCli(home, ['buy', '--kg', '2'])).code).toBe(0);
      const before = sha(ledgerPath(home));
      disk.remountReadOnly();
      for (const args of [['buy', '--kg', '1'], ['balance']]) {
        await expectStorageError(home, args, ledgerPath(home), /cannot be written.*set CARBON_HOME to a writable one/);
      }
      expect(sha(ledgerPath(home))).toBe(before);
      // A first run whose CARBON_HOME cannot be created at all.
      await expectStorageError(join(disk.dir, 'fresh'), ['balance'], join(disk.dir, 'fresh', 'data', 'ledger.db'), /cannot be written/);
    } finally {
      disk.unmount();
    }
  });
});

describe('a full disk under carbon serve', () => {
  test('reads go on from what it holds: offsets due show placed, though the placement cannot be recorded (200, not 503)', async (ctx) => {
    const disk = smallDisk(4096);
    if (typeof disk === 'string') return ctx.skip(disk);
    try {
      const home = join(disk.dir, 'home');
      mkdirSync(home);
      const key = (await provision(home)).test;
      const server = await serve(home);
      try {
        for (const idem of ['due-1', 'due-2'])
          expect((await http(`${server.url}/offsets`, { key, idem, body: '{"kg":1}' })).status).toBe(201);
        expect((await runCli(home, ['sandbox', 'clock', 'advance', '5s'])).code).toBe(0);
        const filler = fill(disk.dir);
        for (const path of ['/offsets', '/impact']) {
          const r = await http(`${server.url}${path}`, { key });
          expect([path, r.status], r.text).toEqual([path, 200]);
        }
        const listed = JSON.parse((await http(`${server.url}/offsets`, { key })).text) as { data: Array<{ status: string }> };
        expect(listed.data.map((o) => o.status)).toEqual(['placed', 'placed']);
        rmSync(filler);
      } finally {
        await server.stop();
      }
    } finally {
      disk.unmount();
    }
  });
});

describe('a full disk', () => {
  test(
    'carbon buy fails clearly and charges nothing; with space again, it works and the ledger is exact',
    async (ctx) => {
      const disk = smallDisk(2048);
      if (typeof disk === 'string') return ctx.skip(disk);
      try {
        const home = join(disk.dir, 'home');
        await provision(home);
        const bought: string[] = [];
        for (let i = 1; i <= 3; i++) {
          const r = await runCli(home, ['buy', '--kg', String(i), '--json']);
          expect(r.code, r.stderr).toBe(0);
          bought.push(printedOffsetId(r.stdout)!);
        }
        const keysBefore = sha(join(dataDir(home), 'sandbox-keys.json'));
        const filler = fill(disk.dir);
        // No room for the WAL index (SQLITE_IOERR_SHMSIZE) or for the WAL itself (SQLITE_FULL): either way, free space.
        await expectStorageError(
          home,
          ['buy', '--kg', '7'],
          ledgerPath(home),
          /(is full|could not be read or written).*free (some )?space/i,
        );
        // A config change on a full disk fails too, and leaves no half-written file behind.
        const config = await runCli(home, ['config', 'set', 'mode', 'live']);
        expect(config.code, config.stderr).toBe(1);
        expect(errorLine(config.stderr)).toMatch(new RegExp(`${join(home, 'config.json')} could not be written.*Free some space`));
        expect(existsSync(join(home, 'config.json'))).toBe(false);

        rmSync(filler);
        const files = readdirSync(home);
        expect(files.filter((f) => f !== 'data')).toEqual([]);
        expect(sha(join(dataDir(home), 'sandbox-keys.json'))).toBe(keysBefore);
        const ledger = readLedger(home);
        expect(ledger.problems).toEqual([]);
        expect(ledger.offsets.map((o) => o.id)).toEqual(bought);
        const r = await runCli(home, ['buy', '--kg', '7', '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(readLedger(home).offsets).toHaveLength(4);
      } finally {
        disk.unmount();
      }
    },
    limit(60_000),
  );

  test('carbon serve on a full disk answers 503; the purchase retried with its key after space is freed is made once', async (ctx) => {
    const disk = smallDisk(4096);
    if (typeof disk === 'string') return ctx.skip(disk);
    try {
      const home = join(disk.dir, 'home');
      mkdirSync(home);
      const key = (await provision(home)).test;
      const server = await serve(home);
      const statuses: number[] = [];
      try {
        const ok = await http(`${server.url}/offsets`, { key, idem: 'before-full', body: '{"kg":1}' });
        expect(ok.status).toBe(201);
        const filler = fill(disk.dir);
        // The server's WAL grows with each purchase until there is no room for the next.
        for (let i = 0; i < 40 && !statuses.includes(503); i++) {
          statuses.push((await http(`${server.url}/offsets`, { key, idem: `full-${i}`, body: '{"kg":2}' })).status);
        }
        expect(statuses.at(-1)).toBe(503);
        expect(statuses.every((s) => s === 201 || s === 503)).toBe(true);
        const failedKey = `full-${statuses.length - 1}`;
        rmSync(filler);
        const retry = await http(`${server.url}/offsets`, { key, idem: failedKey, body: '{"kg":2}' });
        expect(retry.status, retry.text).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
        const replay = await http(`${server.url}/offsets`, { key, idem: failedKey, body: '{"kg":2}' });
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(await logged(server, /is full/)).toMatch(/is full/);
      } finally {
        await server.stop();
      }
      const ledger = readLedger(home);
      expect(ledger.problems).toEqual([]);
      // One offset per purchase the clients saw made (the first, those before the disk filled, the
      // retry): the refused one was not half-made.
      expect(ledger.offsets.length).toBe(1 + statuses.filter((s) => s === 201).length + 1);
    } finally {
      disk.unmount();
    }
  });
});

describe('a full disk, a crash, then space freed', () => {
  test(
    'carbon serve killed on a full disk: the next one copies the WAL back, buys every purchase, and keeps the WAL bounded',
    async (ctx) => {
      const disk = smallDisk(3072);
      if (typeof disk === 'string') return ctx.skip(disk);
      try {
        const home = join(disk.dir, 'home');
        mkdirSync(home);
        const key = (await provision(home)).test;
        // A third of the disk taken by something else, freed later: less room than the ledger's
        // WAL grows to before it is checkpointed.
        const filler = join(disk.dir, 'filler');
        writeFileSync(filler, Buffer.alloc(1024 * 1024));
        const first = await serve(home);
        let full = false;
        for (let round = 0; !full && round < 400; round++) {
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              http(`${first.url}/offsets`, { key, idem: `fill-${round}-${i}`, body: `{"kg":1,"reference":"${'r'.repeat(190)}"}` }),
            ),
          );
          expect(answers.every((a) => a.status === 201 || a.status === 503)).toBe(true);
          full = answers.some((a) => a.status === 503);
        }
        expect(full).toBe(true);
        await first.kill();
        rmSync(filler);

        const second = await serve(home);
        try {
          const statuses: number[] = [];
          for (let i = 0; i < 40; i++)
            statuses.push((await http(`${second.url}/offsets`, { key, idem: `after-${i}`, body: '{"kg":1}' })).status);
          expect(statuses.filter((s) => s !== 201)).toEqual([]);
          // Checkpointed every 1 MiB, and reset: at most that and the last purchases.
          expect(statSync(`${ledgerPath(home)}-wal`).size).toBeLessThanOrEqual(1.25 * 1024 * 1024);
        } finally {
          await second.stop();
        }
        // Closed cleanly: the WAL is copied back and gone, and the freed space is free again.
        expect(existsSync(`${ledgerPath(home)}-wal`)).toBe(false);
        expect(statfsSync(disk.dir).bavail * statfsSync(disk.dir).bsize).toBeGreaterThan(512 * 1024);
        expect(readLedger(home).problems).toEqual([]);
      } finally {
        disk.unmount();
      }
    },
    limit(180_000),
  );
});

// ---------------------------------------------------------------------------------------------

describe('files broken by hand', () => {
  test.each([
    ['not JSON', '{ "profiles": { "default": { "test_key": '],
    ['not an object', '[1, 2, 3]'],
    ['a profile of the wrong type', '{"profiles": {"default": "ck_test_x"}}'],
    ['an unknown field', '{"profiles": {"default": {"tset_key": "ck_test_x"}}}'],
    ['a key that is not text', '{"profiles": {"default": {"test_key": 12345}}}'],
  ])(
    'config.json %s: one line naming the file and what to do, exit 1, the file untouched',
    async (_name, content) => {
      const home = tempHome();
      await provision(home);
      const path = join(home, 'config.json');
      writeFileSync(path, content, { mode: 0o600 });
      for (const args of [['balance'], ['buy', '--kg', '1'], ['config', 'set', 'mode', 'live']]) {
        const r = await runCli(home, args);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stdout).toBe('');
        const line = errorLine(r.stderr);
        expect(line).toContain(path);
        expect(line).toMatch(/Fix it by hand, or move it aside/);
        const json = await runCli(home, [...args, '--json']);
        expect(json.code).toBe(1);
        expect(printedError(json.stderr)?.message).toContain(path);
      }
      expect(readFileSync(path, 'utf8')).toBe(content);
      expect(readdirSync(home).sort()).toEqual(['config.json', 'data']);
      expect(readLedger(home).offsets).toEqual([]);
    },
    limit(60_000),
  );

  test('a mode written by hand that is none: the commands that use it refuse it (exit 2), carbon config shows and mends it', async () => {
    const home = tempHome();
    await provision(home);
    const path = join(home, 'config.json');
    writeFileSync(path, '{"profiles": {"default": {"mode": "prod"}}}', { mode: 0o600 });
    for (const args of [['balance'], ['buy', '--kg', '1']]) {
      const r = await runCli(home, args);
      expect([r.code, r.stdout, errorLine(r.stderr)]).toEqual([
        2,
        '',
        'error: Profile default has mode "prod", which is neither test nor live; nothing was sent. Set it: `carbon config set mode test` (or live).',
      ]);
    }
    // Before: `carbon config` itself refused the file (exit 1), so the fix it names could not be run.
    expect((await runCli(home, ['config', 'list'])).stdout).toBe('default\tmode\tprod\n');
    expect((await runCli(home, ['config', 'set', 'mode', 'test'])).code).toBe(0);
    expect((await runCli(home, ['balance'])).code).toBe(0);
    expect(readLedger(home).offsets).toEqual([]);
  });

  test('sandbox-keys.json broken: one line naming it and what to do, exit 1, nothing bought', async () => {
    const home = tempHome();
    await provision(home);
    const path = join(dataDir(home), 'sandbox-keys.json');
    writeFileSync(path, '{"defaults": {"test": ', { mode: 0o600 });
    const line = await expectStorageError(home, ['buy', '--kg', '1'], path, /cannot be read.*Fix or delete it/);
    expect(line).toContain(path);
    expect(readFileSync(path, 'utf8')).toBe('{"defaults": {"test": ');
    expect(readLedger(home).offsets).toEqual([]);
  });

  test('sandbox-keys.json edited into JSON that is no keys file (a key that is no text): said as such, not "No API key … give CarbonClient an apiKey"', async () => {
    const home = tempHome();
    await provision(home);
    const path = join(dataDir(home), 'sandbox-keys.json');
    const vault = JSON.parse(readFileSync(path, 'utf8')) as { defaults: { test: string }; secrets: Record<string, unknown> };
    vault.secrets[vault.defaults.test] = 42;
    writeFileSync(path, JSON.stringify(vault), { mode: 0o600 });
    await expectStorageError(home, ['buy', '--kg', '1'], path, /cannot be read.*Fix or delete it/);
    expect(readLedger(home).offsets).toEqual([]);
  });
});
