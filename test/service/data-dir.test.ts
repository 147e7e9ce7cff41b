import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { pragma } from '../support/sqlite.js';
import { expectError, openSandbox, openWorld, tempDir, type World } from '../support/world.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});
async function world(options: Parameters<typeof openWorld>[0] = {}): Promise<World> {
  const w = await openWorld(options);
  cleanup.push(() => w.close());
  return w;
}
function dir(): string {
  const d = tempDir();
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('data-directory isolation', () => {
  test('two sandboxes in two directories share nothing: keys, offsets, balances, clocks', async () => {
    const a = await world();
    const b = await world();
    expect(a.keys.test).not.toBe(b.keys.test);
    const bought = (await a.buy({ kg: 500, reference: 'only-in-a' })).body;
    await a.sandbox.topUp('live', 25_000);
    await a.sandbox.advanceClock(10_000);
    await a.sandbox.setRate(9000);

    expectError(await b.call('GET', '/balance', { key: a.keys.test }), 401, 'api_key_invalid');
    expectError(await a.call('GET', '/balance', { key: b.keys.live }), 401, 'api_key_invalid');
    expect((await b.call('GET', '/offsets')).body).toEqual({ object: 'list', data: [], has_more: false });
    expectError(await b.call('GET', `/offsets/${bought.id}`), 404, 'resource_missing', 'id');
    expect((await b.sandbox.status()).balances).toEqual({ test: 100_000, live: 0 });
    expect((await b.sandbox.status()).clock.offset_ms).toBe(0);
    expect((await b.sandbox.status()).account.rate).toBe(4000);
    expect((await a.sandbox.status()).balances).toEqual({ test: 98_000, live: 25_000 });
  });

  test('revoking a key in one directory does not touch the other', async () => {
    const a = await world();
    const b = await world();
    const idA = (await a.sandbox.keys()).find((k) => k.default === 'test')!.id;
    await a.sandbox.revokeKey(idA);
    expectError(await a.call('GET', '/balance'), 401, 'api_key_revoked');
    expect((await b.call('GET', '/balance')).status).toBe(200);
  });
});

describe('files on disk', () => {
  test('the directory is created 0700 and every file in it is 0600, even with a permissive umask', async () => {
    const root = dir();
    const data = join(root, 'nested', 'carbon-data');
    const old = process.umask(0o000);
    let w: World;
    try {
      w = await world({ dir: data });
      await w.buy({ kg: 1 }); // the WAL file exists once something is written
      await w.sandbox.createKey('live', 'read_only'); // the keys file is rewritten
    } finally {
      process.umask(old);
    }
    expect(mode(data)).toBe(0o700);
    const files = readdirSync(data).sort();
    expect(files).toEqual(expect.arrayContaining(['ledger.db', 'ledger.db-wal', 'ledger.db-shm', 'sandbox-keys.json']));
    for (const f of files) expect([f, mode(join(data, f)).toString(8)]).toEqual([f, '600']);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  test('the ledger uses WAL journaling', async () => {
    const w = await world();
    expect(pragma(w.store.db, 'journal_mode')).toBe('wal');
  });

  test('reopening a directory keeps everything and provisions nothing new', async () => {
    const d = dir();
    const first = await openSandbox(d);
    const key = (await first.defaultKey('test'))!;
    const service = first.service();
    const bought = await service.handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'persist' },
      body: '{"kg": 250}',
    });
    expect(bought.status).toBe(201);
    await first.advanceClock(5000);
    await first.close();

    const again = await openSandbox(d);
    cleanup.push(() => again.close());
    expect(await again.defaultKey('test')).toBe(key);
    expect(await again.keys()).toHaveLength(3);
    const status = await again.status();
    expect(status.balances).toEqual({ test: 99_000, live: 0 });
    expect(status.clock.offset_ms).toBe(5000);
    expect(status.impact.test).toEqual({ placed_kg: 250, processing_kg: 0, offsets: 1 });
    const replay = await again.service().handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'persist' },
      body: '{"kg": 250}',
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  test('a new ledger beside an old key file: its keys are the defaults, the old ones no key of the sandbox (their texts only retired)', async () => {
    // What a ledger deleted under its key file leaves, or a run killed after writing the file and
    // before its commit: defaults naming keys the ledger does not have.
    const data = dir();
    writeFileSync(
      join(data, 'sandbox-keys.json'),
      JSON.stringify({ defaults: { test: 'key_stale' }, secrets: { key_stale: 'ck_test_stalestalestalestalestalestale' } }),
      { mode: 0o600 },
    );
    const sandbox = await openSandbox(data);
    try {
      const keys = await sandbox.keys();
      expect(keys.map((k) => k.default).sort()).toEqual(['live', 'read_only', 'test']);
      expect(await sandbox.secret('key_stale')).toBeUndefined();
      const testKey = keys.find((k) => k.default === 'test')!;
      expect(await sandbox.defaultKey('test')).toBe(await sandbox.secret(testKey.id));
    } finally {
      await sandbox.close();
    }
  });

  test('two handles on one directory share one ledger', async () => {
    const d = dir();
    const a = await world({ dir: d });
    const b = await world({ dir: d });
    expect(b.keys).toEqual(a.keys);
    const o = (await a.buy({ kg: 10 })).body;
    expect((await b.call('GET', `/offsets/${o.id}`)).status).toBe(200);
    expect((await b.call('GET', '/balance')).body).toMatchObject({ available_cents: 100_000 - 40 });
  });

  test('a memory sandbox keeps its ledger off the disk, and only its keys file in the directory', async () => {
    const w = await world({ memory: true });
    await w.buy({ kg: 1 });
    expect(readdirSync(w.dir)).toEqual(['sandbox-keys.json']);
    expect(existsSync(join(w.dir, 'ledger.db'))).toBe(false);
  });
});

describe('reset', () => {
  test('deletes every offset, balance, key and remembered Idempotency-Key, and provisions a fresh account', async () => {
    const w = await world();
    await w.buy({ kg: 10 }, { idem: 'before-reset' });
    await w.sandbox.topUp('live', 30_000);
    await w.sandbox.setRate(7000);
    await w.sandbox.setReviewLimit(1);
    await w.sandbox.setStatus('suspended');
    await w.sandbox.advanceClock(10_000);
    const oldKeys = { ...w.keys };

    await w.sandbox.reset();
    expectError(await w.call('GET', '/balance', { key: oldKeys.test }), 401, 'api_key_invalid');
    const key = (await w.sandbox.defaultKey('test'))!;
    expect(key).not.toBe(oldKeys.test);
    expect(await w.sandbox.status()).toMatchObject({
      account: { status: 'active', rate: 4000, review_limit_cents: 500_000, rate_limit_requests: null },
      clock: { offset_ms: 0 },
      balances: { test: 100_000, live: 0 },
      impact: { test: { placed_kg: 0, processing_kg: 0, offsets: 0 }, live: { placed_kg: 0, processing_kg: 0, offsets: 0 } },
    });
    for (const table of ['offsets', 'idempotency']) expect(w.rows(`SELECT * FROM ${table}`)).toEqual([]);
    expect(w.rows('SELECT kind, amount_cents FROM entries')).toEqual([{ kind: 'topup', amount_cents: 100_000 }]);
    const res = await w.call('POST', '/offsets', { key, body: { kg: 10 }, idem: 'before-reset' });
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});
