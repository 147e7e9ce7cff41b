import { JOURNAL_INSERT_COLUMNS, journalPrune, journalRecord, journalRow, journalSelect, prunes } from '../journal-sql.js';
import type { JournalQuery, JournalRecord, JournalRetention, NewJournalRecord } from '../port.js';
import { type Db, inTransaction, type Query, query } from './driver.js';
import { busyTimeoutMs } from './sqlite-open.js';

type Row = Parameters<typeof journalRecord>[0];

/**
 * The request journal on SQLite: a batch is one IMMEDIATE transaction of its own, one prepared
 * insert a row (SQLite has no round trip to save), the prune in the same transaction. Reads are
 * the shared statement text (journal-sql.ts), each kept once prepared.
 */
export class SqliteJournal {
  private insert: Query<unknown[]> | undefined;
  private readonly reads = new Map<string, Query<unknown[], Row>>();

  constructor(private readonly db: Db) {}

  /** Runs inside the store's turn (no other transaction of this connection is open), waiting up to `busyMs` for the write lock. */
  append(records: NewJournalRecord[], retention: JournalRetention, busyMs: number): void {
    this.insert ??= query<unknown[]>(
      this.db,
      `INSERT INTO journal (${JOURNAL_INSERT_COLUMNS.join(', ')}) VALUES (${JOURNAL_INSERT_COLUMNS.map(() => '?').join(', ')})`,
    );
    const insert = this.insert;
    const usual = busyTimeoutMs();
    if (busyMs !== usual) this.db.exec(`PRAGMA busy_timeout = ${busyMs}`);
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } finally {
      if (busyMs !== usual) this.db.exec(`PRAGMA busy_timeout = ${usual}`);
    }
    try {
      let first = 0;
      let last = 0;
      for (const r of records) {
        last = insert.run(...journalRow(r)).lastInsertRowid;
        first ||= last;
      }
      if (prunes(first, last, retention))
        for (const d of journalPrune(retention, () => '?')) query<unknown[]>(this.db, d.text).run(...d.values);
      this.db.exec('COMMIT');
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
