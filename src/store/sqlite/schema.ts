import type Database from 'better-sqlite3';

/**
 * The SQLite ledger's schema, by version (PRAGMA user_version). A fresh file gets the latest at
 * once; an older one is brought up step by step inside one IMMEDIATE transaction, so processes
 * opening the same file together migrate it once.
 *
 * Totals are kept, not counted: balances, impact and the per-day impact are rows updated in the
 * same transaction as the offsets they summarise, so no read scans the offsets table.
 */

const V1 = `
CREATE TABLE account (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  status TEXT NOT NULL CHECK (status IN ('active','suspended','unapproved')),
  rate INTEGER NOT NULL CHECK (rate > 0),
  review_limit_cents INTEGER NOT NULL CHECK (review_limit_cents >= 0),
  clock_offset_ms INTEGER NOT NULL DEFAULT 0,
  rate_limit_requests INTEGER,
  rate_limit_window_ms INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE balances (
  livemode INTEGER PRIMARY KEY,
  available_cents INTEGER NOT NULL CHECK (available_cents >= 0)
);
CREATE TABLE entries (
  seq INTEGER PRIMARY KEY,
  livemode INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('topup','charge','refund')),
  amount_cents INTEGER NOT NULL,
  offset_id TEXT,
  created_ms INTEGER NOT NULL
);
CREATE TABLE offsets (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  livemode INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing','placed','refunded')),
  kg INTEGER NOT NULL,
  amount_cents INTEGER NOT NULL,
  rate INTEGER NOT NULL,
  req_kg INTEGER,
  req_amount_cents INTEGER,
  reference TEXT,
  created_ms INTEGER NOT NULL,
  settle_at_ms INTEGER,
  review TEXT,
  placed_ms INTEGER,
  certificate_id TEXT UNIQUE
);
CREATE INDEX offsets_by_mode ON offsets (livemode, seq);
CREATE INDEX offsets_by_reference ON offsets (livemode, reference, seq) WHERE reference IS NOT NULL;
CREATE INDEX offsets_due ON offsets (settle_at_ms) WHERE status = 'processing';
CREATE TABLE impact (
  livemode INTEGER PRIMARY KEY,
  placed_kg INTEGER NOT NULL,
  processing_kg INTEGER NOT NULL,
  offsets INTEGER NOT NULL
);
CREATE TABLE idempotency (
  livemode INTEGER NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  offset_id TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (livemode, key)
) WITHOUT ROWID;
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  livemode INTEGER NOT NULL,
  permission TEXT NOT NULL CHECK (permission IN ('purchase','read_only')),
  last4 TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER
);
`;

/** v2: kg bought per UTC day (the developer page's chart), the review queue's index, named values. */
const V2 = `
CREATE TABLE impact_daily (
  livemode INTEGER NOT NULL,
  day INTEGER NOT NULL,
  kg INTEGER NOT NULL,
  offsets INTEGER NOT NULL,
  PRIMARY KEY (livemode, day)
) WITHOUT ROWID;
INSERT INTO impact_daily (livemode, day, kg, offsets)
  SELECT livemode, created_ms / 86400000, SUM(kg), COUNT(*) FROM offsets WHERE status != 'refunded'
  GROUP BY livemode, created_ms / 86400000;
CREATE INDEX offsets_in_review ON offsets (seq) WHERE review = 'pending';
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

const MIGRATIONS = [V1, V2];
const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the file up to SCHEMA_VERSION; a newer file than this carbon knows is refused. */
export function migrate(db: Database.Database): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() === SCHEMA_VERSION) return;
  db.transaction(() => {
    const from = version();
    if (from > SCHEMA_VERSION) {
      throw Object.assign(new Error(`the ledger's schema is version ${from}; this carbon knows up to ${SCHEMA_VERSION}`), {
        code: 'CARBON_SCHEMA_NEWER',
      });
    }
    for (let v = from; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
