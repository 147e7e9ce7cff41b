import { chmodSync, closeSync, existsSync, fstatSync, openSync } from 'node:fs';
import { makeDirs } from '../../platform/dirs.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Mode } from '../../api/types.js';
import { LedgerError } from '../ledger-error.js';
import type {
  AccountRecord, BrowseQuery, ImpactTotals, KeyRecord, KeyVault, LedgerReads, LedgerStore, LedgerTx, OffsetRecord, PageQuery,
} from '../port.js';
import { type RateWindow, takeFromWindow } from '../rate-window.js';
import { type Checkpointer, startCheckpointer, WAL_HIGH } from './checkpointer.js';
import { sqliteError } from './errors.js';
import { migrate } from './schema.js';
import { SqliteTx, lm } from './sqlite-tx.js';
import { DAY_MS, groupByPeriod } from '../periods.js';
import { OFFSET_COLUMNS, type Statements, offsetRecord, lazyStatements } from './statements.js';
import { KEYS_FILE, LEDGER_FILE, readVault, writeVault } from './files.js';

/**
 * The embedded store: one SQLite file in the data directory (WAL), shared by every carbon process
 * on this machine. Each transaction is BEGIN IMMEDIATE: processes serialise on SQLite's write
 * lock, so no two purchases can both spend the same cents; `CHECK (available_cents >= 0)` is a
 * last line of defence behind the service's own check.
 */

export { LEDGER_FILE };


/**
 * How long a write waits for another process's lock before failing with "locked": 5 s, or
 * CARBON_BUSY_TIMEOUT_MS (whole milliseconds), which lets tests and impatient scripts wait less.
 */
function busyTimeoutMs(): number {
  const raw = process.env.CARBON_BUSY_TIMEOUT_MS;
  return raw !== undefined && /^\d{1,7}$/.test(raw) ? Number(raw) : 5000;
}

/**
 * Puts the ledger in WAL mode (it stays so: the mode is kept in the file). Switching needs the
 * file to itself, and SQLite answers BUSY at once, without its busy handler, when processes that
 * open a new ledger together race for that: such answers are retried for the busy timeout.
 */
function enableWal(db: Database.Database): void {
  const deadline = Date.now() + busyTimeoutMs();
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!/^SQLITE_BUSY/.test((err as { code?: string }).code ?? '') || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

/**
 * Commits made by every SqliteStore of this process. PRAGMA data_version tells a connection about
 * other connections' commits, but the once-a-turn check below would miss one made by another
 * connection of this same process within the same turn (the library opened twice, the tests).
 */
let processCommits = 0;

/** Commits by one store before its checkpoints move to a worker thread (checkpointer.ts). */
const CHECKPOINTER_AFTER = 32;

interface Cache {
  version: number;
  /** processCommits less this store's own, when the cache was checked. */
  othersCommits: number;
  accountWrites: number;
  account: AccountRecord | undefined;
  keys: Map<string, KeyRecord>;
  balanceWrites: number;
  balances: [number | undefined, number | undefined];
}

export class SqliteStore implements LedgerStore {
  readonly kind = 'sqlite' as const;
  private readonly s: Statements;
  /** The transaction running now in this process (one connection runs one at a time), and its end. */
  private running: Promise<unknown> | null = null;
  private readonly windows = new Map<string, RateWindow>();
  /** Checkpoints off the purchase path, once this store has committed a few times. */
  private checkpointer: Checkpointer | undefined;
  /** Whether this connection's own commits checkpoint (wal_autocheckpoint on). */
  private selfCheckpoint = true;
  private readonly browseStatements = new Map<string, Database.Statement>();

  private constructor(
    /** The connection, for tests and tools that read the file's rows directly. */
    readonly db: Database.Database,
    readonly label: string,
    /** The data directory (the key vault lives beside the ledger), or null in memory. */
    private readonly dir: string | null,
  ) {
    this.s = lazyStatements(db);
    this.identityFd = dir === null || label === ':memory:' ? null : openSync(label, 'r');
  }

  /**
   * A descriptor of the ledger file this connection opened: once that file has no name left (it
   * was deleted, or another file was renamed over it), its link count is 0.
   */
  private readonly identityFd: number | null;

  /**
   * Writing to a ledger file that was deleted or replaced under this process would write into an
   * unlinked file, lost when the process ends: refused instead (503 from the server), with a
   * LedgerError that says what happened. One fstat a write (half a stat of the path).
   */
  private checkIdentity(): void {
    if (this.identityFd === null || fstatSync(this.identityFd).nlink > 0) return;
    throw new LedgerError(
      `The ledger ${this.label} was ${existsSync(this.label) ? 'replaced' : 'deleted'} while this process had it open; nothing more is written to the old one.`,
      this.label,
      'Restart carbon serve (or the command) to open the ledger that is there now.',
    );
  }

  /** Opens (creating when absent) the ledger in `dir`: the directory 0700, the file 0600, WAL journal. */
  static open(dir: string): SqliteStore {
    const path = join(dir, LEDGER_FILE);
    let db: Database.Database;
    try {
      makeDirs(dir, 0o700);
      closeSync(openSync(path, 'a', 0o600));
      // Modes apply only to what is created: take back what a copy or a restore may have widened
      // (the keys file holds the plain keys the sandbox handed out).
      for (const [p, mode] of [[dir, 0o700], [path, 0o600], [join(dir, KEYS_FILE), 0o600]] as const) {
        try {
          chmodSync(p, mode);
        } catch {
          // Not the owner, or (the keys file) not there yet: nothing to do here.
        }
      }
      db = new Database(path);
    } catch (err) {
      throw sqliteError(err, path);
    }
    return SqliteStore.init(db, path, dir);
  }

  /** A private ledger in memory (its key vault still in `dir`), for tests and throwaway models. */
  static memory(dir: string | null = null): SqliteStore {
    return SqliteStore.init(new Database(':memory:'), ':memory:', dir);
  }

  private static init(db: Database.Database, path: string, dir: string | null): SqliteStore {
    try {
      db.pragma(`busy_timeout = ${busyTimeoutMs()}`);
      if (path !== ':memory:') {
        enableWal(db);
        // NORMAL in WAL mode: a commit survives any process crash (kill -9 included); an OS
        // crash or power loss may lose the last commits but never corrupts. docs/reliability.md.
        db.pragma('synchronous = NORMAL');
      }
      // 4 MiB of page cache, not the 16 MiB better-sqlite3 builds SQLite with: reads walk an index
      // and purchases touch a few pages, so the rest only held the pages a `list --all` streamed
      // past (12 MB of its peak; the same buys a second: BENCHMARKS.md).
      db.pragma('cache_size = -4096');
      migrate(db);
      return new SqliteStore(db, path, dir);
    } catch (err) {
      db.close();
      throw sqliteError(err, path);
    }
  }

  /**
   * Every request reads the account and its key, and most its balance; all change rarely. They
   * are kept between requests and dropped when anything may have changed them: a commit by another
   * connection (another process: PRAGMA data_version moves) or a write through this one. The check
   * runs once per turn of the event loop: `carbon serve` answers the requests read in one turn
   * together, after reading them all, so an answer never misses a commit that finished before its
   * request arrived (BENCHMARKS.md: GET /balance, the freshness check once a batch).
   */
  private cache: Cache | undefined;
  private accountWrites = 0;
  private balanceWrites = 0;
  private checkedThisTurn = false;
  private ownCommits = 0;
  private readonly nextTurn = (): void => {
    this.checkedThisTurn = false;
  };

  private fresh(): Cache {
    let cache = this.cache;
    const others = processCommits - this.ownCommits;
    if (cache === undefined || cache.accountWrites !== this.accountWrites || !this.checkedThisTurn || cache.othersCommits !== others) {
      const version = this.s.dataVersion.get()!;
      if (!this.checkedThisTurn) {
        this.checkedThisTurn = true;
        setImmediate(this.nextTurn);
      }
      if (cache === undefined || cache.version !== version || cache.accountWrites !== this.accountWrites) {
        cache = { version, othersCommits: others, accountWrites: this.accountWrites, account: undefined, keys: new Map(), balanceWrites: this.balanceWrites, balances: [undefined, undefined] };
        this.cache = cache;
      }
      cache.othersCommits = others;
    }
    return cache;
  }

  async account(): Promise<AccountRecord | undefined> {
    if (this.running) await this.running.catch(() => {});
    try {
      const cache = this.fresh();
      if (cache.account !== undefined) return cache.account;
      const row = this.s.account.get();
      if (row !== undefined) cache.account = Object.freeze(row);
      return row;
    } catch (err) {
      throw sqliteError(err, this.label);
    }
  }

  async keyByHash(hash: Uint8Array): Promise<KeyRecord | undefined> {
    if (this.running) await this.running.catch(() => {});
    try {
      const cache = this.fresh();
      const id = Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('base64');
      let row = cache.keys.get(id);
      if (row === undefined) {
        row = this.s.keyByHash.get(hash);
        // Only keys that exist are kept, and only so many: unknown keys sprayed at a server cost memory.
        if (row !== undefined && cache.keys.size < 1000) cache.keys.set(id, Object.freeze(row));
      }
      return row;
    } catch (err) {
      throw sqliteError(err, this.label);
    }
  }

  async balance(mode: Mode): Promise<number> {
    if (this.running) await this.running.catch(() => {});
    try {
      const cache = this.fresh();
      if (cache.balanceWrites !== this.balanceWrites) {
        cache.balanceWrites = this.balanceWrites;
        cache.balances = [undefined, undefined];
      }
      const livemode = lm(mode);
      let cents = cache.balances[livemode];
      if (cents === undefined) {
        cents = this.s.balance.get(livemode) ?? 0;
        cache.balances[livemode] = cents;
      }
      return cents;
    } catch (err) {
      throw sqliteError(err, this.label);
    }
  }

  keys(): Promise<KeyRecord[]> {
    return this.guarded(() => this.reads.keys());
  }

  vault(): Promise<KeyVault> {
    return this.guarded(() => this.reads.vault());
  }

  impact(mode: Mode): Promise<ImpactTotals> {
    return this.guarded(() => this.reads.impact(mode));
  }

  due(mode: Mode, now: number): Promise<{ kg: number; count: number }> {
    return this.guarded(() => this.reads.due(mode, now));
  }

  offset(id: string): Promise<OffsetRecord | undefined> {
    return this.guarded(() => this.reads.offset(id));
  }

  offsetByCertificate(certificateId: string): Promise<OffsetRecord | undefined> {
    return this.guarded(() => this.reads.offsetByCertificate(certificateId));
  }

  page(mode: Mode, query: PageQuery): Promise<OffsetRecord[]> {
    return this.guarded(() => this.reads.page(mode, query));
  }

  browse(mode: Mode, query: BrowseQuery): Promise<OffsetRecord[]> {
    return this.guarded(() => this.reads.browse(mode, query));
  }

  reviewQueue(limit: number): Promise<OffsetRecord[]> {
    return this.guarded(() => this.reads.reviewQueue(limit));
  }

  kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null): Promise<Array<{ period: string; kg: number }>> {
    return this.guarded(() => this.reads.kgByPeriod(mode, period, since));
  }

  meta(name: string): Promise<string | undefined> {
    return this.guarded(() => this.reads.meta(name));
  }

  newestCreated(mode: Mode): Promise<number | null> {
    return this.guarded(() => this.reads.newestCreated(mode));
  }

  /** A read after this process's own transaction (if one runs), its failure said in the ledger's terms. */
  private async guarded<T>(read: () => Promise<T>): Promise<T> {
    if (this.running) await this.running.catch(() => {});
    try {
      return await read();
    } catch (err) {
      throw sqliteError(err, this.label);
    }
  }

  /** The reads themselves, uncached, as a transaction sees them too. */
  private readonly reads: LedgerReads = {
    account: async () => this.s.account.get(),
    keyByHash: async (hash) => this.s.keyByHash.get(hash),
    keys: async () => this.s.keys.all(),
    vault: async () => (this.dir === null ? { defaults: {}, secrets: {} } : readVault(this.dir)),
    balance: async (mode) => this.s.balance.get(lm(mode)) ?? 0,
    impact: async (mode) => this.s.impact.get(lm(mode)) ?? { placed_kg: 0, processing_kg: 0, offsets: 0 },
    due: async (mode, now) => (this.s.anyDue.get(now) === undefined ? { kg: 0, count: 0 } : this.s.due.get(now, lm(mode))!),
    offset: async (id) => this.s.offsetById.get(id),
    offsetByCertificate: async (id) => this.s.offsetByCertificate.get(id),
    page: async (mode, q) => {
      const before = q.beforeSeq ?? Number.MAX_SAFE_INTEGER;
      return (q.reference === null ? this.s.page.all(lm(mode), before, q.limit) : this.s.pageByReference.all(lm(mode), q.reference, before, q.limit)).map(offsetRecord);
    },
    browse: async (mode, q) => this.browseRows(mode, q),
    reviewQueue: async (limit) => this.s.reviewQueue.all(limit),
    kgByPeriod: async (mode, period, since) => groupByPeriod(this.s.daily.all(lm(mode), since === null ? 0 : Math.floor(since / DAY_MS)), period),
    newestCreated: async (mode) => this.s.newestCreated.get(lm(mode)) ?? null,
    meta: async (name) => this.s.meta.get(name),
  };

  private browseRows(mode: Mode, q: BrowseQuery): OffsetRecord[] {
    const where = ['livemode = @livemode', 'seq < @before'];
    // A prefix, compared as text (no LIKE: a % or _ in it is itself, and case counts).
    if (q.reference !== null) where.push('substr(reference, 1, length(@reference)) = @reference');
    if (q.status !== null) where.push('status = @status');
    if (q.since !== null) where.push('created_ms >= @since');
    if (q.until !== null) where.push('created_ms < @until');
    const sql = `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
    let stmt = this.browseStatements.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.browseStatements.set(sql, stmt);
    }
    return stmt.all({
      livemode: lm(mode),
      before: q.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: q.limit,
      ...(q.reference === null ? {} : { reference: q.reference }),
      ...(q.status === null ? {} : { status: q.status }),
      ...(q.since === null ? {} : { since: q.since }),
      ...(q.until === null ? {} : { until: q.until }),
    }) as OffsetRecord[];
  }

  /**
   * One transaction at a time on this connection: a second waits for the first. `wait: false`
   * gives up at once (LedgerError, transient) when another process or transaction holds the lock,
   * for work that can be left to the next writer.
   */
  async transaction<T>(fn: (tx: LedgerTx) => Promise<T>, options: { wait?: boolean } = {}): Promise<T> {
    while (this.running) {
      if (options.wait === false) throw this.locked();
      await this.running.catch(() => {});
    }
    const run = this.runTransaction(fn, options.wait !== false);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private locked(): LedgerError {
    return new LedgerError(`The ledger ${this.label} is locked by another process.`, this.label, 'Wait for the other carbon process to finish and try again.', true);
  }

  private async runTransaction<T>(fn: (tx: LedgerTx) => Promise<T>, wait: boolean): Promise<T> {
    this.checkIdentity();
    try {
      if (wait) this.s.begin.run();
      else {
        this.db.pragma('busy_timeout = 0');
        try {
          this.s.begin.run();
        } finally {
          this.db.pragma(`busy_timeout = ${busyTimeoutMs()}`);
        }
      }
    } catch (err) {
      throw sqliteError(err, this.label);
    }
    // Reads outside this transaction wait for it (see `running`), so they never see what it has
    // not committed.
    const tx = new SqliteTx(this.s, this.reads, this.db, () => this.readVaultNow());
    try {
      const result = await fn(tx);
      // The key file is written while this transaction still holds the write lock, before the
      // commit makes its keys visible: another process that sees the new keys in the ledger finds
      // their text beside it, and one making a key next starts from this file, not an older one.
      // Should the commit fail, the file goes back to what it held.
      const vaultBefore = tx.pendingVault !== undefined && this.dir !== null ? this.readVaultNow() : undefined;
      if (vaultBefore !== undefined) writeVault(this.dir!, tx.pendingVault!);
      try {
        this.s.commit.run();
      } catch (err) {
        if (vaultBefore !== undefined) writeVault(this.dir!, vaultBefore);
        throw err;
      }
      processCommits++;
      this.ownCommits++;
      this.checkpoints();
      return result;
    } catch (err) {
      if (this.db.inTransaction) this.s.rollback.run();
      throw sqliteError(err, this.label);
    } finally {
      // The kept copies are dropped whether the transaction committed or not.
      if (tx.touchedAccount) this.accountWrites++;
      if (tx.touchedBalance) this.balanceWrites++;
    }
  }

  /**
   * Who checkpoints the WAL: this connection's commits (SQLite's default, every 1,000 pages) for
   * the first few, then a worker thread (checkpointer.ts), except while the WAL is longer than
   * WAL_HIGH pages, when the worker cannot keep up with a writer that never pauses.
   */
  private checkpoints(): void {
    if (this.checkpointer === undefined) {
      if (this.ownCommits < CHECKPOINTER_AFTER || this.label === ':memory:') return;
      this.checkpointer = startCheckpointer(this.label);
    }
    const selfCheckpoint = this.checkpointer.walPages() > WAL_HIGH || this.checkpointer.walPages() < 0;
    if (selfCheckpoint !== this.selfCheckpoint) {
      this.db.pragma(`wal_autocheckpoint = ${selfCheckpoint ? 1000 : 0}`);
      this.selfCheckpoint = selfCheckpoint;
    }
  }

  /** The SQLite store's key vault is a file: written by the transaction that made a key, just before it commits. */
  readVaultNow(): KeyVault {
    return this.dir === null ? { defaults: {}, secrets: {} } : readVault(this.dir);
  }

  async takeRequest(keyId: string, now: number, limit: number, windowMs: number): Promise<number | null> {
    const { window, wait } = takeFromWindow(this.windows.get(keyId), now, limit, windowMs);
    this.windows.set(keyId, window);
    return wait;
  }

  async healthy(): Promise<boolean> {
    try {
      this.s.dataVersion.get();
      this.checkIdentity();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.running) await this.running.catch(() => {});
    if (this.checkpointer !== undefined) {
      await this.checkpointer.stop();
      // What the worker had not copied yet (the last connection's close copies all of it anyway).
      try {
        this.db.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Busy: the next writer's checkpoint takes it.
      }
    }
    this.db.close();
    if (this.identityFd !== null) closeSync(this.identityFd);
  }
}
