import type { AccountRecord, IdempotencyRecord, ImpactTotals, KeyRecord, OffsetRecord } from '../port.js';
import { KEY_COLUMNS, OFFSET_COLUMNS } from '../tables.js';
import { type Db, pluck, query, rows } from './driver.js';

/**
 * Every statement the SQLite store runs, each prepared on its first use and then kept for the
 * connection's life. Rows come back already in the port's shape (`mode` rather than the stored
 * 0/1), so no row is copied on the way up.
 */

const NEW_CERTIFICATE = "'cert_' || lower(hex(randomblob(12)))";

/** An offset row as the raw statements below return it: the columns of OFFSET_COLUMNS, in order. */
export type OffsetRow = [
  number,
  string,
  OffsetRecord['mode'],
  OffsetRecord['status'],
  number,
  number,
  number,
  number | null,
  number | null,
  string | null,
  number,
  number | null,
  OffsetRecord['review'],
  number | null,
  string | null,
];

/**
 * A raw row as the port's record. Pages are read as raw arrays and made into records here, in
 * one object literal: a driver building each row object key by key cost half of
 * `list --all` (BENCHMARKS.md, streaming).
 */
export function offsetRecord(r: OffsetRow): OffsetRecord {
  return {
    seq: r[0],
    id: r[1],
    mode: r[2],
    status: r[3],
    kg: r[4],
    amount_cents: r[5],
    rate: r[6],
    req_kg: r[7],
    req_amount_cents: r[8],
    reference: r[9],
    created_ms: r[10],
    settle_at_ms: r[11],
    review: r[12],
    placed_ms: r[13],
    certificate_id: r[14],
  };
}

/** Each statement, as a function that prepares it on a connection. */
const SQL = {
  account: (db: Db) =>
    query<[], AccountRecord>(
      db,
      'SELECT status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms FROM account WHERE id = 1',
    ),
  keyByHash: (db: Db) => query<[Uint8Array], KeyRecord>(db, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`),
  keys: (db: Db) => query<[], KeyRecord>(db, `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_ms, rowid`),
  balance: (db: Db) => pluck<[number], number>(db, 'SELECT available_cents FROM balances WHERE livemode = ?'),
  impact: (db: Db) => query<[number], ImpactTotals>(db, 'SELECT placed_kg, processing_kg, offsets FROM impact WHERE livemode = ?'),
  due: (db: Db) =>
    query<[number, number], { kg: number; count: number }>(
      db,
      // INDEXED BY: left to itself the planner may walk offsets_by_mode, reading every offset.
      "SELECT coalesce(SUM(kg), 0) AS kg, COUNT(*) AS count FROM offsets INDEXED BY offsets_due WHERE status = 'processing' AND settle_at_ms <= ? AND livemode = ?",
    ),
  anyDue: (db: Db) => pluck<[number], number>(db, "SELECT 1 FROM offsets WHERE status = 'processing' AND settle_at_ms <= ? LIMIT 1"),
  offsetById: (db: Db) => query<[string], OffsetRecord>(db, `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE id = ?`),
  offsetByCertificate: (db: Db) => query<[string], OffsetRecord>(db, `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE certificate_id = ?`),
  page: (db: Db) =>
    rows<[number, number, number], OffsetRow>(
      db,
      `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE livemode = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ),
  pageByReference: (db: Db) =>
    rows<[number, string, number, number], OffsetRow>(
      db,
      `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE livemode = ? AND reference = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ),
  reviewQueue: (db: Db) =>
    query<[number], OffsetRecord>(
      db,
      `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE review = 'pending' AND status = 'processing' ORDER BY seq LIMIT ?`,
    ),
  newestCreated: (db: Db) => pluck<[number], number>(db, 'SELECT created_ms FROM offsets WHERE livemode = ? ORDER BY seq DESC LIMIT 1'),
  daily: (db: Db) =>
    query<[number, number], { day: number; kg: number }>(
      db,
      'SELECT day, kg FROM impact_daily WHERE livemode = ? AND day >= ? ORDER BY day',
    ),
  meta: (db: Db) => pluck<[string], string>(db, 'SELECT value FROM meta WHERE name = ?'),
  putMeta: (db: Db) =>
    query<[string, string]>(db, 'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
  deleteMeta: (db: Db) => query<[string]>(db, 'DELETE FROM meta WHERE name = ?'),
  // A prefix compared as text (LIKE would read the `_` in the names as a wildcard).
  deleteMetas: (db: Db) => query<[string, string]>(db, 'DELETE FROM meta WHERE substr(name, 1, length(?)) = ?'),
  // CAST reads the value's leading digits: `<expiry>` and `<expiry>.<rest>` alike.
  deleteExpiredMetas: (db: Db) =>
    query<[string, string, number]>(
      db,
      "DELETE FROM meta WHERE substr(name, 1, length(?)) = ? AND value GLOB '[0-9]*' AND CAST(value AS INTEGER) <= ?",
    ),
  // Prepared statements: db.exec() would parse them again on every transaction.
  begin: (db: Db) => query(db, 'BEGIN IMMEDIATE'),
  commit: (db: Db) => query(db, 'COMMIT'),
  rollback: (db: Db) => query(db, 'ROLLBACK'),
  dataVersion: (db: Db) => pluck<[], number>(db, 'PRAGMA data_version'),
  dueByMode: (db: Db) =>
    query<[number], { livemode: number; kg: number }>(
      db,
      "SELECT livemode, SUM(kg) AS kg FROM offsets INDEXED BY offsets_due WHERE status = 'processing' AND settle_at_ms <= ? GROUP BY livemode",
    ),
  placeDue: (db: Db) =>
    query<[number]>(
      db,
      `UPDATE offsets SET status = 'placed', placed_ms = settle_at_ms, settle_at_ms = NULL,
       certificate_id = CASE WHEN livemode = 1 THEN coalesce(certificate_id, ${NEW_CERTIFICATE}) END
     WHERE status = 'processing' AND settle_at_ms <= ?`,
    ),
  place: (db: Db) =>
    query<[string | null, number, string]>(
      db,
      `UPDATE offsets SET status = 'placed', review = coalesce(?, review), placed_ms = ?, settle_at_ms = NULL,
       certificate_id = CASE WHEN livemode = 1 THEN coalesce(certificate_id, ${NEW_CERTIFICATE}) END WHERE id = ?`,
    ),
  refund: (db: Db) =>
    query<[string | null, string]>(
      db,
      "UPDATE offsets SET status = 'refunded', settle_at_ms = NULL, review = coalesce(?, review) WHERE id = ?",
    ),
  moveToPlaced: (db: Db) =>
    query<[{ kg: number; livemode: number }]>(
      db,
      'UPDATE impact SET processing_kg = processing_kg - @kg, placed_kg = placed_kg + @kg WHERE livemode = @livemode',
    ),
  idempotency: (db: Db) =>
    query<[number, string], IdempotencyRecord>(
      db,
      'SELECT fingerprint, offset_id, created_ms FROM idempotency WHERE livemode = ? AND key = ?',
    ),
  rememberKey: (db: Db) =>
    query<[number, string, string, string, number]>(
      db,
      'INSERT INTO idempotency (livemode, key, fingerprint, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)',
    ),
  insertOffset: (db: Db) =>
    query<[Record<string, number | string | null>]>(
      db,
      `INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference,
       created_ms, settle_at_ms, review, certificate_id)
     VALUES (@id, @livemode, 'processing', @kg, @amount_cents, @rate, @req_kg, @req_amount_cents, @reference,
       @created_ms, @settle_at_ms, @review, @certificate_id)`,
    ),
  entry: (db: Db) =>
    query<[number, string, number, string | null, number]>(
      db,
      'INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)',
    ),
  addBalance: (db: Db) => query<[number, number]>(db, 'UPDATE balances SET available_cents = available_cents + ? WHERE livemode = ?'),
  addImpact: (db: Db) =>
    query<[number, number, number]>(db, 'UPDATE impact SET processing_kg = processing_kg + ?, offsets = offsets + ? WHERE livemode = ?'),
  addDaily: (db: Db) =>
    query<[{ livemode: number; day: number; kg: number; offsets: number }]>(
      db,
      `INSERT INTO impact_daily (livemode, day, kg, offsets) VALUES (@livemode, @day, @kg, @offsets)
     ON CONFLICT (livemode, day) DO UPDATE SET kg = kg + @kg, offsets = offsets + @offsets`,
    ),
  insertKey: (db: Db) =>
    query<[string, Uint8Array, number, string, string, number]>(
      db,
      'INSERT INTO api_keys (id, hash, livemode, permission, last4, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
    ),
  revokeKey: (db: Db) => query<[number, string]>(db, 'UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL'),
  createAccount: (db: Db) =>
    query<[Record<string, number | string | null>]>(
      db,
      `INSERT INTO account (id, status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms, created_ms)
     VALUES (1, @status, @rate, @review_limit_cents, @clock_offset_ms, @rate_limit_requests, @rate_limit_window_ms, @created_ms)`,
    ),
};

/**
 * The statements of one connection. Each is prepared when first read: a command prepares the few
 * it runs, not all 36 (0.3 ms of every `carbon balance`, BENCHMARKS.md). The getters sit on a
 * class's prototype and keep what they made in one array, so the object's shape never changes and
 * the purchase path's reads stay a load and a check.
 */
export type Statements = { readonly [K in keyof typeof SQL]: ReturnType<(typeof SQL)[K]> };

export const lazyStatements: (db: Db) => Statements = (() => {
  const names = Object.keys(SQL) as (keyof typeof SQL)[];
  class Lazy {
    readonly made: unknown[] = new Array(names.length);
    constructor(readonly db: Db) {}
  }
  names.forEach((name, i) => {
    const make = SQL[name] as (db: Db) => unknown;
    Object.defineProperty(Lazy.prototype, name, {
      get(this: Lazy) {
        return (this.made[i] ??= make(this.db));
      },
    });
  });
  return (db) => new Lazy(db) as unknown as Statements;
})();
