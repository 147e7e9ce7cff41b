import type { Mode } from '../api/types.js';

/**
 * The ledger's tables, written once for both stores. Each is SQL with its column types left to
 * the dialect, so SQLite and PostgreSQL hold the same columns, checks and indexes by construction;
 * each store's schema.ts puts them into its migrations, in its own order, and adds what is its
 * alone (SQLite's backfill of the per-day totals, PostgreSQL's key vault and version row).
 *
 * These texts are history, like the migrations made of them: a table is never edited here once
 * a migration has run it. A change is a new migration in each store.
 */

/** How a store spells each kind of column. */
export interface Dialect {
  /** The key of a table of one row (`CHECK (id = 1)`). */
  one: string;
  /** An ascending row number the database assigns. */
  seq: string;
  /** `livemode`: 1 for live, 0 for test (livemodeOf). */
  mode: string;
  /** Cents, kg, counts and milliseconds: whole numbers past 2^31. */
  int: string;
  text: string;
  bytes: string;
  /** Written after a table whose primary key is all it is looked up by (SQLite's WITHOUT ROWID). */
  keyed: string;
}

/** The `livemode` column's value for a mode. */
export const livemodeOf = (mode: Mode): 0 | 1 => (mode === 'live' ? 1 : 0);

/** `livemode` read back as the port's mode. */
const MODE = "CASE livemode WHEN 1 THEN 'live' ELSE 'test' END AS mode";
/** An offset's columns as the port reads them (OffsetRecord), in this order (SQLite's raw rows rely on it). */
export const OFFSET_COLUMNS = `seq, id, ${MODE}, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference, created_ms, settle_at_ms, review, placed_ms, certificate_id`;
/** A key's columns as the port reads them (KeyRecord). */
export const KEY_COLUMNS = `id, hash, ${MODE}, permission, last4, created_ms, revoked_ms`;

const TABLES = {
  account: (t: Dialect) => `CREATE TABLE account (
  id ${t.one} PRIMARY KEY CHECK (id = 1),
  status ${t.text} NOT NULL CHECK (status IN ('active','suspended','unapproved')),
  rate ${t.int} NOT NULL CHECK (rate > 0),
  review_limit_cents ${t.int} NOT NULL CHECK (review_limit_cents >= 0),
  clock_offset_ms ${t.int} NOT NULL DEFAULT 0,
  rate_limit_requests ${t.int},
  rate_limit_window_ms ${t.int} NOT NULL,
  created_ms ${t.int} NOT NULL
);`,
  balances: (t: Dialect) => `CREATE TABLE balances (
  livemode ${t.mode} PRIMARY KEY,
  available_cents ${t.int} NOT NULL CHECK (available_cents >= 0)
);`,
  entries: (t: Dialect) => `CREATE TABLE entries (
  seq ${t.seq} PRIMARY KEY,
  livemode ${t.mode} NOT NULL,
  kind ${t.text} NOT NULL CHECK (kind IN ('topup','charge','refund')),
  amount_cents ${t.int} NOT NULL,
  offset_id ${t.text},
  created_ms ${t.int} NOT NULL
);`,
  offsets: (t: Dialect) => `CREATE TABLE offsets (
  seq ${t.seq} PRIMARY KEY,
  id ${t.text} NOT NULL UNIQUE,
  livemode ${t.mode} NOT NULL,
  status ${t.text} NOT NULL CHECK (status IN ('processing','placed','refunded')),
  kg ${t.int} NOT NULL,
  amount_cents ${t.int} NOT NULL,
  rate ${t.int} NOT NULL,
  req_kg ${t.int},
  req_amount_cents ${t.int},
  reference ${t.text},
  created_ms ${t.int} NOT NULL,
  settle_at_ms ${t.int},
  review ${t.text},
  placed_ms ${t.int},
  certificate_id ${t.text} UNIQUE
);
CREATE INDEX offsets_by_mode ON offsets (livemode, seq);
CREATE INDEX offsets_by_reference ON offsets (livemode, reference, seq) WHERE reference IS NOT NULL;
CREATE INDEX offsets_due ON offsets (settle_at_ms) WHERE status = 'processing';`,
  offsets_in_review: () => `CREATE INDEX offsets_in_review ON offsets (seq) WHERE review = 'pending';`,
  impact: (t: Dialect) => `CREATE TABLE impact (
  livemode ${t.mode} PRIMARY KEY,
  placed_kg ${t.int} NOT NULL,
  processing_kg ${t.int} NOT NULL,
  offsets ${t.int} NOT NULL
);`,
  impact_daily: (t: Dialect) => `CREATE TABLE impact_daily (
  livemode ${t.mode} NOT NULL,
  day ${t.int} NOT NULL,
  kg ${t.int} NOT NULL,
  offsets ${t.int} NOT NULL, -- bought on the UTC day created_ms / 86400000, less refunds
  PRIMARY KEY (livemode, day)
)${t.keyed};`,
  idempotency: (t: Dialect) => `CREATE TABLE idempotency (
  livemode ${t.mode} NOT NULL,
  key ${t.text} NOT NULL,
  fingerprint ${t.text} NOT NULL,
  offset_id ${t.text} NOT NULL,
  created_ms ${t.int} NOT NULL,
  PRIMARY KEY (livemode, key)
)${t.keyed};`,
  api_keys: (t: Dialect) => `CREATE TABLE api_keys (
  id ${t.text} PRIMARY KEY,
  hash ${t.bytes} NOT NULL UNIQUE,
  livemode ${t.mode} NOT NULL,
  permission ${t.text} NOT NULL CHECK (permission IN ('purchase','read_only')),
  last4 ${t.text} NOT NULL,
  created_ms ${t.int} NOT NULL,
  revoked_ms ${t.int}
);`,
  journal: (t: Dialect) => `CREATE TABLE journal (
  seq ${t.seq} PRIMARY KEY,
  request_id ${t.text} NOT NULL,
  model_ms ${t.int} NOT NULL,
  real_ms ${t.int} NOT NULL,
  method ${t.text} NOT NULL,
  path ${t.text} NOT NULL,
  query ${t.text} NOT NULL,
  status ${t.int} NOT NULL,
  error_type ${t.text},
  error_code ${t.text},
  error_param ${t.text},
  error_message ${t.text},
  duration_us ${t.int} NOT NULL,
  key_id ${t.text},
  livemode ${t.mode},
  idempotency_key ${t.text},
  replayed ${t.int} NOT NULL,
  offset_id ${t.text},
  instance ${t.text} NOT NULL,
  request_body ${t.text} NOT NULL,
  response_body ${t.text} NOT NULL
);`,
  meta: (t: Dialect) => `CREATE TABLE meta (name ${t.text} PRIMARY KEY, value ${t.text} NOT NULL)${t.keyed};`,
} as const;

type Table = keyof typeof TABLES;

/** The statements making `tables` in the dialect's types, in the order given, a line apart. */
export function tables(dialect: Dialect, ...names: Table[]): string {
  return names.map((name) => `${TABLES[name](dialect)}\n`).join('');
}
