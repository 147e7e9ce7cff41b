import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { copyBinary, ROOT } from '../support/binary.js';
import { ledgerPath } from '../support/children.js';
import { BIN, baseEnv, carbon, carbonTty, homes, json, ok, plain, sandboxKeys, serve, TTY } from '../support/cli.js';
import { limit } from '../support/load.js';
import { openSqlite, scalar } from '../support/sqlite.js';

/**
 * What bin/carbon.cjs does before the CLI loads: `--version` and `--help` into a pipe answered
 * without loading it (the same text the CLI prints), and the V8 code cache written to the user's
 * cache directory when the install cannot be written.
 */

const newHome = homes();

/** Runs the bin in `home` with `probe`, a script's text written there, preloaded (`--require`). */
function probed(home: string, probe: string, args: string[], env: Record<string, string> = {}) {
  const file = join(home, 'probe.cjs');
  writeFileSync(file, probe);
  return execa(process.execPath, ['--require', file, BIN(), ...args], { env: baseEnv(home, env), extendEnv: false });
}

describe('--version and --help without loading the CLI', () => {
  test("--version and -v print package.json's version, as the CLI would", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const home = newHome();
    for (const flag of ['--version', '-v']) {
      const r = await ok([flag], { home });
      expect(r.stdout).toBe(`${version}\n`);
      expect(r.stderr).toBe('');
    }
  });

  test("--help into a pipe is exactly the CLI's own help (`carbon help`), and a command's help is the CLI's", async () => {
    const home = newHome();
    const fast = await ok(['--help'], { home });
    const cli = await ok(['help'], { home });
    expect(fast.stdout).toMatch(/^Usage: carbon \[options\] \[command\]\n/);
    expect(fast.stdout).toContain('\nCommands:\n');
    expect(fast.stdout).toBe(cli.stdout);
    expect((await ok(['-h'], { home })).stdout).toBe(cli.stdout);
    // On a terminal the CLI answers, fitting the help to the terminal's width.
    const tty = await execa('script', ['-qec', `stty cols 200; exec ${process.execPath} ${BIN()} --help`, '/dev/null'], {
      env: baseEnv(home),
      extendEnv: false,
      reject: false,
      input: '',
    });
    const longest = (text: string) => Math.max(...text.split(/\r?\n/).map((l) => l.length));
    expect(String(tty.stdout)).toContain('Usage: carbon [options] [command]');
    expect(longest(String(tty.stdout))).toBeGreaterThan(longest(fast.stdout) + 20);
    // Anything more than the one flag is the CLI's to answer, such as a command's own help.
    expect((await ok(['buy', '--help'], { home })).stdout).toMatch(/^Usage: carbon buy \[options\]/);
  });
  test('--help into a full non-blocking pipe waits for the reader and writes the whole text (EAGAIN)', async () => {
    const home = newHome();
    const fifo = join(home, 'stdout.fifo');
    await execa('mkfifo', [fifo]);
    // The reader's end, opened first (non-blocking, so the open does not wait for a writer) and
    // read only once carbon is waiting.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    // carbon's stdout: that FIFO, one page of room (the help is longer) and O_NONBLOCK, as a
    // parent sharing its own non-blocking pipe would hand it over.
    const wrap = `import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 4096)
os.dup2(fd, 1)
fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK)
os.execv(sys.argv[2], sys.argv[2:])`;
    const child = execa('python3', ['-c', wrap, fifo, process.execPath, BIN(), '--help'], {
      env: baseEnv(home),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      stdout: 'ignore',
      timeout: limit(20_000),
    });
    const written = () => {
      try {
        return Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))?.[1] ?? 0);
      } catch {
        return -1; // Gone: it has exited.
      }
    };
    let exited = false;
    void child.finally(() => {
      exited = true;
    });
    // Until the first page is in the pipe and carbon is still running (waiting for room), or it ends.
    while (!exited && written() < 4096) await new Promise((r) => setTimeout(r, 10));
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(65536);
    for (;;) {
      let n: number;
      try {
        n = readSync(reader, buffer);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      if (n === 0 && exited) break;
      if (n === 0) await new Promise((r) => setTimeout(r, 10));
      else chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    closeSync(reader);
    const r = await child;
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(Buffer.concat(chunks).toString()).toBe(readFileSync(join(dirname(BIN()), '..', 'dist', 'help.txt'), 'utf8'));
  });
});

describe('the quick start: balance and impact from dist/quick.cjs', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  test('balance and impact run from the quick bundle, anything more from the whole CLI, with the same answers', async () => {
    const { dir, bin } = copyBinary();
    made.push(dir);
    const dist = join(dir, 'dist');
    const caches = () =>
      readdirSync(dist)
        .filter((f) => f.endsWith('.v8cache'))
        .map((f) => f.split('.')[0]);
    for (const file of readdirSync(dist)) if (file.endsWith('.v8cache')) rmSync(join(dist, file));
    const home = newHome();
    const run = (args: string[]) => execa(process.execPath, [bin, ...args], { env: baseEnv(home), extendEnv: false, reject: false });

    // The first run of each bundle writes its code cache, quick.cjs one for each command: which
    // bundle ran, and for which command, shows in dist/.
    const quick = await run(['balance', '--json']);
    expect(quick.exitCode).toBe(0);
    expect(caches()).toEqual(['quick-balance']);
    expect((await run(['impact', '--live', '--json'])).exitCode).toBe(0);
    expect(caches().sort()).toEqual(['quick-balance', 'quick-impact']);
    const whole = await run(['balance', '--json', '--max-retries', '2']);
    expect(caches().sort()).toEqual(['cli', 'quick-balance', 'quick-impact']);
    expect(whole.stdout).toBe(quick.stdout);
    expect(JSON.parse(quick.stdout)).toMatchObject({ object: 'balance', livemode: false });

    // dist/ is made whole by each build, so a cache written there removes nothing: one that looks
    // like an earlier build's may be the next build's, put in place while this ran.
    const written = readdirSync(dist).find((f) => f.startsWith('quick-balance.'))!;
    const other = written.replace(/^quick-balance\.[0-9a-f]{16}\./, `quick-balance.${'0'.repeat(16)}.`);
    writeFileSync(join(dist, other), 'x');
    rmSync(join(dist, written));
    expect((await run(['balance', '--json'])).exitCode).toBe(0);
    expect(readdirSync(dist)).toEqual(expect.arrayContaining([written, other]));

    // That the two answer alike, for every flag, variable, config and terminal: quick-parity.test.ts.
    // An install without one of its bundles says so in one line, whichever the command would load.
    rmSync(join(dist, 'quick.cjs'));
    for (const args of [['balance'], ['list']]) {
      const broken = await run(args);
      // Named as the bin sees it: Node runs a main module from its real path (a checkout whose node_modules is a link).
      expect([broken.exitCode, broken.stdout, broken.stderr]).toEqual([
        1,
        '',
        `carbon: ${realpathSync(dist)} is incomplete; install the package again.`,
      ]);
    }
  });

  test("a remote API and a PostgreSQL ledger are the whole CLI's: the quick bundle holds the local SQLite engine only", async () => {
    const { dir, bin } = copyBinary();
    made.push(dir);
    const dist = join(dir, 'dist');
    const home = newHome();
    const run = (args: string[], env: Record<string, string>) =>
      execa(process.execPath, [bin, ...args], { env: { ...baseEnv(home), ...env }, extendEnv: false, reject: false });
    const nothing = { CARBON_MAX_RETRIES: '0', CARBON_TIMEOUT: '2' };
    for (const [code, env] of [
      [
        'connection_error',
        { ...nothing, CARBON_BASE_URL: 'http://127.0.0.1:1/api/v1', CARBON_API_KEY: 'ck_test_notakeyofanysandbox000000' },
      ],
      ['storage_error', { ...nothing, CARBON_DATABASE_URL: 'postgres://carbon@127.0.0.1:1/carbon', CARBON_PG_CONNECT_TIMEOUT_MS: '2000' }],
    ] as const) {
      const r = await run(['balance', '--json'], env);
      expect([r.exitCode, r.stdout]).toEqual([1, '']);
      expect(JSON.parse(r.stderr)).toMatchObject({ error: { code } });
    }
    // The answers above came from cli.cjs: it alone holds the HTTP transport (its user agent) and
    // the PostgreSQL store (its statement timeout); quick.cjs, had it gone on, would have failed.
    const text = (name: string) => readFileSync(join(dist, name), 'latin1');
    for (const marker of ['carbon-cli', 'statement_timeout']) {
      expect(text('cli.cjs')).toContain(marker);
      expect(text('quick.cjs')).not.toContain(marker);
    }
  });

  test("--help and a mistake after balance or impact are the whole CLI's to answer", async () => {
    const home = newHome();
    const run = (args: string[]) => execa(process.execPath, [BIN(), ...args], { env: baseEnv(home), extendEnv: false, reject: false });
    const help = await run(['balance', '--help']);
    expect(help.stdout).toMatch(/^Usage: carbon balance \[options\]/);
    expect((await run(['impact', 'extra'])).exitCode).toBe(2);
  });
});

/** strace, to see what a command syncs: .ci/run installs it; elsewhere the test says why it is skipped. */
const STRACE = spawnSync('strace', ['-V']).status === 0;
if (!STRACE) {
  if (process.env.CI === 'true') throw new Error('strace is missing: in CI the sync tests must run (.ci/run installs it).');
  process.stderr.write('startup.test.ts: the WAL sync test skipped: no strace here (apt-get install strace).\n');
}

describe('what a read leaves of the ledger: its journal entry in the WAL, copied back by the next write', () => {
  const wal = (home: string) => `${ledgerPath(home)}-wal`;

  test('reads append to the WAL and leave it; a purchase copies it all back into ledger.db and removes it', async () => {
    const home = newHome();
    await ok(['balance', '--json'], { home }); // provisions the ledger: a write, closed as any write is
    expect(existsSync(wal(home))).toBe(false);
    await ok(['balance', '--json'], { home });
    await ok(['impact', '--json'], { home });
    // Left for the next command to append to (no new WAL, no close-time checkpoint: sqlite-store.ts, close).
    expect(statSync(wal(home)).size).toBeGreaterThan(0);
    expect(statSync(wal(home)).size).toBeLessThanOrEqual(128 * 1024);
    const logged = (await ok(['logs', '--json'], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { path: string });
    expect(logged.map((e) => e.path)).toEqual(['/api/v1/impact', '/api/v1/balance', '/api/v1/balance']);

    await ok(['buy', '--kg', '1'], { home });
    expect(existsSync(wal(home))).toBe(false);
    // ledger.db alone holds everything: the reads' entries and the purchase.
    const copy = join(newHome(), 'ledger.db');
    cpSync(ledgerPath(home), copy);
    const db = openSqlite(copy, { readonly: true });
    try {
      expect(scalar(db, "SELECT COUNT(*) FROM journal WHERE path IN ('/api/v1/balance', '/api/v1/impact')")).toBe(3);
      expect(scalar(db, 'SELECT COUNT(*) FROM offsets')).toBe(1);
    } finally {
      db.close();
    }
  });

  test.runIf(STRACE)('a read that starts a new WAL syncs nothing to disk; a purchase still syncs the WAL and the ledger', async () => {
    const home = newHome();
    /** Runs the command under strace; the fsync and fdatasync calls it made. */
    const syncs = async (args: string[]): Promise<string[]> => {
      const trace = join(home, 'trace.txt');
      rmSync(trace, { force: true });
      const r = await execa('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync', '-o', trace, process.execPath, BIN(), ...args], {
        env: baseEnv(home),
        extendEnv: false,
        reject: false,
      });
      expect([r.exitCode, r.stderr]).toEqual([0, '']);
      return readFileSync(trace, 'utf8')
        .split('\n')
        .filter((line) => /\bf(data)?sync\(/.test(line));
    };
    await ok(['balance', '--json'], { home }); // provisions the ledger: a write, closed as any write is
    expect(existsSync(wal(home))).toBe(false);
    // Its journal entry starts the WAL: no header sync, no directory sync (sqlite-journal.ts).
    expect(await syncs(['balance', '--json'])).toEqual([]);
    expect(statSync(wal(home)).size).toBeGreaterThan(0);
    // The purchase after it syncs as before: the WAL, then the ledger it is copied into at the close.
    expect((await syncs(['buy', '--kg', '1', '--json'])).length).toBeGreaterThanOrEqual(2);
    expect(existsSync(wal(home))).toBe(false);
    const logged = (await ok(['logs', '--json'], { home })).stdout.trim().split('\n');
    expect(logged.map((l) => (JSON.parse(l) as { path: string }).path)).toEqual(['/api/v1/offsets', '/api/v1/balance', '/api/v1/balance']);
  });

  test('a WAL past 128 KiB is copied back and removed by the read that finds it', async () => {
    const home = newHome();
    await ok(['balance', '--json'], { home });
    // Another process commits 20 journal entries of 3 KB each, one a transaction (two pages each), and ends
    // without closing: a WAL between 128 KiB and the 256 KiB an opener copies back at once.
    const fill = `const db = new (require('node:sqlite').DatabaseSync)(${JSON.stringify(ledgerPath(home))});
      const insert = db.prepare("INSERT INTO journal (request_id, model_ms, real_ms, method, path, query, status, duration_us, replayed, instance, request_body, response_body) VALUES (?, 0, 0, 'GET', '/api/v1/balance', '', 200, 1, 0, 'test', '', ?)");
      for (let i = 0; i < 20; i++) insert.run('req_fill' + i, 'x'.repeat(3000));
      process.exit(0);`;
    await execa(process.execPath, ['-e', fill]);
    expect(statSync(wal(home)).size).toBeGreaterThan(128 * 1024);
    expect(statSync(wal(home)).size).toBeLessThanOrEqual(256 * 1024);
    await ok(['balance', '--json'], { home });
    expect(existsSync(wal(home))).toBe(false);
    const db = openSqlite(ledgerPath(home), { readonly: true });
    try {
      expect(scalar(db, "SELECT COUNT(*) FROM journal WHERE request_id LIKE 'req_fill%'")).toBe(20);
    } finally {
      db.close();
    }
  });
});

describe("what a read loads of Node's own modules", () => {
  // node:os and node:perf_hooks (eleven modules) cost a one-shot command a fifth of `node -e 0`'s
  // start-up between them; node:crypto and node:http more. A read needs none of them: the
  // machine's name, the clock, the key's digest and the ids come from src/platform.
  test('balance, list, impact and a recorded request load no node:os, node:perf_hooks, node:crypto, node:net or node:http', async () => {
    const home = newHome();
    await ok(['balance', '--json'], { home });
    const list = join(home, 'loaded.txt');
    // Preloaded: at exit, the builtins the process loaded (fs is loaded before any script runs).
    const probe = `process.on('exit', () => require('node:fs').appendFileSync(${JSON.stringify(list)}, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).join('\\n') + '\\n'));`;
    for (const args of [
      ['balance', '--json'],
      ['list', '--json'],
      ['impact', '--json'],
    ]) {
      rmSync(list, { force: true });
      const r = await probed(home, probe, args);
      expect(r.exitCode).toBe(0);
      const loaded = readFileSync(list, 'utf8').split('\n');
      // The probe sees what it should: node:sqlite, which a read does use.
      expect(loaded).toContain('NativeModule sqlite');
      for (const unused of ['os', 'perf_hooks', 'crypto', 'net', 'http'])
        expect(loaded, `${args[0]} loaded node:${unused}`).not.toContain(`NativeModule ${unused}`);
    }
    // Each run recorded its request, with this machine's name: the name came without node:os.
    const entries = await ok(['logs', '--json', '--limit', '3'], { home });
    const instances = entries.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { instance: string }).instance);
    expect(instances).toHaveLength(3);
    for (const instance of instances) {
      expect(instance.startsWith(`${hostname()}:`)).toBe(true);
      expect(instance).toMatch(/:\d+$/);
    }
  });
});

describe("what a command asks of Node's module loader", () => {
  // A bundle's modules each ask for node:fs or node:path: through Node's loader, 20 calls of ~8 µs
  // in a `balance` (BENCHMARKS.md, "A seventeenth sitting"). The bundle's wrapper puts in place of
  // Node's require one that asks the loader once for each builtin (scripts/build.mjs), and the bin
  // takes its own from process.getBuiltinModule.
  test('balance, list and buy ask the loader for each builtin at most once', async () => {
    const home = newHome();
    // Each command's code cache made first: a missing one is written at exit by bin/support.cjs, through the loader.
    for (const args of [
      ['balance', '--json'],
      ['list', '--json'],
      ['buy', '--kg', '5', '--json'],
    ])
      await ok(args, { home });
    const counts = join(home, 'counts.json');
    const probe = `const Module = require('node:module');
const fs = require('node:fs');
const asked = {};
const real = Module.prototype.require;
Module.prototype.require = function (id) { asked[id] = (asked[id] ?? 0) + 1; return real.call(this, id); };
process.on('exit', () => fs.writeFileSync(${JSON.stringify(counts)}, JSON.stringify(asked)));`;
    for (const args of [
      ['balance', '--json'],
      ['list', '--json'],
      ['buy', '--kg', '5', '--json'],
    ]) {
      const r = await probed(home, probe, args);
      expect(r.exitCode).toBe(0);
      const asked = JSON.parse(readFileSync(counts, 'utf8')) as Record<string, number>;
      // The probe sees the bundle's calls: node:fs is the bundle's.
      expect(asked['node:fs'], args[0]).toBe(1);
      for (const [id, n] of Object.entries(asked)) if (id.startsWith('node:')) expect(n, `${args[0]} asked for ${id}`).toBe(1);
    }
  });
});

describe('what the everyday commands ask of ICU: nothing', () => {
  // The first locale-aware format in a process (toLocaleString, Intl.*) sets up ICU: 11–17 ms on
  // Node 22, 24 and 26, which every `carbon buy` paid for the "5 kg" of its line; the first
  // toISOString() or local-time reading makes V8 look up the machine's time zone through it,
  // 0.25–0.3 ms more (BENCHMARKS.md). Numbers and days are written by src/service/units.ts, times
  // by src/platform/iso-time.ts.
  test('buy, quote, balance, impact, list, show and logs, in a pipe and on a terminal, format nothing through ICU and read no time zone', async () => {
    const home = newHome();
    const trap = join(home, 'icu-trap.cjs');
    const used = join(home, 'icu-used.txt');
    // Preloaded: each locale-aware or time-zone call, and the first frames of who made it, appended to `used`.
    writeFileSync(
      trap,
      `const fs = require('node:fs');
const note = (what) => fs.appendFileSync(${JSON.stringify(used)}, what + ' ' + new Error().stack.split('\\n').slice(2, 5).join(' | ') + '\\n');
const wrap = (proto, name, what) => { const f = proto[name]; proto[name] = function (...a) { note(what); return f.apply(this, a); }; };
wrap(Number.prototype, 'toLocaleString', 'Number#toLocaleString');
for (const m of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString', 'toISOString', 'toString', 'getTimezoneOffset', 'getFullYear', 'getMonth', 'getDate', 'getHours']) wrap(Date.prototype, m, 'Date#' + m);
for (const m of ['localeCompare', 'toLocaleUpperCase', 'toLocaleLowerCase']) wrap(String.prototype, m, 'String#' + m);
for (const k of Object.getOwnPropertyNames(Intl)) if (typeof Intl[k] === 'function') Intl[k] = new Proxy(Intl[k], { construct: (t, a, n) => (note('Intl.' + k), Reflect.construct(t, a, n)), apply: (t, s, a) => (note('Intl.' + k), Reflect.apply(t, s, a)) });
`,
    );
    const env = { NODE_OPTIONS: `--require ${trap}` };
    // The trap sees what it should: a locale-aware call is written down.
    await execa(process.execPath, ['-e', '(1234).toLocaleString("en-US")'], { env: baseEnv(home, env), extendEnv: false });
    expect(readFileSync(used, 'utf8')).toMatch(/^Number#toLocaleString /);
    rmSync(used);

    const { id } = await json<{ id: string }>(['buy', '--kg', '1234', '--json'], { home, env });
    for (const args of [['buy', '--kg', '5'], ['quote', '--kg', '2000'], ['balance'], ['impact'], ['list'], ['show', id], ['logs']]) {
      expect((await carbon(args, { home, env })).exitCode, args.join(' ')).toBe(0);
    }
    for (const args of [['balance'], ['impact'], ['list'], ['show', id], ['quote', '--kg', '2000']]) {
      const r = await carbonTty(args, { home, env: { ...TTY, ...env } });
      expect(r.exitCode, args.join(' ')).toBe(0);
      // Each shows a number grouped in thousands: written, and not by ICU.
      expect(plain(r.output), args.join(' ')).toMatch(/\d,\d{3}/);
    }
    expect(existsSync(used) ? readFileSync(used, 'utf8') : '').toBe('');
  });
});

describe('against a carbon serve (the remote engine)', () => {
  test('balance, list, buy and logs send with node:http and never load fetch (its undici costs 70 ms of a start); balance compiles cli.cjs alone', async () => {
    const home = newHome();
    const server = await serve(home);
    try {
      const remote = { CARBON_BASE_URL: server.url, CARBON_API_KEY: (await sandboxKeys(home)).test };
      const list = join(home, 'loaded.txt');
      // Preloaded: the builtins loaded, and each bundle the bin compiles (vm.Script), at exit.
      const probe = `const vm = require('node:vm'); const compiled = [];
vm.Script = class extends vm.Script { constructor(source, options) { super(source, options); compiled.push('bundle ' + require('node:path').basename(options.filename)); } };
process.on('exit', () => require('node:fs').appendFileSync(${JSON.stringify(list)}, process.moduleLoadList.concat(compiled).join('\\n') + '\\n'));`;
      const run = async (args: string[], env: Record<string, string>) => {
        rmSync(list, { force: true });
        const r = await probed(home, probe, args, env);
        expect([r.exitCode, r.stderr]).toEqual([0, '']);
        return { stdout: r.stdout, loaded: readFileSync(list, 'utf8').split('\n') };
      };
      for (const args of [
        ['balance', '--json'],
        ['list', '--json'],
        ['buy', '--kg', '1', '--json'],
        ['logs', '--json', '--limit', '2'],
      ]) {
        const { stdout, loaded } = await run(args, remote);
        // Pretty JSON, or NDJSON for logs.
        const texts = args[0] === 'logs' ? stdout.split('\n').filter(Boolean) : [stdout];
        const objects = texts.map((text) => (JSON.parse(text) as { object: string }).object);
        expect(objects).toEqual(
          args[0] === 'logs' ? ['request', 'request'] : [{ balance: 'balance', list: 'list', buy: 'offset' }[args[0]!]],
        );
        expect(loaded).toContain('NativeModule http');
        expect(loaded, `${args[0]} loaded fetch`).not.toContain('NativeModule internal/deps/undici/undici');
      }
      // The quick bundle answers only the local engine: with the API in the environment the bin
      // does not compile it first; with --local, or without the API, it is all that is compiled.
      expect((await run(['balance', '--json'], remote)).loaded.filter((l) => l.startsWith('bundle '))).toEqual(['bundle cli.cjs']);
      expect((await run(['balance', '--json', '--local'], remote)).loaded.filter((l) => l.startsWith('bundle '))).toEqual([
        'bundle quick.cjs',
      ]);
      expect((await run(['balance', '--json'], {})).loaded.filter((l) => l.startsWith('bundle '))).toEqual(['bundle quick.cjs']);
    } finally {
      await server.stop();
    }
  });
});

describe('an install the user cannot write (a global install by root, run by another user)', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  const root = process.getuid?.() === 0;

  test("the code cache goes to the user's cache directory (owner-only), is used on the next run, and follows XDG_CACHE_HOME", async () => {
    // An install of its own, outside the checkout (whose directories another user may not be
    // able to enter): the package's files (`balance` loads nothing from node_modules).
    const dir = mkdtempSync(join(root ? '/tmp' : tmpdir(), 'carbon-ro-'));
    made.push(dir);
    const { dir: copy } = copyBinary();
    made.push(copy);
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(copy, part), join(dir, part), { recursive: true });
    for (const file of readdirSync(join(dir, 'dist'))) if (file.endsWith('.v8cache')) rmSync(join(dir, 'dist', file));
    const bin = join(dir, 'bin', 'carbon.cjs');
    const home = join(dir, 'home');
    mkdirSync(home);
    // As root, the install stays root's and the command runs as nobody; otherwise dist/ is made read-only.
    let run: (env: Record<string, string>) => Promise<{ stdout: string; stderr: string; exitCode?: number }>;
    if (root) {
      for (const d of [dir, home]) chmodSync(d, 0o755);
      chownSync(home, 65534, 65534);
      run = (env) =>
        execa('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, bin, 'balance', '--json'], {
          env,
          extendEnv: false,
          reject: false,
        });
    } else {
      chmodSync(join(dir, 'dist'), 0o555);
      run = (env) => execa(process.execPath, [bin, 'balance', '--json'], { env, extendEnv: false, reject: false });
    }
    const env = { PATH: process.env.PATH!, HOME: home, CARBON_HOME: join(home, 'carbon-home'), LANG: 'C.UTF-8' };

    const first = await run(env);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ object: 'balance' });
    expect(readdirSync(join(dir, 'dist')).filter((f) => f.endsWith('.v8cache'))).toEqual([]);
    const cacheDir = join(home, '.cache', 'carbon');
    const caches = readdirSync(cacheDir);
    expect(caches).toHaveLength(1);
    expect(caches[0]).toMatch(/^quick-balance\.[0-9a-f]{16}\.[0-9a-f]+\.v\d+\.\d+\.\d+-\w+\.v8cache$/);
    const cache = join(cacheDir, caches[0]!);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(cache).mode & 0o777).toBe(0o600);
    expect(statSync(cache).size).toBeGreaterThan(10_000);

    // Taken, not rejected: a rejected cache would be written again.
    const written = statSync(cache, { bigint: true });
    const second = await run(env);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(cache, { bigint: true }).mtimeNs).toBe(written.mtimeNs);
    expect(statSync(cache, { bigint: true }).ino).toBe(written.ino);

    const xdg = join(home, 'xdg');
    expect((await run({ ...env, XDG_CACHE_HOME: xdg })).exitCode).toBe(0);
    expect(readdirSync(join(xdg, 'carbon'))).toEqual(caches);

    // A new cache written there removes what an earlier build installed at this same place left;
    // another install's, another bundle's and another Node's stay.
    const [command, build, place, ...node] = caches[0]!.split('.');
    const earlier = '0'.repeat(16);
    const left = {
      earlierBuild: `${command}.${earlier}.${place}.${node.join('.')}`,
      otherInstall: `${command}.${earlier}.${(Number.parseInt(place!, 16) ^ 1).toString(16)}.${node.join('.')}`,
      otherBundle: `cli.${earlier}.${place}.${node.join('.')}`,
      otherNode: `${command}.${build}.${place}.v1.0.0-x64.v8cache`,
    };
    for (const file of Object.values(left)) writeFileSync(join(cacheDir, file), 'x');
    rmSync(cache);
    expect((await run(env)).exitCode).toBe(0);
    expect(readdirSync(cacheDir).sort()).toEqual([caches[0], left.otherBundle, left.otherInstall, left.otherNode].sort());
  });
});
