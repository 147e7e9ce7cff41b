import { loadedMarks, loadedSeqs } from '../journal-sql.js';
import { LedgerRowError } from '../ledger-error.js';
import type * as port from '../port.js';
import { SNAPSHOT_TABLES } from '../port.js';
import { snapshotSelect } from '../snapshot-tables.js';
import { type Db, inTransaction } from './driver.js';
import { sqliteCode } from './errors.js';
import { keepJournalSeq } from './sqlite-journal.js';
import { digest } from './sqlite-reads.js';

/**
 * Snapshots on SQLite (port.ts: exportLedger, importLedger): the rows of SNAPSHOT_TABLES read in
 * one read transaction (WAL: a consistent view that writers of other processes do not wait for),
 * a batch at a time from an open statement, and written back by prepared INSERTs inside the
 * importing transaction. The key vault is the store's file (files.ts): its roles travel as
 * `api_keys.default_for`, its texts never.
 */

/** Rows handed on at a time. */
const BATCH = 2000;
/** Texts of keys no longer in the ledger that the vault keeps, for a snapshot that brings them back (port.ts). */
const RETIRED_TEXTS = 1000;

type Table = (typeof SNAPSHOT_TABLES)[number];

/** Each table's SELECT, its columns in SNAPSHOT_TABLES' order, in a stable order of rows. */
function select(table: Table, metaNames: readonly string[]): string {
  // default_for comes from the vault file, filled in by the caller.
  if (table.name === 'api_keys')
    return 'SELECT id, hash, livemode, permission, last4, created_ms, revoked_ms, NULL FROM api_keys ORDER BY created_ms, rowid';
  const names = metaNames.map((n) => `'${n.replace(/'/g, "''")}'`).join(', ') || 'NULL';
  return snapshotSelect(table, table.name === 'meta' ? ` WHERE name IN (${names})` : '');
}

/**
 * A consistent view of every table, in a read transaction on the store's connection, ended by
 * close(). `release` is called once it ends (the store holds its other work on the connection until then).
 */
export function exportLedger(db: Db, vault: port.KeyVault, metaNames: readonly string[], release: () => void): port.LedgerExport {
  db.exec('BEGIN');
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    try {
      if (inTransaction(db)) db.exec('COMMIT');
    } finally {
      release();
    }
  };
  try {
    const counts = Object.fromEntries(
      SNAPSHOT_TABLES.map((t) => {
        const where =
          t.name === 'meta'
            ? select(t, metaNames)
                .replace(/^SELECT .* FROM meta/, '')
                .replace(/ ORDER BY name$/, '')
            : '';
        return [t.name, (db.prepare(`SELECT count(*) AS n FROM ${t.name}${where}`).get() as { n: number }).n];
      }),
    ) as port.LedgerExport['counts'];
    const roles = new Map(Object.entries(vault.defaults).map(([role, id]) => [id, role]));
    async function* rows(name: port.SnapshotTable): AsyncGenerator<port.SnapshotRow[]> {
      const table = SNAPSHOT_TABLES.find((t) => t.name === name)!;
      const statement = db.prepare(select(table, metaNames));
      // Arrays in the columns' order (setReturnArrays came in Node 22.16; before, the objects' values).
      const arrays = typeof statement.setReturnArrays === 'function';
      if (arrays) statement.setReturnArrays(true);
      let batch: port.SnapshotRow[] = [];
      for (const read of statement.iterate()) {
        const row = (arrays ? read : Object.values(read as object)) as port.SnapshotRow;
        if (name === 'api_keys') row[7] = roles.get(row[0] as string) ?? null;
        batch.push(row);
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }
    return { counts, rows, close };
  } catch (err) {
    void close();
    throw err;
  }
}

/** A constraint the rows broke (unique, check, not null), said as the data's fault. */
function rowError(err: unknown): unknown {
  return /^SQLITE_(CONSTRAINT|MISMATCH)/.test(sqliteCode(err)) ? new LedgerRowError((err as Error).message) : err;
}

/**
 * Everything but the named values not in `metaNames` deleted, the rows inserted; returns the key
 * vault as the import leaves it (written by the store as the transaction commits).
 */
export async function importLedger(
  db: Db,
  batches: port.LedgerImport,
  metaNames: readonly string[],
  vault: port.KeyVault,
): Promise<port.KeyVault> {
  // The snapshot's journal numbered on past every seq handed out (journal-sql.ts, LOADED_AFTER).
  const seqs = loadedSeqs(keepJournalSeq(db));
  for (const table of ['account', 'balances', 'entries', 'offsets', 'impact', 'impact_daily', 'idempotency', 'api_keys', 'journal']) {
    db.exec(`DELETE FROM ${table}`);
  }
  const forget = db.prepare('DELETE FROM meta WHERE name = ?');
  for (const name of metaNames) forget.run(name);
  const keys: Array<{ id: string; hash: Uint8Array; role: string | null }> = [];
  try {
    for await (const { table, rows } of batches) {
      const spec = SNAPSHOT_TABLES.find((t) => t.name === table)!;
      let names = Object.keys(spec.columns);
      let values = rows;
      if (table === 'meta') values = rows.filter((r) => metaNames.includes(r[0] as string));
      if (table === 'api_keys') {
        for (const r of rows) keys.push({ id: r[0] as string, hash: r[1] as Uint8Array, role: r[7] as string | null });
        names = names.slice(0, 7);
        values = rows.map((r) => r.slice(0, 7));
      }
      if (table === 'journal') values = seqs.rows(rows);
      if (table === 'account') names = ['id', ...names];
      const insert = db.prepare(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`);
      for (const row of values) {
        const bound = row.map((v) => (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v));
        insert.run(...(table === 'account' ? [1, ...bound] : bound));
      }
    }
  } catch (err) {
    throw rowError(err);
  }
  const marks = loadedMarks(seqs, () => '?');
  db.prepare(marks.text).run(...marks.values);
  return keptVault(vault, keys);
}

/**
 * The vault after an import: a text stays attached to a key of the snapshot only if its SHA-256
 * is that key's, the starting keys take their roles whether or not their text is known here (a
 * file that went through a ledger that never held the texts comes back with its roles, and saved
 * again hands them on), and at most RETIRED_TEXTS texts of keys not in the ledger stay.
 */
function keptVault(vault: port.KeyVault, keys: Array<{ id: string; hash: Uint8Array; role: string | null }>): port.KeyVault {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const secrets: Record<string, string> = {};
  for (const [id, text] of Object.entries(vault.secrets)) {
    const key = byId.get(id);
    if (key === undefined || Buffer.compare(digest(text), Buffer.from(key.hash)) === 0) secrets[id] = text;
  }
  const defaults: port.KeyVault['defaults'] = {};
  for (const k of keys) if (k.role !== null) defaults[k.role as port.DefaultKey] = k.id;
  return { defaults, secrets: retired(secrets, new Set(byId.keys())) };
}

/** The texts of `inLedger` keys, and the newest RETIRED_TEXTS of the others (the file keeps them in the order made). */
export function retired(secrets: Record<string, string>, inLedger: Set<string>): Record<string, string> {
  const others = Object.keys(secrets).filter((id) => !inLedger.has(id));
  const dropped = new Set(others.slice(0, Math.max(0, others.length - RETIRED_TEXTS)));
  return Object.fromEntries(Object.entries(secrets).filter(([id]) => !dropped.has(id)));
}
