import type pg from 'pg';
import { JOURNAL_INSERT_COLUMNS, journalPrune, journalRecord, journalRow, journalSelect, prunes } from '../journal-sql.js';
import { JOURNAL_EMPTIED_META, JOURNAL_SEQ_META } from '../journal-types.js';
import { type JournalQuery, type JournalRecord, type JournalRetention, type NewJournalRecord, SNAPSHOT_TABLES } from '../port.js';
import { holdable, type Queryable } from './pg-reads.js';

/** The request journal on PostgreSQL: a batch in one statement (its columns as arrays, unnest()), and its reads. */

/**
 * The journal's columns' array types, in the order of JOURNAL_INSERT_COLUMNS (for unnest()), from
 * the kinds the snapshot tables declare (livemode's bigint is assigned to its smallint column).
 */
const JOURNAL_TYPES = (() => {
  const { columns } = SNAPSHOT_TABLES.find((t) => t.name === 'journal')!;
  return JOURNAL_INSERT_COLUMNS.map((c) => (columns[c].startsWith('int') ? 'bigint' : 'text'));
})();

/**
 * The batch on `writer` (the journal's own connection, or a command's one); the prune, when the
 * batch crosses its mark, two statements after it. The batch's COMMIT does not wait for its WAL to
 * reach the disk (`synchronous_commit = off`; the purchases' commits still do): a PostgreSQL crash
 * may lose the journal's last moments (at most three times `wal_writer_delay`, 600 ms by default),
 * never a purchase. With `lockWaitMs`, the journal's lock is waited for that long at most
 * (0: not at all).
 *
 * The batch takes its seqs under the journal's lock (the one a reset and a load take), held to its
 * commit: batches of the instances on one ledger commit in the order of their seqs. Without it, a
 * batch that took its seqs and was slow to commit (a large one, a busy server) committed after
 * another instance's later seqs, which a follower (`carbon logs --follow`, after=SEQ) had printed
 * and gone past: its entries were never printed.
 */
export async function appendJournal(
  writer: pg.Pool,
  records: NewJournalRecord[],
  retention: JournalRetention,
  lockWaitMs?: number,
): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(journalRow);
  const columns = JOURNAL_INSERT_COLUMNS.map((_, i) => rows.map((r) => r[i]));
  columns.push(records.map((r) => r.emptied_read ?? null));
  const arrays = [...JOURNAL_TYPES, 'bigint'].map((t, i) => `$${i + 1}::${t}[]`).join(', ');
  const names = JOURNAL_INSERT_COLUMNS.join(', ');
  // Those answered from the sandbox before the journal was last emptied (a reset, a load) are not
  // written: journal-types.ts, writtenSince, which this WHERE is.
  const insert = `WITH e AS (SELECT coalesce((SELECT value::bigint FROM meta WHERE name = '${JOURNAL_EMPTIED_META}'), 0) AS ms),
    i AS (INSERT INTO journal (${names})
      SELECT ${names} FROM unnest(${arrays}) AS u(${names}, emptied_read), e
      WHERE CASE WHEN u.emptied_read IS NULL THEN u.real_ms >= e.ms ELSE u.emptied_read = e.ms END RETURNING seq)
    SELECT min(seq) AS first, max(seq) AS last FROM i`;
  const client = await writer.connect();
  let broken = false;
  let seqs: { first: number | null; last: number };
  try {
    await client.query(`BEGIN; SET LOCAL synchronous_commit = off;${lockStatement(lockWaitMs)}`);
    seqs = (await client.query<{ first: number | null; last: number }>(insert, columns)).rows[0]!;
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    // A session that began read-only stays so: ended, so the next batch asks a new one.
    if ((err as { code?: string }).code === '25006') broken = true;
    throw err;
  } finally {
    client.release(broken);
  }
  if (seqs.first === null || !prunes(seqs.first, seqs.last, retention)) return;
  for (const d of journalPrune(retention, (n) => `$${n}`)) await writer.query(d.text, d.values);
}

/** The journal's lock, waited for as any statement waits, for `lockWaitMs` at most, or (0) not at all. */
function lockStatement(lockWaitMs: number | undefined): string {
  const lock = 'LOCK TABLE journal IN SHARE ROW EXCLUSIVE MODE';
  if (lockWaitMs === undefined) return ` ${lock}`;
  // lock_timeout = 0 would mean no bound at all: NOWAIT is PostgreSQL's "not at all".
  if (lockWaitMs <= 0) return ` ${lock} NOWAIT`;
  return ` SET LOCAL lock_timeout = ${Math.ceil(lockWaitMs)}; ${lock}`;
}

/**
 * Keeps the highest seq handed out (JOURNAL_SEQ_META: the journal's sequence, never emptied) in the
 * transaction that empties the journal, after its lock: a follower starting on the emptied journal starts there.
 */
export const KEEP_JOURNAL_SEQ =
  `INSERT INTO meta (name, value) SELECT '${JOURNAL_SEQ_META}', n::text FROM (SELECT pg_sequence_last_value(pg_get_serial_sequence('journal', 'seq')::regclass) AS n) s ` +
  'WHERE n IS NOT NULL ON CONFLICT (name) DO UPDATE SET value = excluded.value; ';

export async function readJournal(q: Queryable, query: JournalQuery): Promise<JournalRecord[]> {
  const { text, values } = journalSelect(query, (n) => `$${n}`);
  if (!holdable(values)) return [];
  return (await q.query<Parameters<typeof journalRecord>[0]>(text, values)).rows.map(journalRecord);
}
