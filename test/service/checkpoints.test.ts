import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { NewJournalRecord } from '../../src/store/port.js';
import { CHASE_PAGES, CHASE_TRIES, startCheckpointer, WAL_HIGH } from '../../src/store/sqlite/checkpointer.js';
import { SELF_CHECKPOINT_PAGES } from '../../src/store/sqlite/sqlite-open.js';
import { journalRecord } from '../support/journal-records.js';
import { type Db, openSqlite, pragma, scalar } from '../support/sqlite.js';
import { openWorld, type World } from '../support/world.js';

/**
 * WAL checkpoints leave the purchase path once a store has committed a few times: its own
 * connection stops checkpointing (wal_autocheckpoint 0) and a worker thread copies the WAL back
 * into the ledger file. What a commit guarantees does not change (docs/reliability.md).
 */

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const autocheckpoint = (world: World): number => pragma<number>(world.store.db, 'wal_autocheckpoint')!;

/** Polls until `check` holds, up to a deadline: the worker runs on its own time. */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not within the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Commits `n` rows of about a page each. */
function write(db: Db, n: number): void {
  db.exec(
    `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < ${n}) INSERT INTO pages SELECT randomblob(3900) FROM i`,
  );
}

/** A WAL past CHASE_PAGES that nothing has checkpointed yet, kept by the open connection returned. */
function grownWal(): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'carbon-wal-'));
  dirs.push(dir);
  const file = join(dir, 'pages.db');
  const db = openSqlite(file, { create: true });
  db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE pages (b BLOB)');
  write(db, 1500);
  return { db, file };
}

/** Buys, a few milliseconds apart, until the worker has taken the checkpoints over (a purchase loop's start). */
async function workerTakesOver(world: World): Promise<void> {
  await world.sandbox.topUp('test', 100_000_000_000);
  const deadline = Date.now() + 10_000;
  while (autocheckpoint(world) !== 0) {
    if (Date.now() > deadline) throw new Error('the worker never took the checkpoints over');
    await world.buy({ kg: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('checkpoints off the purchase path', () => {
  test('a one-shot run checkpoints as SQLite does; past a few commits a worker does, and the ledger file grows by its copies alone', async () => {
    w = await openWorld();
    await w.sandbox.topUp('test', 100_000_000);
    expect(autocheckpoint(w)).toBe(SELF_CHECKPOINT_PAGES);
    for (let i = 0; i < 30; i++) await w.buy({ kg: 1 });
    expect(autocheckpoint(w)).toBe(SELF_CHECKPOINT_PAGES);
    // The worker starts after 32 commits; once it has looked at the WAL, commits stop checkpointing.
    let bought = 30;
    const deadline = Date.now() + 10_000;
    while (autocheckpoint(w) !== 0) {
      if (Date.now() > deadline) throw new Error('the worker never took the checkpoints over');
      await w.buy({ kg: 1 });
      bought++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(bought).toBeGreaterThanOrEqual(32);

    // The ledger file changes only by checkpoints, and this connection no longer runs any.
    const file = join(w.dir, 'ledger.db');
    const size = statSync(file).size;
    for (let i = 0; i < 2000; i++) await w.buy({ kg: 1, reference: `a reference long enough to take room ${i}` });
    await eventually(() => statSync(file).size > size);

    // Every purchase is there, read back by another connection.
    const other = openSqlite(file, { readonly: true });
    try {
      expect(scalar(other, 'SELECT COUNT(*) FROM offsets')).toBe(bought + 2000);
    } finally {
      other.close();
    }
  });

  test('a writer that never pauses: past WAL_HIGH pages its own connection copies the WAL back, without checkpointing at every commit, and the WAL stays bounded', {
    timeout: 120_000,
  }, async () => {
    w = await openWorld();
    await workerTakesOver(w);
    // Back to back now: about 10 pages a purchase, so 10,000 purchases write six times WAL_HIGH.
    // Without the copy the WAL's file grows by all of it; with a checkpoint at every commit while
    // it is long (as before), wal_autocheckpoint is seen switched on.
    const wal = join(w.dir, 'ledger.db-wal');
    let switchedOn = 0;
    for (let i = 0; i < 10_000; i++) {
      await w.buy({ kg: 1 });
      if (autocheckpoint(w) !== 0) switchedOn++;
    }
    expect(switchedOn).toBe(0);
    // Its file is never cut back: its size is the longest the WAL has been.
    expect(statSync(wal).size / 4120).toBeLessThan(4 * WAL_HIGH);
    expect(scalar(w.store.db, 'SELECT COUNT(*) FROM offsets')).toBeGreaterThan(10_000);
  });

  test('past CHASE_PAGES the worker checkpoints at the first look after a commit, so the WAL restarts in a pause; below them it waits for more commits again', async () => {
    const { db, file } = grownWal();
    // No checkpoint for time alone here: what is left are the rules by commits and by length.
    const worker = startCheckpointer(file, { intervalMs: 1, maxWaitMs: 3_600_000 });
    try {
      for (let i = 0; i < 32; i++) worker.committed();
      await eventually(() => worker.checkpoints() === 1);
      expect(worker.walPages()).toBeGreaterThan(CHASE_PAGES);
      // One commit, and a pause: a server buying at a steady rate. Waiting for 32 commits' pages,
      // whose copy outlasts the pause, the WAL restarted only when the writer copied it back itself.
      write(db, 1);
      worker.committed();
      await eventually(() => worker.checkpoints() === 2);
      // That commit restarted the WAL (the checkpoint before had copied all of it back).
      expect(worker.walPages()).toBeLessThan(CHASE_PAGES);
      write(db, 1);
      worker.committed();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(worker.checkpoints()).toBe(2);
    } finally {
      await worker.stop();
      db.close();
    }
  });

  test('a checkpoint past CHASE_PAGES that leaves pages behind runs again at once, CHASE_TRIES in a row at most', async () => {
    const { db, file } = grownWal();
    // A reader's snapshot keeps every checkpoint from copying what was committed after it.
    const reader = openSqlite(file, { readonly: true });
    const worker = startCheckpointer(file, { intervalMs: 1, maxWaitMs: 3_600_000 });
    try {
      reader.exec('BEGIN');
      expect(scalar(reader, 'SELECT COUNT(*) FROM pages')).toBe(1500);
      write(db, 200);
      for (let i = 0; i < 32; i++) worker.committed();
      await eventually(() => worker.checkpoints() > 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(worker.checkpoints()).toBe(CHASE_TRIES);
    } finally {
      await worker.stop();
      reader.close();
      db.close();
    }
  });

  test('a server that only answers reads writes only the journal: its batches hand the checkpoints to the worker too', async () => {
    w = await openWorld();
    const entry = (n: number): NewJournalRecord =>
      journalRecord({ request_id: `req_${n}`, model_ms: w!.clock.now, mode: 'test', response_body: '{"object":"balance"}' });
    const retention = { keep: 10_000, maxAgeMs: 86_400_000, now: w.clock.now };
    let batches = 0;
    const deadline = Date.now() + 10_000;
    // Without it the journal's own commits would checkpoint, on the thread that answers, forever.
    while (autocheckpoint(w) !== 0) {
      if (Date.now() > deadline) throw new Error('the worker never took the checkpoints over');
      await w.store.appendJournal([entry(batches * 2), entry(batches * 2 + 1)], retention);
      batches++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(batches).toBeGreaterThanOrEqual(32);
    expect(w.rows<{ n: number }>('SELECT COUNT(*) AS n FROM journal')[0]!.n).toBe(batches * 2);
  });

  test('a journal batch on the WAL its connection made writes it unsynced and leaves the connection as it was; one on a WAL truncated or written syncs as any', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'carbon-made-wal-'));
    dirs.push(dir);
    const wal = join(dir, 'ledger.db-wal');
    await (await openWorld({ dir })).close(); // provisioned; the close removes the WAL
    let n = 0;
    /** A store opened where no WAL was (made by its connection), `before` done to it, then one entry appended: whether it was written unsynced. */
    const unsynced = async (pages: number, before: (db: World['store']['db']) => void): Promise<boolean> => {
      expect(existsSync(wal)).toBe(false);
      w = await openWorld({ dir });
      const db = w.store.db;
      db.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
      before(db);
      // The journal's statements are prepared on its first batch: each asked for is seen.
      const asked: string[] = [];
      const prepare = db.prepare.bind(db);
      db.prepare = ((sql: string) => {
        asked.push(sql);
        return prepare(sql);
      }) as typeof db.prepare;
      const retention = { keep: 10_000, maxAgeMs: 86_400_000, now: w.clock.now };
      try {
        await w.store.appendJournal([journalRecord({ request_id: `req_${n++}`, model_ms: w.clock.now })], retention);
      } finally {
        db.prepare = prepare;
      }
      // Set back whatever the path: NORMAL, and the pages it had.
      expect(pragma<number>(db, 'synchronous')).toBe(1);
      expect(autocheckpoint(w)).toBe(pages);
      expect(statSync(wal).size).toBeGreaterThan(0);
      await w.close();
      w = undefined;
      return asked.includes('PRAGMA synchronous = OFF');
    };
    const write = (db: World['store']['db']) =>
      db.exec("INSERT INTO meta (name, value) VALUES ('made-wal-test', '1') ON CONFLICT (name) DO UPDATE SET value = value || '1'");
    // The checkpointer's 0 and the connection's own pages.
    expect(await unsynced(0, () => {})).toBe(true);
    expect(await unsynced(SELF_CHECKPOINT_PAGES, () => {})).toBe(true);
    // Written since it was made.
    expect(await unsynced(SELF_CHECKPOINT_PAGES, write)).toBe(false);
    // Written, then truncated to nothing by a checkpoint: the same file, empty, its old frames maybe still on the disk.
    expect(
      await unsynced(SELF_CHECKPOINT_PAGES, (db) => {
        write(db);
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        expect(statSync(wal).size).toBe(0);
      }),
    ).toBe(false);
    w = await openWorld({ dir });
    expect(w.rows<{ n: number }>('SELECT COUNT(*) AS n FROM journal')[0]!.n).toBe(n);
  });

  test('another connection writing between the look and the lock: the batch leaves the unsynced path and commits synced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'carbon-made-wal-'));
    dirs.push(dir);
    await (await openWorld({ dir })).close(); // provisioned; the close removes the WAL
    w = await openWorld({ dir }); // its connection makes the WAL
    const db = w.store.db;
    const asked: string[] = [];
    let syncedAtCommit: number | undefined;
    const prepare = db.prepare.bind(db);
    // The journal's statements, prepared on its first batch: BEGIN IMMEDIATE lets another connection
    // (as another process would) commit a write first, once; COMMIT notes the safety level it runs at.
    db.prepare = ((sql: string) => {
      asked.push(sql);
      const statement = prepare(sql);
      if (sql === 'BEGIN IMMEDIATE') {
        const run = statement.run.bind(statement);
        let raced = false;
        statement.run = ((...args: never[]) => {
          if (!raced) {
            raced = true;
            const other = openSqlite(join(dir, 'ledger.db'));
            other.exec("INSERT INTO meta (name, value) VALUES ('raced', '1') ON CONFLICT (name) DO UPDATE SET value = '1'");
            other.close();
          }
          return run(...args);
        }) as typeof statement.run;
      }
      if (sql === 'COMMIT') {
        const run = statement.run.bind(statement);
        statement.run = ((...args: never[]) => {
          syncedAtCommit = pragma<number>(db, 'synchronous');
          return run(...args);
        }) as typeof statement.run;
      }
      return statement;
    }) as typeof db.prepare;
    const retention = { keep: 10_000, maxAgeMs: 86_400_000, now: w.clock.now };
    try {
      await w.store.appendJournal([journalRecord({ request_id: 'req_raced', model_ms: w.clock.now })], retention);
    } finally {
      db.prepare = prepare;
    }
    // It looked, began unsynced, saw the other's frames under the lock, and began again synced.
    expect(asked).toContain('PRAGMA synchronous = OFF');
    expect(asked.indexOf('ROLLBACK')).toBeGreaterThan(asked.indexOf('BEGIN IMMEDIATE'));
    expect(syncedAtCommit).toBe(1);
    expect(pragma<number>(db, 'synchronous')).toBe(1);
    expect(w.rows<{ n: number }>("SELECT COUNT(*) AS n FROM journal WHERE request_id = 'req_raced'")[0]!.n).toBe(1);
    expect(w.rows<{ value: string }>("SELECT value FROM meta WHERE name = 'raced'")).toEqual([{ value: '1' }]);
  });

  test('the worker checkpoints after enough commits, or a while after fewer, and never while nothing is committed', async () => {
    w = await openWorld();
    await w.sandbox.topUp('test', 100_000_000);
    // Looking every millisecond: the old rule (a checkpoint each look) would run a hundred here.
    const worker = startCheckpointer(join(w.dir, 'ledger.db'), { intervalMs: 1 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(worker.checkpoints()).toBe(0);
      expect(worker.walPages()).toBe(-1);
      // Each checkpoint syncs the disk, and the commit after it syncs the WAL's new header: a
      // server that answers only reads commits one journal batch at a time, and is not made to
      // pay that for each.
      for (let i = 0; i < 32; i++) worker.committed();
      await eventually(() => worker.checkpoints() === 1);
      expect(worker.walPages()).toBeGreaterThanOrEqual(0);
      // One commit is checkpointed too, once the worker has waited for more.
      worker.committed();
      await eventually(() => worker.checkpoints() === 2);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(worker.checkpoints()).toBe(2);
    } finally {
      await worker.stop();
    }
  });

  test('close stops the worker and copies back what it had not: the WAL is empty after, and the ledger opens again whole', async () => {
    const world = await openWorld();
    const dir = world.dir;
    await world.sandbox.topUp('test', 100_000_000);
    for (let i = 0; i < 300; i++) await world.buy({ kg: 2 });
    await world.sandbox.close();
    // The last connection's close leaves no WAL behind: everything is in the ledger file.
    expect(existsSync(join(dir, 'ledger.db-wal'))).toBe(false);
    const reopened = openSqlite(join(dir, 'ledger.db'));
    try {
      expect(scalar(reopened, 'SELECT COUNT(*) FROM offsets')).toBe(300);
      expect(scalar(reopened, "SELECT COUNT(*) FROM entries WHERE kind = 'charge'")).toBe(300);
      expect(pragma(reopened, 'integrity_check')).toBe('ok');
    } finally {
      reopened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
