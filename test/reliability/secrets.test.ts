/**
 * Secrets: files holding keys are the owner's alone; no full key is printed, logged or put in an
 * error (unless the user asks with --reveal or --show-keys); a key typed on the command line draws
 * a warning; the ledger holds only SHA-256 digests of keys; `carbon serve` listens on loopback
 * unless told otherwise.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BIN,
  childEnv,
  cleanupHomes,
  dataDir,
  http,
  ledgerPath,
  openLedger,
  provision,
  type RunResult,
  requireBuilt,
  runCli,
  type SandboxKeys,
  sandboxKeys,
  sleep,
  tempHome,
} from '../support/children.js';
import { serve } from '../support/cli.js';
import { limit } from '../support/load.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Runs the binary with umask 000, so any file carbon does not protect itself comes out world-readable. */
function runWideOpen(home: string, args: string[], input?: string) {
  const r = spawnSync('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, BIN, ...args], {
    env: childEnv(home),
    encoding: 'utf8',
    timeout: limit(20_000),
    ...(input === undefined ? {} : { input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("files holding keys are the owner's alone", () => {
  test('created by carbon (even under umask 000): directories 0700, config, ledger, WAL and keys file 0600', async () => {
    const home = join(tempHome(), 'carbon-home');
    expect(runWideOpen(home, ['buy', '--kg', '1']).code).toBe(0);
    const keys = sandboxKeys(home);
    expect(runWideOpen(home, ['config', 'set', 'test-key', '-'], keys.test).code).toBe(0);
    expect(runWideOpen(home, ['sandbox', 'keys', 'create']).code).toBe(0);
    // The WAL and its index exist while a server has the ledger open.
    const server = await serve(home);
    try {
      expect((await http(`${server.url}/offsets`, { key: keys.test, idem: 'wal', body: '{"kg":1}' })).status).toBe(201);
      expect({
        home: mode(home),
        data: mode(dataDir(home)),
        config: mode(join(home, 'config.json')),
        ledger: mode(ledgerPath(home)),
        wal: mode(`${ledgerPath(home)}-wal`),
        shm: mode(`${ledgerPath(home)}-shm`),
        keys: mode(join(dataDir(home), 'sandbox-keys.json')),
      }).toEqual({ home: '700', data: '700', config: '600', ledger: '600', wal: '600', shm: '600', keys: '600' });
    } finally {
      await server.stop();
    }
    // Nothing else was left lying around (temporary files of atomic writes).
    expect(readdirSync(home).sort()).toEqual(['config.json', 'data']);
    expect(readdirSync(dataDir(home)).sort()).toEqual(['ledger.db', 'sandbox-keys.json']);
  });

  test('a ledger and data directory left readable by others (a copy, a restore) are tightened on next use', async () => {
    const home = tempHome();
    await provision(home);
    chmodSync(dataDir(home), 0o755);
    chmodSync(ledgerPath(home), 0o644);
    expect((await runCli(home, ['balance'])).code).toBe(0);
    expect({ data: mode(dataDir(home)), ledger: mode(ledgerPath(home)) }).toEqual({ data: '700', ledger: '600' });
  });
});

describe('no full key in any output', () => {
  let home: string;
  let keys: SandboxKeys;
  const outputs: Array<{ what: string; text: string }> = [];
  const record = (what: string, r: RunResult | { stdout: string; stderr: string }) =>
    outputs.push({ what, text: `${r.stdout}\n${r.stderr}` });
  const UNKNOWN = `ck_test_${'Q'.repeat(28)}zzzz`;

  beforeAll(async () => {
    home = tempHome();
    keys = await provision(home);
  });

  test(
    'commands, errors and --json errors on the local engine and through carbon serve, and the access log',
    async () => {
      const run = async (args: string[], env: Record<string, string> = {}, expectCode?: number) => {
        const r = await runCli(home, args, { env });
        if (expectCode !== undefined) expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(expectCode);
        record(`carbon ${args.join(' ')} ${JSON.stringify(env)}`, r);
        return r;
      };
      const buy = await run(['buy', '--kg', '3', '--json'], {}, 0);
      const id = JSON.parse(buy.stdout).id as string;
      for (const args of [
        ['list'],
        ['show', id],
        ['balance'],
        ['impact'],
        ['quote', '--kg', '5'],
        ['sandbox', 'status'],
        ['sandbox', 'keys'],
        ['sandbox', 'keys', '--json'],
      ]) {
        await run(args, {}, 0);
        await run([...args, '--json'], {}, 0);
      }
      // Keys set in the config are masked when it is shown.
      expect((await runCli(home, ['config', 'set', 'test-key', '-'], { input: keys.test })).code).toBe(0);
      expect((await runCli(home, ['config', 'set', 'live-key', '-'], { input: keys.live })).code).toBe(0);
      await run(['config', 'list'], {}, 0);
      await run(['config', 'list', '--json'], {}, 0);
      await run(['config', 'get', 'test-key'], {}, 0);
      // Outcomes that involve a key: unknown to the local sandbox (its own key is used, with a
      // warning), read-only, wrong mode, no balance, malformed; never the key in full.
      for (const [env, args, code] of [
        [{ CARBON_API_KEY: UNKNOWN }, ['balance'], 0],
        [{ CARBON_API_KEY: keys.readOnly }, ['buy', '--kg', '1'], 4],
        [{ CARBON_API_KEY: keys.live }, ['buy', '--kg', '1', '--test'], 2],
        [{ CARBON_API_KEY: keys.live }, ['buy', '--kg', '1'], 2],
        [{ CARBON_API_KEY: keys.live }, ['buy', '--kg', '1', '--yes'], 3],
        [{ CARBON_API_KEY: `${keys.test}x` }, ['balance'], 0],
        [{}, ['balance', '--api-key', UNKNOWN], 0],
      ] as Array<[Record<string, string>, string[], number]>) {
        await run(args, env, code);
        await run([...args, '--json'], env, code);
      }

      const server = await serve(home);
      try {
        const remote = { CARBON_BASE_URL: server.url };
        await run(['buy', '--kg', '2'], { ...remote, CARBON_API_KEY: keys.test }, 0);
        await run(['list', '--json'], { ...remote, CARBON_API_KEY: keys.test }, 0);
        await run(['balance'], { ...remote, CARBON_API_KEY: UNKNOWN }, 4);
        await run(['balance', '--json'], { ...remote, CARBON_API_KEY: UNKNOWN }, 4);
        await run(['buy', '--kg', '1', '--json'], { ...remote, CARBON_API_KEY: keys.readOnly }, 4);
        for (const key of [...keys.all, UNKNOWN, 'k'.repeat(256)]) {
          for (const path of ['/balance', '/offsets', '/nope', '/offsets/off_x']) {
            const res = await http(`${server.url}${path}`, { key });
            outputs.push({ what: `GET ${path}`, text: JSON.stringify(res) });
          }
        }
        const a = await http(`${server.url}/offsets`, { key: keys.test, idem: keys.test, body: '{"kg":1}' });
        outputs.push({ what: 'a key as the Idempotency-Key', text: JSON.stringify(a) });
      } finally {
        await server.stop();
      }
      // The access log shows a key only masked: prefix, mode, last four.
      const log = server.output();
      expect(log).toContain(`ck_test_…${keys.test.slice(-4)}`);
      outputs.push({ what: 'carbon serve (banner, JSON line and access log)', text: log });

      const secrets = [...sandboxKeys(home).all, UNKNOWN];
      // The secret part alone, too: a key must not leak cut in two or re-prefixed.
      const parts = secrets.map((k) => k.slice(-32));
      for (const { what, text } of outputs) {
        for (const s of [...secrets, ...parts]) expect(text.includes(s), `${what} shows a full key:\n${text}`).toBe(false);
      }
      expect(outputs.length).toBeGreaterThan(50);
    },
    limit(90_000),
  );

  test('--api-key draws a warning; so does a key typed as a `carbon config set` argument', async () => {
    const flag = await runCli(home, ['balance', '--api-key', keys.test]);
    expect(flag.code).toBe(0);
    expect(flag.stderr).toMatch(/^warning: .*--api-key.*(ps|history)/m);
    const env = await runCli(home, ['balance'], { env: { CARBON_API_KEY: keys.test } });
    expect(env.stderr).not.toMatch(/warning/);
    const typed = await runCli(home, ['config', 'set', 'test-key', keys.test]);
    expect(typed.code).toBe(0);
    expect(typed.stderr).toMatch(/^warning: .*(ps|history)/m);
    expect(typed.stdout + typed.stderr).not.toContain(keys.test);
    const piped = await runCli(home, ['config', 'set', 'test-key', '-'], { input: keys.test });
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toMatch(/warning/);
  });
});

describe('keys travel only where they are safe', () => {
  test('the remote engine refuses to send a key over plain http:// to a host that is not loopback', async () => {
    const home = tempHome();
    const key = `ck_test_${'R'.repeat(32)}`;
    // 192.0.2.1 is TEST-NET-1: nothing answers there, and the refusal comes before any connection.
    const env = { CARBON_BASE_URL: 'http://192.0.2.1:9/api/v1', CARBON_API_KEY: key, CARBON_MAX_RETRIES: '0', CARBON_TIMEOUT: '1' };
    for (const args of [['balance'], ['buy', '--kg', '1', '--json']]) {
      const r = await runCli(home, args, { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/Refusing to send an API key over plain http:\/\/ to 192\.0\.2\.1:9/);
      expect(r.stdout + r.stderr).not.toContain(key);
    }
  });
});

describe('the ledger stores only hashes', () => {
  test('no key text anywhere in the SQLite files; api_keys holds SHA-256 digests and the last four characters', async () => {
    const home = tempHome();
    const keys = await provision(home);
    expect((await runCli(home, ['sandbox', 'keys', 'create', '--live'])).code).toBe(0);
    expect((await runCli(home, ['buy', '--kg', '1'], { env: { CARBON_API_KEY: keys.test } })).code).toBe(0);
    const all = sandboxKeys(home).all;
    expect(all.length).toBe(4);
    // While a server has it open the WAL holds the newest pages: scan it too.
    const server = await serve(home);
    try {
      expect((await http(`${server.url}/offsets`, { key: keys.test, idem: 'h', body: '{"kg":1}' })).status).toBe(201);
      const files = readdirSync(dataDir(home)).filter((f) => f.startsWith('ledger.db'));
      expect(files).toContain('ledger.db-wal');
      for (const f of files) {
        const bytes = readFileSync(join(dataDir(home), f));
        for (const key of all) {
          expect(bytes.includes(Buffer.from(key)), `${f} holds ${key.slice(0, 8)}…`).toBe(false);
          expect(bytes.includes(Buffer.from(key.slice(-32))), `${f} holds the secret part of ${key.slice(0, 8)}…`).toBe(false);
        }
      }
    } finally {
      await server.stop();
    }
    const db = openLedger(home, { readonly: true });
    const rows = db.prepare('SELECT hash, last4 FROM api_keys').all() as Array<{ hash: Uint8Array; last4: string }>;
    db.close();
    const digest = (k: string) => createHash('sha256').update(k).digest('hex');
    expect(rows.map((r) => Buffer.from(r.hash).toString('hex')).sort()).toEqual(all.map(digest).sort());
    expect(rows.map((r) => r.last4).sort()).toEqual(all.map((k) => k.slice(-4)).sort());
  });
});

describe('carbon serve listens on loopback unless told otherwise', () => {
  test("the default is 127.0.0.1: reachable there, refused on the machine's other addresses", async () => {
    const home = tempHome();
    await provision(home);
    const server = await serve(home);
    try {
      const url = new URL(server.url);
      expect(url.hostname).toBe('127.0.0.1');
      const reach = (host: string) =>
        new Promise<string>((resolve) => {
          const socket = connect(Number(url.port), host);
          socket.on('connect', () => {
            socket.destroy();
            resolve('connected');
          });
          socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
        });
      expect(await reach('127.0.0.1')).toBe('connected');
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
        .map((a) => a!.address);
      for (const address of others) expect(await reach(address), address).toBe('ECONNREFUSED');
      // And not on IPv6 loopback either: one interface, the one named.
      expect(await reach('::1')).not.toBe('connected');
    } finally {
      await server.stop();
    }
  });

  test('--host with a non-loopback address is served only when asked, with a warning', async () => {
    const home = tempHome();
    await provision(home);
    const server = await serve(home, ['--host', '0.0.0.0']);
    try {
      // The warning goes to stderr, which may arrive a moment after the JSON line on stdout (the test's limit bounds the wait).
      while (!server.output().includes('warning:')) await sleep(50);
      expect(server.output()).toMatch(/warning: serving on 0\.0\.0\.0, not a loopback address/);
      // Its links name this machine's loopback, an address to connect to (0.0.0.0 is none), and the warning how to name another.
      expect(server.ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
      expect(server.output()).toContain('give --public-url with the address others reach it at');
    } finally {
      await server.stop();
    }
  });
});
