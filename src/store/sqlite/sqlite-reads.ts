import type { Mode } from '../../api/types.js';
import { sha256 } from '../../platform/sha256.js';
import { DAY_MS, groupByPeriod } from '../periods.js';
import type * as port from '../port.js';
import { livemodeOf, OFFSET_COLUMNS } from '../tables.js';
import { type Db, type Query, query } from './driver.js';
import { readVault } from './files.js';
import { offsetRecord, type Statements } from './statements.js';

/** A key's SHA-256, as the ledger holds it. */
export const digest = (secret: string): Buffer => sha256(Buffer.from(secret, 'utf8'));

/** What the reads run on: the store's one connection, its statements and its data directory. */
export interface SqliteConnection {
  readonly db: Db;
  readonly s: Statements;
  /** The data directory (the key vault lives beside the ledger), or null in memory. */
  readonly dir: string | null;
  /** The developer page's filtered listings, prepared once per shape of filter. */
  readonly browseStatements: Map<string, Query<[Record<string, number | string>], port.OffsetRecord>>;
}

/**
 * The reads of the SQLite ledger, written once: a transaction (SqliteTx) runs them as they are,
 * the store (SqliteStore) through `run`, which waits for this process's own transaction and says
 * a failure in the ledger's terms, and keeps what every request reads in its cache.
 */
export class SqliteReads implements port.LedgerReads {
  constructor(protected readonly c: SqliteConnection) {}

  /** How one read runs: at once (inside a transaction); the store overrides it. */
  protected async run<T>(read: () => T): Promise<T> {
    return read();
  }

  account(): Promise<port.AccountRecord | undefined> {
    return this.run(() => this.c.s.account.get());
  }

  keyBySecret(secret: string): Promise<port.KeyRecord | undefined> {
    return this.run(() => this.c.s.keyByHash.get(digest(secret)));
  }

  keys(): Promise<port.KeyRecord[]> {
    return this.run(() => this.c.s.keys.all());
  }

  vault(): Promise<port.KeyVault> {
    return this.run(() => (this.c.dir === null ? { defaults: {}, secrets: {} } : readVault(this.c.dir)));
  }

  balance(mode: Mode): Promise<number> {
    return this.run(() => this.c.s.balance.get(livemodeOf(mode)) ?? 0);
  }

  impact(mode: Mode): Promise<port.ImpactTotals> {
    return this.run(() => this.c.s.impact.get(livemodeOf(mode)) ?? { placed_kg: 0, processing_kg: 0, offsets: 0 });
  }

  due(mode: Mode, now: number): Promise<{ kg: number; count: number }> {
    return this.run(() => (this.c.s.anyDue.get(now) === undefined ? { kg: 0, count: 0 } : this.c.s.due.get(now, livemodeOf(mode))!));
  }

  offset(id: string): Promise<port.OffsetRecord | undefined> {
    return this.run(() => this.c.s.offsetById.get(id));
  }

  offsetByCertificate(certificateId: string): Promise<port.OffsetRecord | undefined> {
    return this.run(() => this.c.s.offsetByCertificate.get(certificateId));
  }

  page(mode: Mode, q: port.PageQuery): Promise<port.OffsetRecord[]> {
    return this.run(() => {
      const before = q.beforeSeq ?? Number.MAX_SAFE_INTEGER;
      const rows =
        q.reference === null
          ? this.c.s.page.all(livemodeOf(mode), before, q.limit)
          : this.c.s.pageByReference.all(livemodeOf(mode), q.reference, before, q.limit);
      return rows.map(offsetRecord);
    });
  }

  browse(mode: Mode, q: port.BrowseQuery): Promise<port.OffsetRecord[]> {
    return this.run(() => this.browseRows(mode, q));
  }

  reviewQueue(limit: number): Promise<port.OffsetRecord[]> {
    return this.run(() => this.c.s.reviewQueue.all(limit));
  }

  kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null): Promise<Array<{ period: string; kg: number }>> {
    return this.run(() => groupByPeriod(this.c.s.daily.all(livemodeOf(mode), since === null ? 0 : Math.floor(since / DAY_MS)), period));
  }

  meta(name: string): Promise<string | undefined> {
    return this.run(() => this.c.s.meta.get(name));
  }

  private browseRows(mode: Mode, q: port.BrowseQuery): port.OffsetRecord[] {
    const where = ['livemode = @livemode', 'seq < @before'];
    // A prefix, compared as text (no LIKE: a % or _ in it is itself, and case counts).
    if (q.reference !== null) where.push('substr(reference, 1, length(@reference)) = @reference');
    if (q.status !== null) where.push('status = @status');
    if (q.since !== null) where.push('created_ms >= @since');
    if (q.until !== null) where.push('created_ms < @until');
    const sql = `SELECT ${OFFSET_COLUMNS} FROM offsets WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
    let stmt = this.c.browseStatements.get(sql);
    if (stmt === undefined) {
      stmt = query<[Record<string, number | string>], port.OffsetRecord>(this.c.db, sql);
      this.c.browseStatements.set(sql, stmt);
    }
    return stmt.all({
      livemode: livemodeOf(mode),
      before: q.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: q.limit,
      ...(q.reference === null ? {} : { reference: q.reference }),
      ...(q.status === null ? {} : { status: q.status }),
      ...(q.since === null ? {} : { since: q.since }),
      ...(q.until === null ? {} : { until: q.until }),
    });
  }
}
