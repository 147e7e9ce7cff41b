import type pg from 'pg';
import { loadedMarks, loadedSeqs } from '../journal-sql.js';
import { LedgerRowError } from '../ledger-error.js';
import type * as port from '../port.js';
import { SNAPSHOT_TABLES } from '../port.js';
import { snapshotSelect } from '../snapshot-tables.js';
import { wholeLedgerQuery } from './deadlines.js';
import { pgError } from './errors.js';
import { KEEP_JOURNAL_SEQ } from './pg-journal.js';
import { keyOrder, type Queryable } from './pg-reads.js';

/**
 * Snapshots on PostgreSQL (port.ts: exportLedger, importLedger): the rows of SNAPSHOT_TABLES read
 * through a cursor in one REPEATABLE READ, READ ONLY transaction (a consistent view that holds no
 * lock a writer waits for), and written back by `unnest`, a batch a statement.
 */

/** Rows fetched from the cursor at a time. */
const FETCH = 2000;
/** Texts of keys no longer in the ledger that the key vault keeps, for a snapshot that brings them back (port.ts). */
const RETIRED_TEXTS = 1000;

type Table = (typeof SNAPSHOT_TABLES)[number];

/** Each table's SELECT, its columns in SNAPSHOT_TABLES' order, in a stable order of rows. */
function select(table: Table): string {
  if (table.name === 'api_keys') {
    return `SELECT k.id, k.hash, k.livemode, k.permission, k.last4, k.created_ms, k.revoked_ms, v.default_for FROM api_keys k LEFT JOIN key_vault v ON v.id = k.id ORDER BY ${keyOrder('k.')}`;
  }
  return snapshotSelect(table, table.name === 'meta' ? ' WHERE name = ANY($1::text[])' : '');
}

/**
 * A consistent view of every table on one connection of its own, given back by close(). A read of
 * the rows that fails (the connection ended meanwhile: a restart, the idle-in-transaction deadline
 * while the writer waits for its reader) is said in the ledger's terms, as the rest of the store's.
 */
export async function exportLedger(pool: pg.Pool, metaNames: readonly string[], label: string): Promise<port.LedgerExport> {
  const client = await pool.connect();
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    let broken = false;
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    client.release(broken);
  };
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const count = (t: Table) =>
      t.name === 'meta' ? '(SELECT count(*) FROM meta WHERE name = ANY($1::text[]))' : `(SELECT count(*) FROM ${t.name})`;
    const row = (await client.query({ text: `SELECT ${SNAPSHOT_TABLES.map(count).join(', ')}`, values: [metaNames], rowMode: 'array' }))
      .rows[0] as number[];
    const counts = Object.fromEntries(SNAPSHOT_TABLES.map((t, i) => [t.name, Number(row[i])])) as port.LedgerExport['counts'];
    return { counts, rows: (name) => said(rowsOf(client, SNAPSHOT_TABLES.find((t) => t.name === name)!, metaNames), label), close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function* said<T>(rows: AsyncGenerator<T>, label: string): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (err) {
    throw pgError(err, label);
  }
}

async function* rowsOf(client: pg.PoolClient, table: Table, metaNames: readonly string[]): AsyncGenerator<port.SnapshotRow[]> {
  await client.query({
    text: `DECLARE snapshot_rows NO SCROLL CURSOR FOR ${select(table)}`,
    values: table.name === 'meta' ? [metaNames] : [],
  });
  try {
    for (;;) {
      const { rows } = await client.query({ text: `FETCH ${FETCH} FROM snapshot_rows`, rowMode: 'array' });
      if (rows.length > 0) yield rows as port.SnapshotRow[];
      if (rows.length < FETCH) return;
    }
  } finally {
    await client.query('CLOSE snapshot_rows');
  }
}

const PG_TYPES: Record<port.ColumnKind, string> = { int: 'bigint', 'int?': 'bigint', text: 'text', 'text?': 'text', bytes: 'bytea' };

/** A constraint the rows broke (23xxx: unique, check, not null), said as the data's fault. */
function rowError(err: unknown): unknown {
  const code = (err as { code?: string }).code ?? '';
  return code.startsWith('23') || code === '22003' ? new LedgerRowError((err as Error).message) : err;
}

/** Everything but the key vault's texts and the named values not in `metaNames`, deleted; the rows inserted. */
export async function importLedger(q: Queryable, batches: port.LedgerImport, metaNames: readonly string[]): Promise<void> {
  // The snapshot's journal numbered on past every seq handed out (journal-sql.ts, LOADED_AFTER).
  // The journal's writes of every connection wait for this load to commit (they take no other
  // lock), so none takes a seq among the loaded ones.
  await q.query(`LOCK TABLE journal IN SHARE ROW EXCLUSIVE MODE; ${KEEP_JOURNAL_SEQ}`);
  const next = await q.query<{ seq: string }>(`SELECT nextval(pg_get_serial_sequence('journal', 'seq')) AS seq`);
  const seqs = loadedSeqs(Number(next.rows[0]!.seq) - 1);
  await overWholeLedger(
    q,
    'DELETE FROM idempotency; DELETE FROM entries; DELETE FROM offsets; DELETE FROM impact; DELETE FROM impact_daily; DELETE FROM balances; ' +
      'DELETE FROM api_keys; DELETE FROM rate_windows; DELETE FROM account; DELETE FROM journal; ' +
      'UPDATE key_vault SET default_for = NULL; DELETE FROM key_vault WHERE secret IS NULL',
  );
  await q.query('DELETE FROM meta WHERE name = ANY($1::text[])', [metaNames]);
  const defaults: Array<[string, string]> = [];
  try {
    for await (const { table, rows } of batches) {
      const spec = SNAPSHOT_TABLES.find((t) => t.name === table)!;
      let kinds = Object.entries(spec.columns) as Array<[string, port.ColumnKind]>;
      let values = rows;
      if (table === 'meta') values = rows.filter((r) => metaNames.includes(r[0] as string));
      if (table === 'journal') values = seqs.rows(rows);
      if (table === 'api_keys') {
        // default_for is the vault's, not a column of api_keys.
        for (const r of rows) if (r[7] !== null) defaults.push([r[0] as string, r[7] as string]);
        kinds = kinds.slice(0, 7);
        values = rows.map((r) => r.slice(0, 7));
      }
      if (values.length > 0) await insert(q, table, kinds, values);
    }
  } catch (err) {
    throw rowError(err);
  }
  await q.query(
    `SELECT setval(pg_get_serial_sequence('offsets', 'seq'), coalesce((SELECT max(seq) FROM offsets), 0) + 1, false),
            setval(pg_get_serial_sequence('entries', 'seq'), coalesce((SELECT max(seq) FROM entries), 0) + 1, false),
            setval(pg_get_serial_sequence('journal', 'seq'), $1, false)`,
    [seqs.through() + 1],
  );
  const marks = loadedMarks(seqs, (n) => `$${n}`);
  await q.query(marks.text, marks.values);
  await keepTexts(q, defaults);
}

/**
 * Statements over the whole ledger (no parameters), under their own deadline (deadlines.ts,
 * WHOLE_LEDGER_DEADLINES): the results of each. One that runs past it is said as such (errors.ts).
 */
export async function overWholeLedger<R extends object>(q: Queryable, text: string): Promise<Array<{ rows: R[] }>> {
  try {
    const results = (await q.query(wholeLedgerQuery(text))) as unknown as Array<{ rows: R[] }>;
    return results.slice(1, -1);
  } catch (err) {
    throw Object.assign(err as Error, { wholeLedger: true });
  }
}

async function insert(q: Queryable, table: string, kinds: Array<[string, port.ColumnKind]>, rows: port.SnapshotRow[]) {
  const names = kinds.map(([name]) => name);
  const arrays = kinds.map((_, i) => rows.map((r) => (r[i] instanceof Uint8Array ? Buffer.from(r[i] as Uint8Array) : r[i])));
  const unnest = `unnest(${kinds.map(([, kind], i) => `$${i + 1}::${PG_TYPES[kind]}[]`).join(', ')})`;
  const text =
    table === 'account'
      ? `INSERT INTO account (id, ${names.join(', ')}) SELECT 1, * FROM ${unnest}`
      : `INSERT INTO ${table} (${names.join(', ')}) SELECT * FROM ${unnest}`;
  await q.query(text, arrays);
}

/**
 * The vault after an import: a text stays attached to a key of the snapshot only if its SHA-256
 * is that key's (a key id of another ledger never gets this one's text), the starting keys take
 * their roles whether or not their text is known here (a row without a secret, so a file that went
 * through a ledger that never held the texts comes back with its roles), and at most
 * RETIRED_TEXTS texts of keys not in the ledger are kept.
 */
async function keepTexts(q: Queryable, defaults: Array<[string, string]>): Promise<void> {
  await q.query(`DELETE FROM key_vault v USING api_keys k WHERE v.id = k.id AND sha256(convert_to(v.secret, 'UTF8')) <> k.hash`);
  for (const [id, role] of defaults) {
    await q.query(
      'INSERT INTO key_vault (id, secret, default_for) VALUES ($1, NULL, $2) ON CONFLICT (id) DO UPDATE SET default_for = EXCLUDED.default_for',
      [id, role],
    );
  }
  await retireTexts(q);
}

/** Keeps at most RETIRED_TEXTS texts of keys that are no longer in the ledger. */
export async function retireTexts(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM key_vault WHERE id IN (
       SELECT id FROM key_vault WHERE id NOT IN (SELECT id FROM api_keys) ORDER BY id OFFSET ${RETIRED_TEXTS})`,
  );
}
