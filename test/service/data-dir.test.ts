import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Sandbox } from '../../src/service/sandbox.js';
import { expectError, openWorld, tempDir, type World } from './helpers.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});
function world(options: Parameters<typeof openWorld>[0] = {}): World {
  const w = openWorld(options);
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
  test('two sandboxes in two directories share nothing: keys, offsets, balances, clocks', () => {
    const a = world();
    const b = world();
    expect(a.keys.test).not.toBe(b.keys.test);
    const bought = a.buy({ kg: 500, reference: 'only-in-a' }).body;
    a.sandbox.topUp('live', 25_000);
    a.sandbox.advanceClock(10_000);
    a.sandbox.setRate(9000);

    expectError(b.call('GET', '/balance', { key: a.keys.test }), 401, 'api_key_invalid');
    expectError(a.call('GET', '/balance', { key: b.keys.live }), 401, 'api_key_invalid');
    expect(b.call('GET', '/offsets').body).toEqual({ object: 'list', data: [], has_more: false });
    expectError(b.call('GET', `/offsets/${bought.id}`), 404, 'resource_missing', 'id');
    expect(b.sandbox.status().balances).toEqual({ test: 100_000, live: 0 });
    expect(b.sandbox.status().clock.offset_ms).toBe(0);
    expect(b.sandbox.status().account.rate).toBe(4000);
    expect(a.sandbox.status().balances).toEqual({ test: 98_000, live: 25_000 });
  });

  test('revoking a key in one directory does not touch the other', () => {
    const a = world();
    const b = world();
    const idA = a.sandbox.keys().find((k) => k.default === 'test')!.id;
    a.sandbox.revokeKey(idA);
    expectError(a.call('GET', '/balance'), 401, 'api_key_revoked');
    expect(b.call('GET', '/balance').status).toBe(200);
  });
});

describe('files on disk', () => {
  test('the directory is created 0700 and every file in it is 0600, even with a permissive umask', () => {
    const root = dir();
    const data = join(root, 'nested', 'carbon-data');
    const old = process.umask(0o000);
    let w: World;
    try {
      w = world({ dir: data });
      w.buy({ kg: 1 }); // the WAL file exists once something is written
      w.sandbox.createKey('live', 'read_only'); // the keys file is rewritten
    } finally {
      process.umask(old);
    }
    expect(mode(data)).toBe(0o700);
    const files = readdirSync(data).sort();
    expect(files).toEqual(expect.arrayContaining(['ledger.db', 'ledger.db-wal', 'ledger.db-shm', 'sandbox-keys.json']));
    for (const f of files) expect([f, mode(join(data, f)).toString(8)]).toEqual([f, '600']);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  test('the ledger uses WAL journaling', () => {
    const w = world();
    expect(w.sandbox.ledger.db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  test('reopening a directory keeps everything and provisions nothing new', () => {
    const d = dir();
    const first = Sandbox.open(d);
    const key = first.defaultKey('test')!;
    const service = first.service();
    const bought = service.handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'persist' },
      body: '{"kg": 250}',
    });
    expect(bought.status).toBe(201);
    first.advanceClock(5000);
    first.close();

    const again = Sandbox.open(d);
    cleanup.push(() => again.close());
    expect(again.defaultKey('test')).toBe(key);
    expect(again.keys()).toHaveLength(3);
    const status = again.status();
    expect(status.balances).toEqual({ test: 99_000, live: 0 });
    expect(status.clock.offset_ms).toBe(5000);
    expect(status.impact.test).toEqual({ placed_kg: 250, processing_kg: 0, offsets: 1 });
    const replay = again.service().handle({
      method: 'POST',
      path: '/api/v1/offsets',
      query: {},
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'persist' },
      body: '{"kg": 250}',
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  test('two handles on one directory share one ledger', () => {
    const d = dir();
    const a = world({ dir: d });
    const b = world({ dir: d });
    expect(b.keys).toEqual(a.keys);
    const o = a.buy({ kg: 10 }).body;
    expect(b.call('GET', `/offsets/${o.id}`).status).toBe(200);
    expect(b.call('GET', '/balance').body).toMatchObject({ available_cents: 100_000 - 40 });
  });

  test('a memory sandbox keeps its ledger off the disk, and only its keys file in the directory', () => {
    const w = world({ memory: true });
    w.buy({ kg: 1 });
    expect(readdirSync(w.dir)).toEqual(['sandbox-keys.json']);
    expect(existsSync(join(w.dir, 'ledger.db'))).toBe(false);
  });
});

describe('reset', () => {
  test('deletes every offset, balance, key and remembered Idempotency-Key, and provisions a fresh account', () => {
    const w = world();
    w.buy({ kg: 10 }, { idem: 'before-reset' });
    w.sandbox.topUp('live', 30_000);
    w.sandbox.setRate(7000);
    w.sandbox.setReviewLimit(1);
    w.sandbox.setStatus('suspended');
    w.sandbox.advanceClock(10_000);
    const oldKeys = { ...w.keys };

    w.sandbox.reset();
    expectError(w.call('GET', '/balance', { key: oldKeys.test }), 401, 'api_key_invalid');
    const key = w.sandbox.defaultKey('test')!;
    expect(key).not.toBe(oldKeys.test);
    expect(w.sandbox.status()).toMatchObject({
      account: { status: 'active', rate: 4000, review_limit_cents: 500_000, rate_limit_requests: null },
      clock: { offset_ms: 0 },
      balances: { test: 100_000, live: 0 },
      impact: { test: { placed_kg: 0, processing_kg: 0, offsets: 0 }, live: { placed_kg: 0, processing_kg: 0, offsets: 0 } },
    });
    for (const table of ['offsets', 'idempotency']) expect(w.rows(`SELECT * FROM ${table}`)).toEqual([]);
    expect(w.rows('SELECT kind, amount_cents FROM entries')).toEqual([{ kind: 'topup', amount_cents: 100_000 }]);
    const res = w.call('POST', '/offsets', { key, body: { kg: 10 }, idem: 'before-reset' });
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});
