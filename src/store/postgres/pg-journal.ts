import type pg from 'pg';
import { JOURNAL_INSERT_COLUMNS, journalPrune, journalRecord, journalRow, journalSelect, prunes } from '../journal-sql.js';
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

/** The batch on `writer` (the journal's own connection); the prune, when the batch crosses its mark, two statements after it. */
export async function appendJournal(writer: pg.Pool, records: NewJournalRecord[], retention: JournalRetention): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(journalRow);
  const columns = JOURNAL_INSERT_COLUMNS.map((_, i) => rows.map((r) => r[i]));
  const arrays = JOURNAL_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
  const insert = `WITH i AS (INSERT INTO journal (${JOURNAL_INSERT_COLUMNS.join(', ')}) SELECT * FROM unnest(${arrays}) RETURNING seq)
    SELECT min(seq) AS first, max(seq) AS last FROM i`;
  const { first, last } = (await writer.query<{ first: number; last: number }>(insert, columns)).rows[0]!;
  if (!prunes(first, last, retention)) return;
  for (const d of journalPrune(retention, (n) => `$${n}`)) await writer.query(d.text, d.values);
}

export async function readJournal(q: Queryable, query: JournalQuery): Promise<JournalRecord[]> {
  const { text, values } = journalSelect(query, (n) => `$${n}`);
  if (!holdable(values)) return [];
  return (await q.query<Parameters<typeof journalRecord>[0]>(text, values)).rows.map(journalRecord);
}
