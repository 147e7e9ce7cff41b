import { type Dialect, tables } from '../tables.js';
import { type Db, inTransaction, pragma } from './driver.js';

/**
 * The SQLite ledger's schema, by version (PRAGMA user_version). A fresh file gets the latest at
 * once; an older one is brought up step by step inside one IMMEDIATE transaction, so processes
 * opening the same file together migrate it once.
 *
 * The tables are written once for both stores (../tables.ts); SQLite spells every whole number
 * INTEGER, so `seq` is the rowid.
 *
 * Totals are kept, not counted: balances, impact and the per-day impact are rows updated in the
 * same transaction as the offsets they summarise, so no read scans the offsets table.
 */

const SQLITE: Dialect = {
  one: 'INTEGER',
  seq: 'INTEGER',
  mode: 'INTEGER',
  int: 'INTEGER',
  text: 'TEXT',
  bytes: 'BLOB',
  keyed: ' WITHOUT ROWID',
};

const V1 = () => `
${tables(SQLITE, 'account', 'balances', 'entries', 'offsets', 'impact', 'idempotency', 'api_keys')}`;

/** v2: kg bought per UTC day (the developer page's chart), the review queue's index, named values. */
const V2 = () => `
${tables(SQLITE, 'impact_daily')}INSERT INTO impact_daily (livemode, day, kg, offsets)
  SELECT livemode, created_ms / 86400000, SUM(kg), COUNT(*) FROM offsets WHERE status != 'refunded'
  GROUP BY livemode, created_ms / 86400000;
${tables(SQLITE, 'offsets_in_review', 'meta')}`;

/** v3: the request journal (`carbon logs`). */
const V3 = () => tables(SQLITE, 'journal');

/** Each migration's statements, made when it runs (a start with the schema up to date makes none). */
const MIGRATIONS = [V1, V2, V3];
const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the file up to SCHEMA_VERSION (true if it wrote); a newer file than this carbon knows is refused. */
export function migrate(db: Db): boolean {
  const version = () => pragma<number>(db, 'user_version') ?? 0;
  if (version() === SCHEMA_VERSION) return false;
  db.exec('BEGIN IMMEDIATE');
  try {
    const from = version();
    if (from > SCHEMA_VERSION) {
      throw Object.assign(new Error(`the ledger's schema is version ${from}; this carbon knows up to ${SCHEMA_VERSION}`), {
        code: 'CARBON_SCHEMA_NEWER',
      });
    }
    for (let v = from; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!());
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
    return true;
  } catch (err) {
    if (inTransaction(db)) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // SQLite had already rolled it back (a full disk), and this Node cannot say (before 22.16):
        // the error is the migration's, not ROLLBACK's.
      }
    }
    throw err;
  }
}
