import type { Mode } from '../../api/types.js';
import type { Health } from '../health.js';
import { JOURNAL_EMPTIED_META } from '../journal-types.js';
import type {
  AccountRecord,
  CloseOptions,
  JournalQuery,
  JournalRecord,
  JournalRetention,
  KeyRecord,
  KeyVault,
  LedgerExport,
  LedgerStore,
  LedgerTx,
  NewJournalRecord,
} from '../port.js';
import { type RateWindow, takeFromWindow, windowName } from '../rate-window.js';
import { livemodeOf } from '../tables.js';
import { WalCheckpoints } from './checkpointer.js';
import { type Db, inTransaction } from './driver.js';
import { lockedLedger, sqliteCode, sqliteError } from './errors.js';
import { readVault, writeVault } from './files.js';
import { LedgerIdentity } from './identity.js';
import { SqliteReadCache } from './sqlite-cache.js';
import { SqliteJournal } from './sqlite-journal.js';
import {
  busyTimeoutMs,
  type MadeWal,
  madeWal,
  openLedgerFile,
  openMemoryLedger,
  prepareLedger,
  truncateWal,
  walKept,
} from './sqlite-open.js';
import { digest, SqliteReads } from './sqlite-reads.js';
import { exportLedger } from './sqlite-snapshot.js';
import { SqliteTx } from './sqlite-tx.js';
import { lazyStatements } from './statements.js';
import { ownTurn, type Turn } from './turns.js';

/**
 * The embedded store: one SQLite file in the data directory (WAL), shared by every carbon process
 * on this machine. Each transaction is BEGIN IMMEDIATE: processes serialise on SQLite's write
 * lock, so no two purchases can both spend the same cents; `CHECK (available_cents >= 0)` is a
 * last line of defence behind the service's own check.
 */

export class SqliteStore extends SqliteReads implements LedgerStore {
  /** The transaction running now on this file in this process (any of its connections: turns.ts), and its end. */
  private readonly turn: Turn;
  private closed = false;
  private readonly windows = new Map<string, RateWindow>();
  /** The journal's emptied mark the windows were counted under: a reset or a load (any process's) moves it. */
  private windowsSince: string | undefined;
  /** Checkpoints off the purchase path, once this store has committed a few times. */
  private readonly checkpoints: WalCheckpoints;
  /** The ledger file this connection opened, to refuse writes once it is gone (identity.ts). */
  private readonly identity: LedgerIdentity | null;
  /** The WAL this connection made when it opened the ledger, if it did (sqlite-open.ts): its first journal batch needs no header sync. */
  private madeWal: MadeWal | undefined;

  private constructor(
    /** The connection, for tests and tools that read the file's rows directly. */
    readonly db: Db,
    readonly label: string,
    dir: string | null,
    /** Wrote other than journal entries: a migration, then any transaction. */ private wroteLedger: boolean,
  ) {
    super({ db, s: lazyStatements(db), dir, browseStatements: new Map() });
    this.identity = dir === null || label === ':memory:' ? null : new LedgerIdentity(label);
    this.turn = this.identity?.turn ?? ownTurn();
    this.checkpoints = new WalCheckpoints(db, label);
  }

  /** Opens (creating when absent) the ledger in `dir`: the directory 0700, the file 0600, WAL journal. */
  static open(dir: string): SqliteStore {
    const { db, path, walExisted } = openLedgerFile(dir);
    const store = new SqliteStore(db, path, dir, prepareLedger(db, path));
    store.madeWal = madeWal(path, walExisted);
    return store;
  }

  /** A private ledger in memory (its key vault still in `dir`), for tests and throwaway models. */
  static memory(dir: string | null = null): SqliteStore {
    const { db, path } = openMemoryLedger();
    return new SqliteStore(db, path, dir, prepareLedger(db, path));
  }

  /** The account, keys, balances and named values every request reads (sqlite-cache.ts). */
  private readonly cache = new SqliteReadCache(() => this.c.s.dataVersion.get()!);

  /** A read after this process's own transaction (if one runs), its failure said in the ledger's terms. */
  protected override async run<T>(read: () => T): Promise<T> {
    if (this.turn.running) await this.turn.running.catch(() => {});
    try {
      return read();
    } catch (err) {
      throw sqliteError(err, this.label);
    }
  }

  override account(): Promise<AccountRecord | undefined> {
    return this.run(() => this.cache.account(() => this.c.s.account.get()));
  }

  override keyBySecret(secret: string): Promise<KeyRecord | undefined> {
    return this.run(() => this.cache.key(secret, () => this.c.s.keyByHash.get(digest(secret))));
  }

  override balance(mode: Mode): Promise<number> {
    const livemode = livemodeOf(mode);
    return this.run(() => this.cache.balance(livemode, () => this.c.s.balance.get(livemode) ?? 0));
  }

  override meta(name: string): Promise<string | undefined> {
    return this.run(() => this.cache.meta(name, () => this.c.s.meta.get(name)));
  }

  /** One at a time (a journal batch waiting goes first); `wait: false` gives up at once (LedgerError, transient) on a lock held. */
  async transaction<T>(fn: (tx: LedgerTx) => Promise<T>, options: { wait?: boolean } = {}): Promise<T> {
    while (this.turn.running || this.journalNext) {
      if (options.wait === false) throw lockedLedger(this.label);
      await (this.turn.running ?? this.journalNext)!.catch(() => {});
    }
    const run = this.runTransaction(fn, options.wait !== false);
    this.turn.running = run;
    try {
      return await run;
    } finally {
      if (this.turn.running === run) this.turn.running = null;
    }
  }

  private async runTransaction<T>(fn: (tx: LedgerTx) => Promise<T>, wait: boolean): Promise<T> {
    this.identity?.check();
    try {
      if (wait) this.c.s.begin.run();
      else {
        this.db.exec('PRAGMA busy_timeout = 0');
        try {
          this.c.s.begin.run();
        } finally {
          this.db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs()}`);
        }
      }
    } catch (err) {
      throw sqliteError(err, this.label);
    }
    // Reads outside this transaction wait for it (see `turn`), so they never see what it has not committed.
    const tx = new SqliteTx(this.c, () => this.readVaultNow());
    try {
      const result = await fn(tx);
      // The key file is written while this transaction still holds the write lock, before the
      // commit makes its keys visible: another process that sees the new keys in the ledger finds
      // their text beside it, and one making a key next starts from this file, not an older one.
      // Should the commit fail, the file goes back to what it held.
      const vaultBefore = tx.pendingVault !== undefined && this.c.dir !== null ? this.readVaultNow() : undefined;
      if (vaultBefore !== undefined) writeVault(this.c.dir!, tx.pendingVault!);
      try {
        this.c.s.commit.run();
      } catch (err) {
        if (vaultBefore !== undefined) writeVault(this.c.dir!, vaultBefore);
        throw err;
      }
      this.wroteLedger = true;
      this.committed();
      return result;
    } catch (err) {
      if (inTransaction(this.db)) {
        try {
          this.c.s.rollback.run();
        } catch {
          // SQLite had already rolled it back (a full disk, an I/O error): nothing is left open.
        }
      }
      // A full disk: the WAL may hold the room the next write needs. Copied back and truncated
      // when it can be (space was freed since), the next request finds it.
      if (this.label !== ':memory:' && ['SQLITE_FULL', 'SQLITE_IOERR'].includes(sqliteCode(err))) truncateWal(this.db);
      throw sqliteError(err, this.label);
    } finally {
      // The kept copies are dropped whether the transaction committed or not.
      this.cache.wrote(tx);
    }
  }

  /** After each commit of this connection: counted for the read cache, and for who checkpoints the WAL (checkpointer.ts). */
  private committed(): void {
    this.cache.committed();
    this.checkpoints.committed(this.cache.ownCommits);
  }

  /** The SQLite store's key vault is a file: written by the transaction that made a key, just before it commits. */
  readVaultNow(): KeyVault {
    return this.c.dir === null ? { defaults: {}, secrets: {} } : readVault(this.c.dir);
  }

  private journalStatements: SqliteJournal | undefined;

  /** The journal's batch (sqlite-journal.ts) in this connection's turn; it writes nothing the read cache keeps. */
  async appendJournal(records: NewJournalRecord[], retention: JournalRetention, options: { waitMs?: number } = {}): Promise<void> {
    if (records.length === 0) return;
    // This process's own transaction ends in a moment: waited for, whatever `waitMs` (that bounds
    // another process's lock), and transactions that come meanwhile wait behind the batch. Else a
    // burst of purchases left the journal no turn, and its entries, past MAX_WAITING, were dropped.
    let next: (() => void) | undefined;
    if (this.turn.running) this.journalNext = new Promise<void>((resolve) => (next = resolve));
    while (this.turn.running) await this.turn.running.catch(() => {});
    try {
      this.identity?.check();
      // Synchronous from BEGIN to COMMIT: nothing else of this connection runs meanwhile.
      (this.journalStatements ??= new SqliteJournal(this.db, this.label, this.madeWal)).append(
        records,
        retention,
        Math.min(options.waitMs ?? Number.POSITIVE_INFINITY, busyTimeoutMs()),
      );
      // A commit as any other: a server answering only reads hands its checkpoints to the worker too.
      this.committed();
    } catch (err) {
      throw sqliteError(err, this.label);
    } finally {
      if (next !== undefined) this.journalNext = null;
      next?.();
    }
  }
  /** A journal batch waiting for this connection's turn, which transactions that come meanwhile wait behind. */
  private journalNext: Promise<void> | null = null;

  journal(query: JournalQuery): Promise<JournalRecord[]> {
    return this.run(() => (this.journalStatements ??= new SqliteJournal(this.db, this.label, this.madeWal)).read(query));
  }

  /** A read transaction on this connection: this process's other work on it waits until the export is closed. */
  async exportLedger(metaNames: readonly string[]): Promise<LedgerExport> {
    while (this.turn.running) await this.turn.running.catch(() => {});
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.turn.running = held;
    const done = () => {
      if (this.turn.running === held) this.turn.running = null;
      release();
    };
    try {
      return exportLedger(this.db, this.readVaultNow(), metaNames, done);
    } catch (err) {
      done();
      throw sqliteError(err, this.label);
    }
  }

  async takeRequest(keyId: string, now: number, limit: number, windowMs: number): Promise<number | null> {
    // A reset or a snapshot loaded, here or in another process, starts every key's count again (the
    // PostgreSQL store deletes its rows in the same transaction): a loaded seed started rate-limited.
    const since = await this.meta(JOURNAL_EMPTIED_META);
    if (since !== this.windowsSince) {
      this.windows.clear();
      this.windowsSince = since;
    }
    const name = windowName(keyId, limit, windowMs);
    const { window, wait } = takeFromWindow(this.windows.get(name), now, limit, windowMs);
    this.windows.set(name, window);
    return wait;
  }

  /** The ledger read, and its file the one this connection opened: a busy file passes; a replaced, removed or broken one a person mends. */
  async health(): Promise<Health> {
    try {
      this.c.s.dataVersion.get();
      this.identity?.check();
      return { ok: true };
    } catch (err) {
      const busy = sqliteCode(err) === 'SQLITE_BUSY';
      return { ok: false, reason: busy ? 'no_answer' : 'ledger_unusable', passing: busy };
    }
  }

  /**
   * The last close copies the WAL back and deletes it, with four fsyncs. At a process's end, a
   * connection that wrote only journal entries to a short WAL is left to the OS, as a crash would
   * be, for the next command to append to (docs/reliability.md, "What a command leaves").
   */
  async close(options: CloseOptions = {}): Promise<void> {
    if (this.turn.running) await this.turn.running.catch(() => {});
    if (options.exiting === true && this.leftToExit()) return;
    if (this.closed) return;
    this.closed = true;
    await this.checkpoints.stop();
    this.db.close();
    this.identity?.close();
  }

  private leftToExit(): boolean {
    return !this.wroteLedger && !this.checkpoints.started && this.label !== ':memory:' && walKept(this.label);
  }
}
