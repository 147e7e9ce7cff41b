import type { Mode } from '../api/types.js';
import { LedgerRowError } from './ledger-error.js';
import type { JournalQuery, JournalRecord, JournalRetention, NewJournalRecord, SnapshotRow } from './port.js';
import { livemodeOf } from './tables.js';

/**
 * The journal's statements, written once for both stores: each store gives its placeholder
 * (`?` or `$n`) and runs them its own way (SQLite: a few multi-row inserts inside one transaction;
 * PostgreSQL: the batch in one statement over unnest()).
 */

/** The columns an entry is written in, in this order (journalRow gives the values in it). */
export const JOURNAL_INSERT_COLUMNS = [
  'request_id',
  'model_ms',
  'real_ms',
  'method',
  'path',
  'query',
  'status',
  'error_type',
  'error_code',
  'error_param',
  'error_message',
  'duration_us',
  'key_id',
  'livemode',
  'idempotency_key',
  'replayed',
  'offset_id',
  'instance',
  'request_body',
  'response_body',
] as const;

/** An entry's values in the order of JOURNAL_INSERT_COLUMNS. */
export function journalRow(r: NewJournalRecord): unknown[] {
  return pushRow([], r);
}

/** Appends an entry's values, in the order of JOURNAL_INSERT_COLUMNS, to `values` (a multi-row insert's). */
export function pushRow(values: unknown[], r: NewJournalRecord): unknown[] {
  values.push(
    r.request_id,
    r.model_ms,
    r.real_ms,
    r.method,
    r.path,
    r.query,
    r.status,
    r.error_type,
    r.error_code,
    r.error_param,
    r.error_message,
    r.duration_us,
    r.key_id,
    r.mode === null ? null : livemodeOf(r.mode),
    r.idempotency_key,
    r.replayed ? 1 : 0,
    r.offset_id,
    r.instance,
    r.request_body,
    r.response_body,
  );
  return values;
}

const SELECT = `SELECT seq, ${JOURNAL_INSERT_COLUMNS.join(', ')} FROM journal`;

/** The read of `query`: its text with the store's placeholders, and its values. */
export function journalSelect(query: JournalQuery, placeholder: (n: number) => string): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(placeholder(values.length)));
  };
  if (query.beforeSeq !== null) add((p) => `seq < ${p}`, query.beforeSeq);
  if (query.afterSeq !== null) {
    // A follower whose last entry came before a snapshot's load goes on past the loaded entries (LOADED_AFTER).
    values.push(query.afterSeq, query.afterSeq);
    const [seen, otherwise] = [placeholder(values.length - 1), placeholder(values.length)];
    where.push(`seq > CASE WHEN ${seen} <= coalesce(${loaded(LOADED_AFTER)}, -1) THEN ${loaded(LOADED_THROUGH)} ELSE ${otherwise} END`);
  }
  if (query.status !== null) {
    add((p) => `status >= ${p}`, query.status[0]);
    add((p) => `status <= ${p}`, query.status[1]);
  }
  if (query.method !== null) add((p) => `method = ${p}`, query.method);
  // A prefix compared as text (no LIKE: `%` and `_` in a path are plain characters).
  if (query.pathPrefix !== null) add((p) => `substr(path, 1, ${query.pathPrefix!.length}) = ${p}`, query.pathPrefix);
  if (query.code !== null) add((p) => `error_code = ${p}`, query.code);
  if (query.sinceMs !== null) add((p) => `real_ms >= ${p}`, query.sinceMs);
  if (query.requestId !== null) add((p) => `request_id = ${p}`, query.requestId);
  if (query.mode !== null) add((p) => `livemode = ${p}`, livemodeOf(query.mode));
  values.push(query.limit);
  const order = query.afterSeq !== null ? 'ASC' : 'DESC';
  const filter = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
  return { text: `${SELECT}${filter} ORDER BY seq ${order} LIMIT ${placeholder(values.length)}`, values };
}

/**
 * A snapshot's journal loaded (`--with-journal`) is the snapshot's past, not requests made since:
 * its entries are numbered on from the highest seq the ledger had handed out (LOADED_AFTER), in
 * their order, up to LOADED_THROUGH, and new entries number on past them. These two named values
 * (meta, never in a snapshot) say so to a follower: one whose last entry is at or below
 * LOADED_AFTER (it saw only what the load replaced) reads the entries after LOADED_THROUGH, as
 * `stripe logs tail` and `docker logs -f` show only what comes. One whose last entry is a loaded
 * one reads on through them; a listing (newest first, `before`) shows them all.
 */
const LOADED_AFTER = 'journal_loaded_after';
const LOADED_THROUGH = 'journal_loaded_through';

const loaded = (name: string) => `(SELECT CAST(value AS BIGINT) FROM meta WHERE name = '${name}')`;

/** A load's numbering of the snapshot's journal rows (loadedSeqs). */
export interface LoadedSeqs {
  /** The highest seq handed out before the load. */
  readonly after: number;
  /** A batch of rows with their seqs numbered on, in their order. */
  rows(rows: SnapshotRow[]): SnapshotRow[];
  /** The last seq a loaded row took (`after` when none). */
  through(): number;
}

/**
 * The snapshot's journal rows numbered on from `after`. Rows out of their seqs' order (or one seq
 * twice) are refused as the data's fault, as the table's key refused a seq twice before.
 */
export function loadedSeqs(after: number): LoadedSeqs {
  let saved = Number.NEGATIVE_INFINITY;
  let through = after;
  return {
    after,
    rows: (rows) =>
      rows.map((row) => {
        const seq = row[0] as number;
        if (seq <= saved) throw new LedgerRowError(`journal seq ${seq} after ${saved}: the entries are in the order of their seqs`);
        saved = seq;
        through += 1;
        return [through, ...row.slice(1)];
      }),
    through: () => through,
  };
}

/** The statement that keeps a load's range (LOADED_AFTER, LOADED_THROUGH), with its values. */
export function loadedMarks(seqs: LoadedSeqs, placeholder: (n: number) => string): { text: string; values: string[] } {
  return {
    text: `INSERT INTO meta (name, value) VALUES ('${LOADED_AFTER}', ${placeholder(1)}), ('${LOADED_THROUGH}', ${placeholder(2)})
      ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    values: [String(seqs.after), String(seqs.through())],
  };
}

/**
 * Whether a batch that took seqs `first` to `last` prunes: once every hundredth of `keep` entries
 * written to the ledger, whichever process writes them (a command that answers one request prunes
 * when its entry is the one that crosses the mark, not every time it runs). A hundredth, not a
 * tenth: a prune of a thousand rows (of the default 10,000) held PostgreSQL busy long enough to
 * show in the purchases' p99 (1.22× with the journal on at 250/s; 1.01× with no prune at all).
 */
export function prunes(first: number, last: number, retention: JournalRetention): boolean {
  const step = Math.max(1, Math.floor(retention.keep / 100));
  return Math.floor(last / step) !== Math.floor((first - 1) / step);
}

/**
 * The retention's two deletes, each a range of the primary key from its start: past the newest
 * `keep` (by seq, so a count), and older than the age, up to the first entry that is not (entries
 * are written in time order; two instances' interleaved ones go at the next prune). The age's
 * used to be `real_ms < ?` under a guard on the oldest entry: PostgreSQL evaluated the guard once,
 * SQLite read the whole table at every prune (247 µs for 10,000 entries in memory, the pages of
 * all of them from disk).
 */
export function journalPrune(retention: JournalRetention, placeholder: (n: number) => string): Array<{ text: string; values: unknown[] }> {
  return [
    { text: `DELETE FROM journal WHERE seq <= (SELECT max(seq) FROM journal) - ${placeholder(1)}`, values: [retention.keep] },
    {
      text: `DELETE FROM journal WHERE seq < COALESCE((SELECT seq FROM journal WHERE real_ms >= ${placeholder(1)} ORDER BY seq LIMIT 1), (SELECT max(seq) FROM journal) + 1)`,
      values: [retention.now - retention.maxAgeMs],
    },
  ];
}

type Row = Omit<JournalRecord, 'mode' | 'replayed'> & { livemode: number | null; replayed: number };

/** A row as the port reads it. */
export function journalRecord(row: Row): JournalRecord {
  const { livemode, replayed, ...rest } = row;
  const mode: Mode | null = livemode === null ? null : livemode === 1 ? 'live' : 'test';
  return { ...rest, seq: Number(row.seq), mode, replayed: replayed === 1 };
}
