import pg from 'pg';
import { openSqlite } from './sqlite.js';

/**
 * The ledger read straight from its database, SQLite or PostgreSQL (the same tables), and checked
 * against every invariant a serial history keeps. The race and fault suites run it after each round.
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
    const rows = Object.fromEntries(Object.entries(QUERIES).map(([name, sql]) => [name, db.prepare(sql).all()]));
    return rows as unknown as LedgerRows;
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
    await db.query('COMMIT');
    return rows as unknown as LedgerRows;
  } finally {
    await db.end();
  }
}

/**
 * Every way the ledger does not add up; empty when it is exact:
 * - for each mode, balance = top-ups − charges + refunds, and never below zero;
 * - impact (stored totals and per-day totals) = the sums over the offsets;
 * - each offset charged once at its amount, refunded once exactly when it is refunded (one
 *   terminal state: its status), no entry without its offset;
 * - one offset per Idempotency-Key, of the key's mode.
 */
export function ledgerProblems(rows: LedgerRows): string[] {
  const problems: string[] = [];
  const byId = new Map(rows.offsets.map((o) => [o.id, o]));
  const charges = new Map<string, number[]>();
  const refunds = new Map<string, number[]>();
  const sums = [0, 1].map(() => ({ topup: 0, charge: 0, refund: 0 }));
  for (const e of rows.entries) {
    sums[e.livemode]![e.kind] += e.amount_cents;
    if (e.kind === 'topup') continue;
    const o = e.offset_id === null ? undefined : byId.get(e.offset_id);
    if (o === undefined) problems.push(`${e.kind} entry for a missing offset ${e.offset_id}`);
    else if (o.livemode !== e.livemode) problems.push(`${e.kind} entry of ${o.id} in the wrong mode`);
    const map = e.kind === 'charge' ? charges : refunds;
    if (e.offset_id !== null) map.set(e.offset_id, [...(map.get(e.offset_id) ?? []), e.amount_cents]);
  }
  for (const mode of [0, 1]) {
    const balance = rows.balances.find((b) => b.livemode === mode)?.available_cents;
    const s = sums[mode]!;
    const expected = s.topup + s.charge + s.refund;
    if (balance !== expected) problems.push(`mode ${mode}: balance ${balance} ≠ top-ups − charges + refunds = ${expected}`);
    if ((balance ?? 0) < 0) problems.push(`mode ${mode}: balance below zero`);
    const kept = rows.offsets.filter((o) => o.livemode === mode && o.status !== 'refunded');
    const placed = kept.filter((o) => o.status === 'placed').reduce((n, o) => n + o.kg, 0);
    const processing = kept.filter((o) => o.status === 'processing').reduce((n, o) => n + o.kg, 0);
    const impact = rows.impact.find((r) => r.livemode === mode);
    if (impact === undefined || impact.offsets !== kept.length || impact.placed_kg !== placed || impact.processing_kg !== processing) {
      problems.push(
        `mode ${mode}: impact ${JSON.stringify(impact)} ≠ ${kept.length} offsets, ${placed} kg placed, ${processing} kg processing`,
      );
    }
    if (impact !== undefined && (impact.offsets < 0 || impact.placed_kg < 0 || impact.processing_kg < 0))
      problems.push(`mode ${mode}: a total below zero`);
    const daily = rows.daily.filter((d) => d.livemode === mode);
    const dailyKg = daily.reduce((n, d) => n + d.kg, 0);
    const dailyCount = daily.reduce((n, d) => n + d.offsets, 0);
    if (dailyKg !== placed + processing || dailyCount !== kept.length)
      problems.push(`mode ${mode}: per-day totals ${dailyKg} kg / ${dailyCount} ≠ the offsets'`);
    if (daily.some((d) => d.kg < 0 || d.offsets < 0)) problems.push(`mode ${mode}: a per-day total below zero`);
  }
  for (const o of rows.offsets) {
    const c = charges.get(o.id) ?? [];
    if (c.length !== 1 || c[0] !== -o.amount_cents)
      problems.push(`offset ${o.id}: charges ${JSON.stringify(c)} for ${o.amount_cents} cents`);
    const r = refunds.get(o.id) ?? [];
    const want = o.status === 'refunded' ? [o.amount_cents] : [];
    if (JSON.stringify(r) !== JSON.stringify(want)) problems.push(`offset ${o.id} (${o.status}): refunds ${JSON.stringify(r)}`);
  }
  const keyed = new Set<string>();
  for (const k of rows.idempotency) {
    const o = byId.get(k.offset_id);
    if (o === undefined || o.livemode !== k.livemode)
      problems.push(`Idempotency-Key ${k.key} names ${k.offset_id}, not an offset of its mode`);
    if (keyed.has(k.offset_id)) problems.push(`offset ${k.offset_id} is named by two Idempotency-Keys`);
    keyed.add(k.offset_id);
  }
  return problems;
}
