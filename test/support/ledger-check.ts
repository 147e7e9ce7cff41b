import pg from 'pg';
import { ledgerRules, POSTGRES_JSON_TEXT, SQLITE_JSON_TEXT } from '../../src/store/ledger-rules.js';
import { openSqlite } from './sqlite.js';

/**
 * The ledger read straight from its database, SQLite or PostgreSQL (the same tables), and checked
 * against every invariant a serial history keeps: the rules a snapshot's load checks
 * (src/store/ledger-rules.ts: balance = top-ups − charges + refunds, each offset charged once at
 * its kg × rate and refunded once exactly when refunded, impact and per-day impact the sums over
 * the offsets, one offset per Idempotency-Key of its mode…), run in the same read. The race and
 * fault suites run it after each round.
 */

export interface LedgerRows {
  balances: Array<{ livemode: number; available_cents: number }>;
  offsets: Array<{
    id: string;
    livemode: number;
    status: string;
    kg: number;
    amount_cents: number;
    reference: string | null;
    created_ms: number;
  }>;
  entries: Array<{ livemode: number; kind: 'topup' | 'charge' | 'refund'; amount_cents: number; offset_id: string | null }>;
  impact: Array<{ livemode: number; placed_kg: number; processing_kg: number; offsets: number }>;
  daily: Array<{ livemode: number; kg: number; offsets: number }>;
  idempotency: Array<{ livemode: number; key: string; offset_id: string }>;
  /** Every rule of ledgerRules the ledger breaks (the first row breaking each); empty when it is exact. */
  problems: string[];
}

const QUERIES = {
  balances: 'SELECT livemode, available_cents FROM balances ORDER BY livemode',
  offsets: 'SELECT id, livemode, status, kg, amount_cents, reference, created_ms FROM offsets ORDER BY seq',
  entries: 'SELECT livemode, kind, amount_cents, offset_id FROM entries ORDER BY seq',
  impact: 'SELECT livemode, placed_kg, processing_kg, offsets FROM impact ORDER BY livemode',
  daily: 'SELECT livemode, kg, offsets FROM impact_daily',
  idempotency: 'SELECT livemode, key, offset_id FROM idempotency',
} as const;

export function sqliteRows(ledgerFile: string): LedgerRows {
  const db = openSqlite(ledgerFile, { readonly: true });
  try {
    db.exec('BEGIN');
    const rows = Object.fromEntries(Object.entries(QUERIES).map(([name, sql]) => [name, db.prepare(sql).all()]));
    const broken = ledgerRules(SQLITE_JSON_TEXT).map((sql) => (db.prepare(sql).get() as { problem: string } | undefined)?.problem);
    db.exec('COMMIT');
    return { ...rows, problems: broken.filter((p) => p !== undefined) } as unknown as LedgerRows;
  } finally {
    db.close();
  }
}

/** `url` is a carbon database URL (with ?schema=…). */
export async function postgresRows(url: string): Promise<LedgerRows> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'carbon';
  parsed.search = '';
  const db = new pg.Client({
    connectionString: parsed.toString(),
    options: `-c search_path=${schema}`,
    // bigint as a number: every amount is a safe integer.
    types: { getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text')) },
  });
  db.on('error', () => {});
  await db.connect();
  try {
    const rows: Record<string, unknown[]> = {};
    // One snapshot for every table.
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    for (const [name, sql] of Object.entries(QUERIES)) {
      rows[name] = (await db.query(sql)).rows;
    }
    rows.problems = [];
    for (const sql of ledgerRules(POSTGRES_JSON_TEXT))
      rows.problems.push(...(await db.query<{ problem: string }>(sql)).rows.map((r) => r.problem));
    await db.query('COMMIT');
    return rows as unknown as LedgerRows;
  } finally {
    await db.end();
  }
}
