import type { Mode } from '../../api/types.js';
import { sha256 } from '../../platform/sha256.js';
import { DAY_MS, groupByPeriod } from '../periods.js';
import type * as port from '../port.js';
import { KEY_COLUMNS, livemodeOf, OFFSET_COLUMNS } from '../tables.js';

/**
 * The order keys are listed and saved in. SQLite lists them as they were made (created_ms, then
 * rowid); PostgreSQL keeps no order of insertion, so the keys made in one millisecond (the starting
 * keys) go as the sandbox makes them, test purchase, live purchase, test read-only, and then by id:
 * the same order as SQLite's, before and after a snapshot taken from one to the other. `t` is the
 * table's alias, if any.
 */
export const keyOrder = (t = ''): string => `${t}created_ms, ${t}permission, ${t}livemode, ${t}id COLLATE "C"`;

/** A pool or one connection: what runs a query. */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  /** Statements with a client deadline of their own (0: the pool's); several statements give a result each. */
  query(config: { text: string; query_timeout: number }): Promise<unknown>;
}

const ACCOUNT = 'status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms';
const NO_IMPACT: port.ImpactTotals = { placed_kg: 0, processing_kg: 0, offsets: 0 };

/**
 * Whether PostgreSQL text can hold every value of a lookup. It cannot hold NUL (U+0000), and no
 * write stores one (validation refuses it), so a lookup by such a value finds nothing, as it does
 * on SQLite, instead of failing with 22021 (a 500).
 */
export function holdable(values: unknown[]): boolean {
  return values.every((v) => typeof v !== 'string' || !v.includes('\u0000'));
}

/**
 * The reads of the PostgreSQL ledger, written once: on the pool (committed state: the store,
 * PostgresStore, which also keeps what every request reads) or on a transaction's connection
 * (PgTx: its own view).
 */
export class PgReads implements port.LedgerReads {
  constructor(protected readonly q: Queryable) {}

  /** How one read runs: as it is (inside a transaction); the store says a failure in the ledger's terms. */
  protected run<T>(read: () => Promise<T>): Promise<T> {
    return read();
  }

  protected one<R extends object>(text: string, values: unknown[] = []): Promise<R | undefined> {
    return this.run(async () => (holdable(values) ? (await this.q.query<R>(text, values)).rows[0] : undefined));
  }

  protected all<R extends object>(text: string, values: unknown[] = []): Promise<R[]> {
    return this.run(async () => (holdable(values) ? (await this.q.query<R>(text, values)).rows : []));
  }

  account(): Promise<port.AccountRecord | undefined> {
    return this.one<port.AccountRecord>(`SELECT ${ACCOUNT} FROM account WHERE id = 1`);
  }

  keyBySecret(secret: string): Promise<port.KeyRecord | undefined> {
    return this.one<port.KeyRecord>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, [sha256(Buffer.from(secret, 'utf8'))]);
  }

  keys(): Promise<port.KeyRecord[]> {
    return this.all<port.KeyRecord>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY ${keyOrder()}`);
  }

  async vault(): Promise<port.KeyVault> {
    // A row without a secret only says which starting key a key is (its text never held here).
    type Row = { id: string; secret: string | null; default_for: port.DefaultKey | null };
    const rows = await this.all<Row>('SELECT id, secret, default_for FROM key_vault');
    const vault: port.KeyVault = { defaults: {}, secrets: {} };
    for (const r of rows) {
      if (r.secret !== null) vault.secrets[r.id] = r.secret;
      if (r.default_for !== null) vault.defaults[r.default_for] = r.id;
    }
    return vault;
  }

  async balance(mode: Mode): Promise<number> {
    const row = await this.one<{ available_cents: number }>('SELECT available_cents FROM balances WHERE livemode = $1', [livemodeOf(mode)]);
    return row?.available_cents ?? 0;
  }

  async impact(mode: Mode): Promise<port.ImpactTotals> {
    const row = await this.one<port.ImpactTotals>('SELECT placed_kg, processing_kg, offsets FROM impact WHERE livemode = $1', [
      livemodeOf(mode),
    ]);
    return row ?? NO_IMPACT;
  }

  async due(mode: Mode, now: number): Promise<{ kg: number; count: number }> {
    return (await this.one<{ kg: number; count: number }>(
      'SELECT coalesce(SUM(kg), 0) AS kg, COUNT(*) AS count FROM offsets ' +
        "WHERE status = 'processing' AND settle_at_ms <= $1 AND livemode = $2",
      [now, livemodeOf(mode)],
    ))!;
  }

  offset(id: string): Promise<port.OffsetRecord | undefined> {
    return this.one<port.OffsetRecord>(`SELECT ${OFFSET_COLUMNS} FROM offsets WHERE id = $1`, [id]);
  }

  offsetByCertificate(certificateId: string): Promise<port.OffsetRecord | undefined> {
    return this.one<port.OffsetRecord>(`SELECT ${OFFSET_COLUMNS} FROM offsets WHERE certificate_id = $1`, [certificateId]);
  }

  page(mode: Mode, p: port.PageQuery): Promise<port.OffsetRecord[]> {
    const before = p.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    return p.reference === null
      ? this.all<port.OffsetRecord>(`SELECT ${OFFSET_COLUMNS} FROM offsets WHERE livemode = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
          livemodeOf(mode),
          before,
          p.limit,
        ])
      : this.all<port.OffsetRecord>(
          `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE livemode = $1 AND reference = $2 AND seq < $3 ORDER BY seq DESC LIMIT $4`,
          [livemodeOf(mode), p.reference, before, p.limit],
        );
  }

  browse(mode: Mode, b: port.BrowseQuery): Promise<port.OffsetRecord[]> {
    const values: unknown[] = [livemodeOf(mode), b.beforeSeq ?? Number.MAX_SAFE_INTEGER];
    const where = ['livemode = $1', 'seq < $2'];
    const add = (clause: string, value: unknown) => {
      values.push(value);
      where.push(clause.replace('?', `$${values.length}`));
    };
    // A prefix, compared as text (no LIKE: a % or _ in it is itself, and case counts).
    if (b.reference !== null) add('starts_with(reference, ?)', b.reference);
    if (b.status !== null) add('status = ?', b.status);
    if (b.since !== null) add('created_ms >= ?', b.since);
    if (b.until !== null) add('created_ms < ?', b.until);
    values.push(b.limit);
    const sql = `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${values.length}`;
    return this.all<port.OffsetRecord>(sql, values);
  }

  reviewQueue(limit: number): Promise<port.OffsetRecord[]> {
    const sql = `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE review = 'pending' AND status = 'processing' ORDER BY seq LIMIT $1`;
    return this.all<port.OffsetRecord>(sql, [limit]);
  }

  async kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null): Promise<Array<{ period: string; kg: number }>> {
    const days = await this.all<{ day: number; kg: number }>(
      'SELECT day, kg FROM impact_daily WHERE livemode = $1 AND day >= $2 ORDER BY day',
      [livemodeOf(mode), since === null ? 0 : Math.floor(since / DAY_MS)],
    );
    return groupByPeriod(days, period);
  }

  async meta(name: string): Promise<string | undefined> {
    return (await this.one<{ value: string }>('SELECT value FROM meta WHERE name = $1', [name]))?.value;
  }
}
