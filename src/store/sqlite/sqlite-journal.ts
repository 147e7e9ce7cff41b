import { monotonicUs } from '../../platform/host.js';
import { JOURNAL_INSERT_COLUMNS, journalPrune, journalRecord, journalSelect, prunes, pushRow } from '../journal-sql.js';
import { JOURNAL_EMPTIED_META, JOURNAL_SEQ_META, writtenSince } from '../journal-types.js';
import type { JournalQuery, JournalRecord, JournalRetention, NewJournalRecord } from '../port.js';
import { type Db, inTransaction, pragma, type Query, query } from './driver.js';
import { busyTimeoutMs, type MadeWal, SELF_CHECKPOINT_PAGES, walAsMade } from './sqlite-open.js';

type Row = Parameters<typeof journalRecord>[0];

/** When the journal was last emptied (port.ts, JOURNAL_EMPTIED_META), in real ms. */
const EMPTIED = 'SELECT CAST(value AS INTEGER) AS n FROM meta WHERE name = ?';

/** The most rows one insert statement takes (20 values each: 1,280, under SQLite's 32,766). */
const CHUNK = 64;

/**
 * The highest seq the journal had when it was last emptied (a reset, a snapshot loaded: journal-types.ts).
 * SQLite numbers a row one past the table's highest, so an emptied table would start again at 1; a
 * batch's first row takes its seq past this instead, and the rest follow it: a seq is never handed
 * out twice, and a follower (`carbon logs --follow`) that saw seq n reads every entry written after
 * a reset as "after n".
 */
const JOURNAL_SEQ = JOURNAL_SEQ_META;

/** Keeps the journal's highest seq before it is emptied (in the emptying transaction); returns the highest ever handed out (0: none). */
export function keepJournalSeq(db: Db): number {
  db.prepare(
    `INSERT INTO meta (name, value) SELECT '${JOURNAL_SEQ}', CAST(max(seq) AS TEXT) FROM journal WHERE true
       HAVING max(seq) > coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE name = '${JOURNAL_SEQ}'), 0)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
  ).run();
  const kept = db.prepare(`SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE name = '${JOURNAL_SEQ}'), 0) AS n`).get();
  return Number((kept as { n: number | bigint }).n);
}

/**
 * The request journal on SQLite: a batch is one IMMEDIATE transaction of its own, its rows in a
 * few multi-row inserts after the first row's own (a hundred rows are five statements, 1 + 64 +
 * 32 + 2 + 1, not a hundred: each run is a call into SQLite, a reset and an answer object; 1.036×
 * the `GET /balance` rate, BENCHMARKS.md), the prune in the same transaction. Every statement is
 * prepared once and kept: the inserts by size, the pragmas, the prunes and the reads
 * (journal-sql.ts's text).
 */
export class SqliteJournal {
  /** The insert of `n` rows, by n: a power of two up to CHUNK (a batch is written in at most log2(CHUNK)+1 statements). */
  private readonly inserts = new Map<number, Query<unknown[]>>();
  private readonly statements = new Map<string, Query<unknown[]>>();
  private readonly reads = new Map<string, Query<unknown[], Row>>();

  /** `path`: the ledger's file (`:memory:` for none); `made`: the WAL the store's connection made when it opened it, if it did. */
  constructor(
    private readonly db: Db,
    private readonly path: string,
    private made?: MadeWal,
  ) {}

  /** Runs inside the store's turn (no other transaction of this connection is open), waiting up to `busyMs` for the write lock. */
  append(records: NewJournalRecord[], retention: JournalRetention, busyMs: number): void {
    // Once written (by any process), or gone, it is never that file again: not looked at after.
    const made = this.made !== undefined && walAsMade(this.path, this.made) ? this.made : undefined;
    this.made = made;
    if (made === undefined) {
      this.begin(busyMs);
      this.write(records, retention);
      return;
    }
    // The pages past which a commit checkpoints, as this connection has them (its checkpointer's), while this batch writes with none.
    const pages = this.unsyncedHeader();
    const started = monotonicUs();
    try {
      this.begin(busyMs);
    } catch (err) {
      this.syncedHeader(pages);
      throw err;
    }
    // Another process wrote between the look and the lock: its frames are there, so this batch
    // syncs as any, waiting for the lock only what is left of its time.
    if (!walAsMade(this.path, made)) {
      this.run('ROLLBACK');
      this.syncedHeader(pages);
      this.begin(Math.max(0, Math.floor(busyMs - (monotonicUs() - started) / 1000)));
      this.write(records, retention);
      return;
    }
    try {
      this.write(records, retention);
    } finally {
      // Committed, or rolled back (write's own catch): outside the transaction again.
      this.syncedHeader(pages);
    }
  }

  /**
   * SQLite syncs a WAL's header before the first frame it writes after it, so that frames an
   * earlier use of the file left cannot be replayed over the ledger after a power loss (its
   * ticket ff5be73dee). Where the WAL is still, under the write lock, the file this connection
   * made when it opened the ledger (the last one to close it had removed it: a read after a `carbon
   * buy`), never written since, there are none, and a journal batch is written without that sync
   * and the directory's, as synchronous=OFF does: 0.4 ms of such a `carbon balance` (BENCHMARKS.md).
   * A WAL a checkpoint truncated to nothing is not one: its old frames may still be on the disk.
   * Nothing is checkpointed meanwhile (the only write SQLite syncs in WAL mode at
   * synchronous=NORMAL), so the ledger is never written unsynced,
   * and what a power loss may take is what NORMAL allows: the last commits (docs/reliability.md).
   * Both are set outside a transaction, as SQLite requires. Returns the checkpoint pages to restore.
   */
  private unsyncedHeader(): number {
    const pages = pragma<number>(this.db, 'wal_autocheckpoint') ?? SELF_CHECKPOINT_PAGES;
    this.run('PRAGMA wal_autocheckpoint = 0');
    this.run('PRAGMA synchronous = OFF');
    return pages;
  }

  private syncedHeader(pages: number): void {
    this.run('PRAGMA synchronous = NORMAL');
    this.run(`PRAGMA wal_autocheckpoint = ${pages}`);
  }

  /** BEGIN IMMEDIATE, waiting up to `busyMs` for the write lock. */
  private begin(busyMs: number): void {
    const usual = busyTimeoutMs();
    if (busyMs !== usual) this.run(`PRAGMA busy_timeout = ${busyMs}`);
    try {
      this.run('BEGIN IMMEDIATE');
    } finally {
      if (busyMs !== usual) this.run(`PRAGMA busy_timeout = ${usual}`);
    }
  }

  /** The batch's rows and the prune, in the transaction begun, committed. */
  private write(records: NewJournalRecord[], retention: JournalRetention): void {
    try {
      // Those answered before the journal was last emptied (a reset, a load) are not written (port.ts).
      const emptied = Number((this.statement(EMPTIED).get(JOURNAL_EMPTIED_META) as { n: number | bigint } | undefined)?.n ?? 0);
      const kept = records.filter((r) => writtenSince(r, emptied));
      if (kept.length === 0) {
        this.run('COMMIT');
        return;
      }
      // The first row's seq: past the journal's highest, and past the one it had when last emptied.
      let last = this.first().run(...pushRow([], kept[0]!)).lastInsertRowid;
      for (let at = 1; at < kept.length; ) {
        let n = CHUNK;
        while (n > kept.length - at) n >>= 1;
        const values: unknown[] = [];
        for (let i = at; i < at + n; i++) pushRow(values, kept[i]!);
        last = this.insert(n).run(...values).lastInsertRowid;
        at += n;
      }
      const first = last - kept.length + 1;
      if (prunes(first, last, retention)) for (const d of journalPrune(retention, () => '?')) this.statement(d.text).run(...d.values);
      this.run('COMMIT');
    } catch (err) {
      if (inTransaction(this.db)) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // Not in one after all (older Node cannot say).
        }
      }
      throw err;
    }
  }

  private first(): Query<unknown[]> {
    let statement = this.inserts.get(0);
    if (statement === undefined) {
      const seq = `(SELECT max(coalesce((SELECT max(seq) FROM journal), 0), coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE name = '${JOURNAL_SEQ}'), 0)) + 1)`;
      statement = query<unknown[]>(
        this.db,
        `INSERT INTO journal (seq, ${JOURNAL_INSERT_COLUMNS.join(', ')}) VALUES (${seq}, ${JOURNAL_INSERT_COLUMNS.map(() => '?').join(', ')})`,
      );
      this.inserts.set(0, statement);
    }
    return statement;
  }

  private insert(n: number): Query<unknown[]> {
    let statement = this.inserts.get(n);
    if (statement === undefined) {
      const row = `(${JOURNAL_INSERT_COLUMNS.map(() => '?').join(', ')})`;
      statement = query<unknown[]>(
        this.db,
        `INSERT INTO journal (${JOURNAL_INSERT_COLUMNS.join(', ')}) VALUES ${Array(n).fill(row).join(', ')}`,
      );
      this.inserts.set(n, statement);
    }
    return statement;
  }

  private statement(text: string): Query<unknown[]> {
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = query<unknown[]>(this.db, text);
      if (this.statements.size < 16) this.statements.set(text, statement);
    }
    return statement;
  }

  private run(text: string): void {
    this.statement(text).run();
  }

  read(asked: JournalQuery): JournalRecord[] {
    const { text, values } = journalSelect(asked, () => '?');
    let statement = this.reads.get(text);
    if (statement === undefined) {
      statement = query<unknown[], Row>(this.db, text);
      if (this.reads.size < 64) this.reads.set(text, statement);
    }
    return statement.all(...values).map(journalRecord);
  }
}
