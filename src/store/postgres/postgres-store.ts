import pg from 'pg';
import type { Mode } from '../../api/types.js';
import { LedgerError } from '../ledger-error.js';
import type {
  AccountRecord, BrowseQuery, ImpactTotals, KeyRecord, KeyVault, LedgerReads, LedgerStore, LedgerTx, OffsetRecord, PageQuery,
} from '../port.js';
import { pgError } from './errors.js';
import { PgTx, type Queryable, reads } from './pg-tx.js';
import { MIGRATIONS } from './schema.js';
import { maskUrl, parseDatabaseUrl } from './url.js';

/**
 * The shared store: one PostgreSQL database (a schema of it) under any number of `carbon serve`
 * instances and CLI runs. Exact across instances by construction:
 * - a purchase locks its mode's balance row first (`SELECT … FOR UPDATE`), so purchases of a mode
 *   run one after another across every instance (READ COMMITTED: each sees the one before), and
 *   the Idempotency-Key's primary key is the last line of defence;
 * - nothing is cached between requests: every read is a query, so a key revoked through one
 *   instance is refused by all from their next request;
 * - a transaction that fails with a serialization failure or a deadlock runs again from the start.
 * docs/reliability.md has the reasoning.
 */

/** int8 (bigint) and numeric as JavaScript numbers: every amount in the model is a safe integer. */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

const RETRIES = 5;

export class PostgresStore implements LedgerStore {
  readonly kind = 'postgres' as const;
  private readonly reads: LedgerReads;

  private constructor(
    private readonly pool: pg.Pool,
    readonly label: string,
  ) {
    this.reads = reads(pool as unknown as Queryable);
  }

  /** Connects, checks the server answers, and brings the schema up to date. */
  static async open(url: string, options: { schema?: string } = {}): Promise<PostgresStore> {
    const label = maskUrl(url);
    let parsed: ReturnType<typeof parseDatabaseUrl>;
    try {
      parsed = parseDatabaseUrl(url, options.schema);
    } catch (err) {
      throw pgError(err, label);
    }
    const pool = new pg.Pool({
      connectionString: parsed.connectionString,
      max: Number(process.env.CARBON_PG_POOL ?? 10),
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 10_000,
      // Every connection works in the sandbox's own schema.
      options: `-c search_path=${parsed.schema}`,
      types,
    });
    // An idle connection that breaks (the server restarted) is dropped by the pool; not fatal.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, label);
    try {
      await store.migrate(parsed.schema);
    } catch (err) {
      await pool.end().catch(() => {});
      throw pgError(err, label);
    }
    return store;
  }

  private async migrate(schema: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // One migration at a time across every instance starting now, per schema.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`carbon-migrate:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
      const row = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0];
      const from = row?.version ?? 0;
      if (from > MIGRATIONS.length) {
        throw new LedgerError(`The database schema "${schema}" is version ${from}; this carbon knows up to ${MIGRATIONS.length}.`, this.label, 'Upgrade carbon, or use another schema (?schema=…).');
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

  private async read<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw pgError(err, this.label);
    }
  }

  account(): Promise<AccountRecord | undefined> {
    return this.read(() => this.reads.account());
  }
  keyByHash(hash: Uint8Array): Promise<KeyRecord | undefined> {
    return this.read(() => this.reads.keyByHash(hash));
  }
  keys(): Promise<KeyRecord[]> {
    return this.read(() => this.reads.keys());
  }
  vault(): Promise<KeyVault> {
    return this.read(() => this.reads.vault());
  }
  balance(mode: Mode): Promise<number> {
    return this.read(() => this.reads.balance(mode));
  }
  impact(mode: Mode): Promise<ImpactTotals> {
    return this.read(() => this.reads.impact(mode));
  }
  due(mode: Mode, now: number): Promise<{ kg: number; count: number }> {
    return this.read(() => this.reads.due(mode, now));
  }
  offset(id: string): Promise<OffsetRecord | undefined> {
    return this.read(() => this.reads.offset(id));
  }
  offsetByCertificate(certificateId: string): Promise<OffsetRecord | undefined> {
    return this.read(() => this.reads.offsetByCertificate(certificateId));
  }
  page(mode: Mode, query: PageQuery): Promise<OffsetRecord[]> {
    return this.read(() => this.reads.page(mode, query));
  }
  browse(mode: Mode, query: BrowseQuery): Promise<OffsetRecord[]> {
    return this.read(() => this.reads.browse(mode, query));
  }
  reviewQueue(limit: number): Promise<OffsetRecord[]> {
    return this.read(() => this.reads.reviewQueue(limit));
  }
  kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null): Promise<Array<{ period: string; kg: number }>> {
    return this.read(() => this.reads.kgByPeriod(mode, period, since));
  }
  newestCreated(mode: Mode): Promise<number | null> {
    return this.read(() => this.reads.newestCreated(mode));
  }
  meta(name: string): Promise<string | undefined> {
    return this.read(() => this.reads.meta(name));
  }

  /**
   * BEGIN … COMMIT on one pooled connection. A serialization failure or deadlock runs `fn` again
   * (up to RETRIES times); `wait: false` gives up at once on a held lock (lock_timeout).
   */
  async transaction<T>(fn: (tx: LedgerTx) => Promise<T>, options: { wait?: boolean } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw pgError(err, this.label);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        if (options.wait === false) await client.query("SET LOCAL lock_timeout = '1ms'");
        const result = await fn(new PgTx(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        const code = (err as { code?: string }).code;
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        // A serialization failure or deadlock, or a unique key another writer just took (an
        // Idempotency-Key, say): the transaction runs again and sees what was committed.
        if ((code === '40001' || code === '40P01' || code === '23505') && attempt < RETRIES) continue;
        throw pgError(err, this.label);
      } finally {
        client.release(broken);
      }
    }
  }

  async takeRequest(keyId: string, now: number, limit: number, windowMs: number): Promise<number | null> {
    // The rule of rate-window.ts in one statement, so every instance counts against one window.
    // The count stops at limit + 1: above the limit means refused.
    const row = await this.read(async () =>
      (
        await this.pool.query<{ start_ms: number; count: number }>(
          `INSERT INTO rate_windows AS w (key_id, start_ms, count) VALUES ($1, $2, 1)
           ON CONFLICT (key_id) DO UPDATE SET
             start_ms = CASE WHEN $2 >= w.start_ms + $4 OR $2 < w.start_ms THEN $2 ELSE w.start_ms END,
             count = CASE WHEN $2 >= w.start_ms + $4 OR $2 < w.start_ms THEN 1 WHEN w.count > $3 THEN w.count ELSE w.count + 1 END
           RETURNING start_ms, count`,
          [keyId, now, limit, windowMs],
        )
      ).rows[0]!,
    );
    if (row.count <= limit) return null;
    return Math.max(1, Math.ceil((row.start_ms + windowMs - now) / 1000));
  }

  async healthy(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
