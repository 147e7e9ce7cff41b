import type pg from 'pg';
import { LedgerError } from '../ledger-error.js';
import { type Dialect, tables } from '../tables.js';

/**
 * The PostgreSQL ledger's schema, by version, in a schema of its own (default `carbon`; one
 * PostgreSQL can hold several sandboxes side by side). The tables are the SQLite store's, written
 * once for both (../tables.ts) in PostgreSQL's types; the key vault and the rate windows, which
 * SQLite keeps in files and memory, are this store's alone. Migrations run at start inside one
 * transaction holding an advisory lock, so instances starting together migrate once.
 */

const POSTGRES: Dialect = {
  one: 'integer',
  seq: 'bigserial',
  mode: 'smallint',
  int: 'bigint',
  text: 'text',
  bytes: 'bytea',
  keyed: '',
};

const V1 = () => `
${tables(POSTGRES, 'account', 'balances', 'entries', 'offsets', 'offsets_in_review', 'impact', 'impact_daily', 'idempotency', 'api_keys')}CREATE TABLE key_vault (
  id text PRIMARY KEY,
  secret text NOT NULL,
  default_for text UNIQUE
);
${tables(POSTGRES, 'meta')}CREATE TABLE rate_windows (key_id text PRIMARY KEY, start_ms bigint NOT NULL, count bigint NOT NULL);
`;

/**
 * V2: the ledger's version, moved by every transaction that writes the account, a balance or a
 * key (keys_version by key writes alone), in its COMMIT's round trip: the read cache of every
 * instance checks it once a batch of requests (postgres-store.ts).
 */
const V2 = () => `
CREATE TABLE ledger_version (
  id integer PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL,
  keys_version bigint NOT NULL
);
INSERT INTO ledger_version VALUES (1, 0, 0);
`;

/** V3: the request journal (`carbon logs`): every instance on the ledger writes to one. */
const V3 = () => tables(POSTGRES, 'journal');

/**
 * V4: the key vault keeps which keys are the starting ones even when it never held their text (a
 * snapshot from another ledger): such a row has no secret (docs/snapshots.md, "Keys").
 */
const V4 = () => 'ALTER TABLE key_vault ALTER COLUMN secret DROP NOT NULL;';

/** Each migration's statements, made when it runs (a start with the schema up to date makes none). */
const MIGRATIONS = [V1, V2, V3, V4];

/**
 * Brings the schema up to date, once across every instance starting now.
 *
 * The journal is UNLOGGED: its writes skip PostgreSQL's WAL, which every purchase's commit waits
 * to sync (logged, the journal made it half as large again: 1,883–1,976 bytes a served purchase
 * against 1,236–1,341 with the journal off; BENCHMARKS.md). A PostgreSQL crash (not a clean
 * restart, and not a carbon crash) empties it, and a standby does not have it: a request journal
 * is the sandbox's record of its traffic, not of its money (docs/reliability.md, section 9). A
 * table's persistence is no part of its shape, so the schema's version does not move: a carbon
 * that made the table logged reads and writes it the same.
 */
/** A schema that holds tables carbon did not make, or not as carbon made them: refused, nothing changed (the migration rolls back). */
const notCarbons = (schema: string, label: string, why: string) =>
  new LedgerError(
    `The database schema "${schema}" is not one carbon made (${why}); nothing was changed.`,
    label,
    'Give carbon a schema of its own (?schema=… or --database-schema), or an empty one.',
  );

/**
 * Whether the ledger is made; whether its schema ($1) is there with no USAGE or CREATE on it for
 * carbon's user; and whether it holds a ledger already (its schema_version, seen in the catalog without rights).
 */
const STATE = `SELECT to_regclass('schema_version') IS NOT NULL AS made, coalesce((SELECT NOT (has_schema_privilege(oid, 'USAGE')
  AND has_schema_privilege(oid, 'CREATE')) FROM pg_namespace WHERE nspname = $1), false) AS unusable,
  EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'schema_version') AS holds`;

/** The schema's version and the journal's persistence ('p' logged, 'u' unlogged; null before V3), in one round trip. */
const VERSION = "SELECT version, (SELECT relpersistence FROM pg_class WHERE oid = to_regclass('journal')) AS journal FROM schema_version";

export async function migrate(pool: pg.Pool, schema: string, label: string): Promise<void> {
  const client = await pool.connect();
  try {
    if (await upToDate(client)) return;
    await client.query('BEGIN');
    // One migration at a time across every instance starting now, per schema.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`carbon-migrate:${schema}`]);
    // Made already: read, not made again. CREATE … IF NOT EXISTS is refused by a read-only
    // database (a standby, default_transaction_read_only) even where there is nothing to make,
    // and such a database can still answer reads.
    // With it, whether the schema is there, another role's, without the rights to make tables in it.
    const state = (await client.query<{ made: boolean; unusable?: boolean; holds?: boolean }>(STATE, [schema])).rows[0];
    if (state?.made !== true) {
      await client
        .query(`CREATE SCHEMA IF NOT EXISTS "${schema}"; CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`)
        .catch((err: unknown) => {
          const code = (err as { code?: string }).code;
          // 3F000: the schema is there, made by another role, and carbon's user has no USAGE on it (search_path then names none).
          if (code !== '42501' && code !== '3F000') throw err;
          const why = `${code}: ${(err as Error).message}`;
          throw state?.holds ? noRightsOnLedger(schema, label, why) : (state?.unusable ? noRightsIn : mayNotMake)(schema, label, why);
        });
    }
    const row = (
      await client
        .query<{ version: number; journal: string | null }>(VERSION)
        // Another program's schema_version, with no column `version` (42703): the schema is not carbon's.
        .catch((err: unknown) => {
          throw (err as { code?: string }).code === '42703' ? notCarbons(schema, label, (err as Error).message) : err;
        })
    ).rows[0];
    const from = row?.version ?? 0;
    // Another program's table of that name (a text version, `2024.1`): the schema is not carbon's.
    if (!Number.isSafeInteger(from) || from < 0) throw notCarbons(schema, label, `its schema_version says ${JSON.stringify(String(from))}`);
    if (from > MIGRATIONS.length) {
      const problem = `The database schema "${schema}" is version ${from}; this carbon knows up to ${MIGRATIONS.length}.`;
      throw new LedgerError(problem, label, 'Upgrade carbon, or use another schema (?schema=…).');
    }
    for (let v = from; v < MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v]!()).catch((err: unknown) => {
        // A table carbon makes there already, or one it made missing: tables carbon did not make, or changed by hand.
        const code = (err as { code?: string }).code;
        throw code === '42P07' || code === '42P01' || code === '42701' ? notCarbons(schema, label, (err as Error).message) : err;
      });
    }
    // Made by a migration just now, or logged by an earlier carbon: no round trip when neither.
    if (from < MIGRATIONS.length || row?.journal === 'p') await client.query('ALTER TABLE journal SET UNLOGGED');
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

/**
 * The everyday case, a schema made and up to date, read in one statement and no lock (a command on
 * PostgreSQL paid five round trips for it). Anything else (not made, older, newer, another program's,
 * a journal still logged) takes migrate()'s locked path, which says what it is. A SQL error (class 42:
 * a table or column missing) goes there too; a connection that fails is said at once.
 */
async function upToDate(client: pg.PoolClient): Promise<boolean> {
  try {
    const { rows } = await client.query<{ version: number; journal: string | null }>(VERSION);
    return rows.length === 1 && rows[0]!.version === MIGRATIONS.length && rows[0]!.journal === 'u';
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith('42')) return false;
    throw err;
  }
}

/**
 * carbon's user may not make the ledger's schema, or its tables in it (on the first start: 42501, or
 * 3F000 where another role made the schema and gave it no rights there): said as that, with the ways on.
 */
function mayNotMake(schema: string, label: string, why: string): LedgerError {
  return new LedgerError(
    `carbon's user may not make the ledger's schema "${schema}" or its tables in ${label} (${why}).`,
    label,
    `Make the schema for it (CREATE SCHEMA "${schema}" AUTHORIZATION <carbon's user>), or, made already, give it to carbon's user (ALTER SCHEMA "${schema}" OWNER TO <carbon's user>), or grant it CREATE on the database (docs/deploy.md, "The rights carbon's user needs").`,
  );
}

/** The schema is there, another role's, and carbon's user lacks USAGE or CREATE on it: CREATE on the database would not help. */
function noRightsIn(schema: string, label: string, why: string): LedgerError {
  return new LedgerError(
    `The ledger's schema "${schema}" in ${label} is another role's, and carbon's user may not make its tables there (${why}).`,
    label,
    `Give it to carbon's user (ALTER SCHEMA "${schema}" OWNER TO <carbon's user>), or grant them (GRANT USAGE, CREATE ON SCHEMA "${schema}" TO <carbon's user>), or use a schema of its own (?schema=…) (docs/deploy.md, "The rights carbon's user needs").`,
  );
}

/** The schema holds a ledger another role made, and carbon's user has no rights on it: the rights a running carbon needs. */
function noRightsOnLedger(schema: string, label: string, why: string): LedgerError {
  return new LedgerError(
    `The ledger in schema "${schema}" of ${label} is another role's, and carbon's user has no rights on it (${why}).`,
    label,
    `Grant them (GRANT USAGE ON SCHEMA "${schema}"; SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}"; USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA "${schema}"; each TO <carbon's user>), or run carbon as the role that owns it (docs/deploy.md, "The rights carbon's user needs").`,
  );
}
