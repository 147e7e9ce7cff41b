import { chmodSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { LEDGER_FILE } from '../../src/store/sqlite/files.js';
import { cleanupHomes, requireBuilt, runCli, tempHome } from '../support/children.js';
import { limit } from '../support/load.js';
import { openSqlite } from '../support/sqlite.js';

/**
 * Faults where carbon once broke its own promises: a ledger deleted or replaced under a running
 * server, keys pasted where they do not belong, a CARBON_HOME left readable by others, and a
 * CARBON_HOME that cannot be used at all.
 */

beforeAll(requireBuilt);
afterAll(cleanupHomes);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serving(): Promise<{ server: RunningServer; log: string[]; key: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'carbon-fault-'));
  dirs.push(dir);
  const log: string[] = [];
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir, log: (l) => log.push(l) });
  return { server, log, key: (await server.sandbox.defaultKey('test'))!, dir };
}

const buy = (server: RunningServer, key: string, idem: string) =>
  fetch(`${server.url}/offsets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
    body: '{"kg":1}',
  });

describe('the ledger deleted or replaced under a running server', () => {
  for (const what of ['deleted', 'replaced'] as const) {
    test(`${what}: writes are refused with 503 and one clear log line; /healthz says 503`, async () => {
      const { server, log, key, dir } = await serving();
      try {
        expect((await buy(server, key, 'before')).status).toBe(201);
        const path = join(dir, LEDGER_FILE);
        if (what === 'deleted') rmSync(path);
        else {
          writeFileSync(`${path}.new`, '');
          renameSync(`${path}.new`, path);
        }
        const res = await buy(server, key, 'after');
        expect(res.status).toBe(503);
        // No Retry-After: trying again shortly will not help, a restart will (the log says so).
        expect(res.headers.get('retry-after')).toBeNull();
        expect(log.filter((l) => l.includes(`was ${what} while this process had it open`))).toHaveLength(1);
        expect((await fetch(`${server.origin}/healthz`)).status).toBe(503);
      } finally {
        await server.close();
      }
    });
  }
});

describe("the ledger's write-ahead log or its index deleted under a running server", () => {
  for (const suffix of ['-wal', '-shm'] as const) {
    test(`${suffix} deleted: writes are refused with 503 and one clear log line; /healthz says 503`, async () => {
      const { server, log, key, dir } = await serving();
      try {
        expect((await buy(server, key, 'before')).status).toBe(201);
        rmSync(join(dir, `${LEDGER_FILE}${suffix}`));
        // Before: answered 201, into a log (or an index) no other process would see, and lost to the next checkpoint.
        const res = await buy(server, key, 'after');
        expect(res.status).toBe(503);
        expect(
          log.filter((l) => l.includes(`The ledger's ${suffix} file`) && l.includes('was deleted while this process had it open')),
        ).toHaveLength(1);
        expect((await fetch(`${server.origin}/healthz`)).status).toBe(503);
      } finally {
        await server.close();
      }
    });
  }
});

describe('keys where they do not belong are never shown in full', () => {
  test('a key pasted into a path: the 404 and the access log show it masked', async () => {
    const { server, log, key } = await serving();
    try {
      const res = await fetch(`${server.url}/offsets/${key}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(text).not.toContain(key);
      expect(text).toContain(`ck_test_…${key.slice(-4)}`);
      const listed = await fetch(`${server.url}/offsets?starting_after=${key}`, { headers: { authorization: `Bearer ${key}` } });
      expect(await listed.text()).not.toContain(key);
      // An access line is written once its answer is over: wait for both, not for a fixed time.
      while (log.filter((l) => l.includes(' GET /api/v1/offsets')).length < 2) await new Promise((r) => setTimeout(r, 5));
      const all = log.join('\n');
      expect(all).not.toContain(key);
      expect(all).toContain(`/api/v1/offsets/ck_test_...${key.slice(-4)}`);
    } finally {
      await server.close();
    }
  });

  test('a key in a base URL is refused before anything is sent, and not echoed', async () => {
    const home = tempHome();
    const secret = `ck_test_${'S'.repeat(32)}`;
    const r = await runCli(home, ['balance', '--base-url', `http://${secret}@127.0.0.1:9/api/v1`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/must not carry a user name or password/);
    expect(r.stderr + r.stdout).not.toContain(secret);
  });
});

describe('CARBON_HOME', () => {
  test('left readable by others (0755, config 0644): tightened to 0700 and 0600, said once on stderr', async () => {
    const home = tempHome();
    expect((await runCli(home, ['config', 'set', 'mode', 'test'])).code).toBe(0);
    chmodSync(home, 0o755);
    chmodSync(join(home, 'config.json'), 0o644);
    const r = await runCli(home, ['balance', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual([
      `carbon: ${home} was readable by others (mode 755); it holds API keys, so it is now 700.`,
      `carbon: ${join(home, 'config.json')} was readable by others (mode 644); it holds API keys, so it is now 600.`,
    ]);
    expect([statSync(home).mode & 0o777, statSync(join(home, 'config.json')).mode & 0o777]).toEqual([0o700, 0o600]);
    expect((await runCli(home, ['balance', '--json'])).stderr).toBe('');
  });

  test.each([
    ['a path under /proc', '/proc/carbon-nope/home'],
    ['a regular file', '/etc/hostname'],
    ['below a regular file', '/etc/hostname/x'],
  ])('unusable (%s): one line and exit 1, at once, for reads and for writes', async (_what, path) => {
    for (const args of [['balance'], ['buy', '--kg', '1'], ['config', 'set', 'mode', 'live']]) {
      const r = await runCli(path, args, { timeoutMs: limit(10_000) });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(path);
    }
  });
});

describe('reads never wait for a writer; the clock cannot be broken', () => {
  test('with another process holding the write lock, a due offset reads as placed at once, and so do the totals', async () => {
    const { server, key, dir } = await serving();
    try {
      const bought = (await (await buy(server, key, 'due')).json()) as { id: string };
      await server.sandbox.advanceClock(5_000);
      const blocker = openSqlite(join(dir, LEDGER_FILE));
      blocker.exec('BEGIN IMMEDIATE');
      try {
        const res = await fetch(`${server.url}/offsets/${bought.id}`, { headers: { authorization: `Bearer ${key}` } });
        expect([res.status, ((await res.json()) as { status: string }).status]).toEqual([200, 'placed']);
        const impact = await fetch(`${server.url}/impact`, { headers: { authorization: `Bearer ${key}` } });
        expect(await impact.json()).toMatchObject({ placed_kg: 1, processing_kg: 0 });
      } finally {
        blocker.exec('ROLLBACK');
        blocker.close();
      }
    } finally {
      await server.close();
    }
  });

  test('a clock advance past what the model can represent is refused, and nothing breaks', async () => {
    const { server, key } = await serving();
    try {
      await expect(server.sandbox.advanceClock(100_000_000 * 86_400_000)).rejects.toThrow(/cannot go past 9999-12-31/);
      expect((await buy(server, key, 'still')).status).toBe(201);
      await server.sandbox.advanceClock(365 * 86_400_000);
      expect((await buy(server, key, 'later')).status).toBe(201);
    } finally {
      await server.close();
    }
  });
});
