import type pg from 'pg';
import { LedgerError } from '../ledger-error.js';

/**
 * The PostgreSQL ledger's schema, by version, in a schema of its own. The tables are the SQLite
 * store's (src/store/sqlite/schema.ts) in PostgreSQL's dialect, kept apart on purpose: each store
 * owns its DDL and its migrations, and the contract suite holds them to one behaviour.
 * (default `carbon`; one
 * PostgreSQL can hold several sandboxes side by side). Migrations run at start inside one
 * transaction holding an advisory lock, so instances starting together migrate once.
 */

const V1 = `
CREATE TABLE account (
  id integer PRIMARY KEY CHECK (id = 1),
  status text NOT NULL CHECK (status IN ('active','suspended','unapproved')),
  rate bigint NOT NULL CHECK (rate > 0),
  review_limit_cents bigint NOT NULL CHECK (review_limit_cents >= 0),
  clock_offset_ms bigint NOT NULL DEFAULT 0,
  rate_limit_requests bigint,
  rate_limit_window_ms bigint NOT NULL,
  created_ms bigint NOT NULL
);
CREATE TABLE balances (
  livemode smallint PRIMARY KEY,
  available_cents bigint NOT NULL CHECK (available_cents >= 0)
);
CREATE TABLE entries (
  seq bigserial PRIMARY KEY,
  livemode smallint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('topup','charge','refund')),
  amount_cents bigint NOT NULL,
  offset_id text,
  created_ms bigint NOT NULL
);
CREATE TABLE offsets (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  livemode smallint NOT NULL,
  status text NOT NULL CHECK (status IN ('processing','placed','refunded')),
  kg bigint NOT NULL,
  amount_cents bigint NOT NULL,
  rate bigint NOT NULL,
  req_kg bigint,
  req_amount_cents bigint,
  reference text,
  created_ms bigint NOT NULL,
  settle_at_ms bigint,
  review text,
  placed_ms bigint,
  certificate_id text UNIQUE
);
CREATE INDEX offsets_by_mode ON offsets (livemode, seq);
CREATE INDEX offsets_by_reference ON offsets (livemode, reference, seq) WHERE reference IS NOT NULL;
CREATE INDEX offsets_due ON offsets (settle_at_ms) WHERE status = 'processing';
CREATE INDEX offsets_in_review ON offsets (seq) WHERE review = 'pending';
CREATE TABLE impact (
  livemode smallint PRIMARY KEY,
  placed_kg bigint NOT NULL,
  processing_kg bigint NOT NULL,
  offsets bigint NOT NULL
);
CREATE TABLE impact_daily (
  livemode smallint NOT NULL,
  day bigint NOT NULL,
  kg bigint NOT NULL,
  offsets bigint NOT NULL,
  PRIMARY KEY (livemode, day)
);
CREATE TABLE idempotency (
  livemode smallint NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  offset_id text NOT NULL,
  created_ms bigint NOT NULL,
  PRIMARY KEY (livemode, key)
);
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  hash bytea NOT NULL UNIQUE,
  livemode smallint NOT NULL,
  permission text NOT NULL CHECK (permission IN ('purchase','read_only')),
  last4 text NOT NULL,
  created_ms bigint NOT NULL,
  revoked_ms bigint
);
CREATE TABLE key_vault (
  id text PRIMARY KEY,
  secret text NOT NULL,
  default_for text UNIQUE
);
CREATE TABLE meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE rate_windows (key_id text PRIMARY KEY, start_ms bigint NOT NULL, count bigint NOT NULL);
`;

/**
 * V2: the ledger's version, moved by every transaction that writes the account, a balance or a
 * key (keys_version by key writes alone), in its COMMIT's round trip: the read cache of every
 * instance checks it once a batch of requests (postgres-store.ts).
 */
const V2 = `
CREATE TABLE ledger_version (
  id integer PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL,
  keys_version bigint NOT NULL
);
INSERT INTO ledger_version VALUES (1, 0, 0);
`;

const MIGRATIONS = [V1, V2];

/** Brings the schema up to date, once across every instance starting now. */
export async function migrate(pool: pg.Pool, schema: string, label: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // One migration at a time across every instance starting now, per schema.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`carbon-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const row = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0];
    const from = row?.version ?? 0;
    if (from > MIGRATIONS.length) {
      const problem = `The database schema "${schema}" is version ${from}; this carbon knows up to ${MIGRATIONS.length}.`;
      throw new LedgerError(problem, label, 'Upgrade carbon, or use another schema (?schema=…).');
    }
    for (let v = from; v < MIGRATIONS.length; v++) await client.query(MIGRATIONS[v]!);
    if (row === undefined) await client.query('INSERT INTO schema_version VALUES ($1)', [MIGRATIONS.length]);
    else if (from < MIGRATIONS.length) await client.query('UPDATE schema_version SET version = $1', [MIGRATIONS.length]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
