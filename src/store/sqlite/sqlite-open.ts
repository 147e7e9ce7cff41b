import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirs } from '../../platform/dirs.js';
import { timeoutMs } from '../env-timeouts.js';
import { type Db, pragma, sqlite } from './driver.js';
import { sqliteCode, sqliteError } from './errors.js';
import { KEYS_FILE, LEDGER_FILE } from './files.js';
import { migrate } from './schema.js';

/**
 * How long a write waits for another process's lock before failing with "locked": 5 s, or
 * CARBON_BUSY_TIMEOUT_MS (whole milliseconds: env-timeouts.ts), which lets tests and impatient scripts wait less.
 */
export function busyTimeoutMs(): number {
  return timeoutMs(process.env.CARBON_BUSY_TIMEOUT_MS, 5000);
}

/**
 * Puts the ledger in WAL mode (it stays so: the mode is kept in the file). Switching needs the
 * file to itself, and SQLite answers BUSY at once, without its busy handler, when processes that
 * open a new ledger together race for that: such answers are retried for the busy timeout.
 */
function enableWal(db: Db): void {
  const deadline = Date.now() + busyTimeoutMs();
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      if (pragma(db, 'journal_mode') !== 'wal') db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      if (sqliteCode(err) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

/**
 * The WAL a crash (or a full disk) left behind, copied back into the ledger and truncated to
 * nothing, when it is longer than this: on a disk that filled up, the WAL holds the space the
 * next writes need, and only a checkpoint that completes gives it back (docs/reliability.md,
 * "A full disk").
 */
const WAL_LEFT_BEHIND = 256 * 1024;

/**
 * Pages in the WAL past which a connection's own commit checkpoints it (SQLite's default is
 * 1,000: 4 MiB): 1 MiB, so a WAL that this connection checkpoints (before the checkpointer
 * thread starts, or while it falls behind) is reset, and its file reused, about every hundred
 * purchases (a purchase writes about ten pages). The file is not cut back after each reset
 * (journal_size_limit): truncating and growing it again took a fifth of the purchase rate.
 */
export const SELF_CHECKPOINT_PAGES = 256;

/**
 * Copies the whole WAL back into the ledger and truncates it, if no other connection is reading
 * or writing at the moment (a busy ledger is left to its own checkpoints). Never an error: where
 * it cannot, nothing changed.
 */
export function truncateWal(db: Db): void {
  try {
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } catch {
    // Busy, or still no room: the next checkpoint tries again.
  } finally {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs()}`);
  }
}

/**
 * Whether the WAL is short enough for a command that wrote only journal entries to leave it to the
 * next at its exit (SqliteStore.close): 128 KiB, about thirty such entries.
 */
export const walKept = (path: string): boolean => walBytes(path) <= WAL_LEFT_BEHIND / 2;

/**
 * The WAL file a connection made itself, as it was made: its inode and times. While it is so (the
 * same file, empty, never changed), no frame has ever been written to it, so none can be replayed
 * (sqlite-journal.ts). A WAL emptied by a checkpoint that truncated it is the same file with its
 * old frames maybe still on the disk: never this.
 */
export interface MadeWal {
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** The WAL as the connection opening the ledger at `path` found it: absent before (`existed` false), made by it. */
export function madeWal(path: string, existed: boolean): MadeWal | undefined {
  if (existed || path === ':memory:') return undefined;
  const st = statSync(`${path}-wal`, { bigint: true, throwIfNoEntry: false });
  return st === undefined || st.size !== 0n ? undefined : { ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}

/** Whether the WAL is still the one `made`: the same file, empty, unchanged since. */
export function walAsMade(path: string, made: MadeWal): boolean {
  const st = statSync(`${path}-wal`, { bigint: true, throwIfNoEntry: false });
  return st !== undefined && st.size === 0n && st.ino === made.ino && st.mtimeNs === made.mtimeNs && st.ctimeNs === made.ctimeNs;
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/** Opens (creating when absent) the ledger file in `dir`: the directory 0700, the file 0600; and whether its WAL was there before (madeWal). */
export function openLedgerFile(dir: string): { db: Db; path: string; walExisted: boolean } {
  const path = join(dir, LEDGER_FILE);
  try {
    const { DatabaseSync } = sqlite(path);
    makeDirs(dir, 0o700);
    // Made 0600 when it is not there; an existing file is not opened here (closing a descriptor of a
    // file drops every lock the process holds on it: the library opened twice, turns.ts).
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    // Modes apply only to what is created: take back what a copy or a restore may have widened
    // (the keys file holds the plain keys the sandbox handed out).
    for (const [p, mode] of [
      [dir, 0o700],
      [path, 0o600],
      [join(dir, KEYS_FILE), 0o600],
    ] as const) {
      try {
        chmodSync(p, mode);
      } catch {
        // Not the owner, or (the keys file) not there yet: nothing to do here.
      }
    }
    return { db: new DatabaseSync(path), path, walExisted: existsSync(`${path}-wal`) };
  } catch (err) {
    throw sqliteError(err, path);
  }
}

/** A private ledger in memory. */
export function openMemoryLedger(): { db: Db; path: string } {
  return { db: new (sqlite(':memory:').DatabaseSync)(':memory:'), path: ':memory:' };
}

/** The connection's settings (WAL journal, busy timeout, page cache) and the schema brought up to date (true if it was not). */
export function prepareLedger(db: Db, path: string): boolean {
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs()}`);
    if (path !== ':memory:') {
      enableWal(db);
      // NORMAL in WAL mode: a commit survives any process crash (kill -9 included); an OS
      // crash or power loss may lose the last commits but never corrupts. docs/reliability.md.
      db.exec('PRAGMA synchronous = NORMAL');
      db.exec(`PRAGMA wal_autocheckpoint = ${SELF_CHECKPOINT_PAGES}`);
      if (walBytes(path) > WAL_LEFT_BEHIND) truncateWal(db);
    }
    // 4 MiB of page cache: reads walk an index and purchases touch a few pages, so a larger
    // cache only held the pages a `list --all` streamed past (12 MB of its peak at 16 MiB; the
    // same buys a second: BENCHMARKS.md).
    db.exec('PRAGMA cache_size = -4096');
    return migrate(db);
  } catch (err) {
    db.close();
    throw sqliteError(err, path);
  }
}
