import pg from 'pg';
import type { Mode } from '../../api/types.js';
import type { Health } from '../health.js';
import type {
  AccountRecord,
  JournalQuery,
  JournalRecord,
  JournalRetention,
  KeyRecord,
  LedgerExport,
  LedgerStore,
  LedgerTx,
  NewJournalRecord,
} from '../port.js';
import { windowName } from '../rate-window.js';
import { livemodeOf } from '../tables.js';
import { CLIENT } from './client.js';
import { deadlines, endPools, poolDeadlines } from './deadlines.js';
import { connectionLost, pgError } from './errors.js';
import { health, healthConfig, OwnConnection, oneConnection } from './own-connection.js';
import { MAX_KEPT, PgReadCache } from './pg-cache.js';
import { appendJournal, readJournal } from './pg-journal.js';
import { PgReads, type Queryable } from './pg-reads.js';
import { exportLedger } from './pg-snapshot.js';
import { PgTx } from './pg-tx.js';
import { migrate } from './schema.js';
import { maskUrl, parseDatabaseUrl } from './url.js';

/**
 * The shared store: one PostgreSQL database (a schema of it) under any number of `carbon serve`
 * instances and CLI runs. Exact across instances by construction:
 * - every transaction takes the ledger's writer lock before its snapshot and runs SERIALIZABLE
 *   (see transaction()): writers of every instance take their turn, each seeing the one before,
 *   and the Idempotency-Key's primary key and the balance's CHECK are the last lines of defence;
 * - the account, its balances, the keys and the named values are kept between requests and checked against the
 *   ledger's version once a batch (see fresh()), so a key revoked through one instance is refused
 *   by all from their next request;
 * - a transaction that fails with a serialization failure or a deadlock runs again from the start.
 * docs/reliability.md has the reasoning.
 */

const RETRIES = 10;

/** The writer lock first (no snapshot yet), then everything else (see transaction()). */
const BEGIN = 'BEGIN ISOLATION LEVEL SERIALIZABLE; LOCK TABLE account IN SHARE ROW EXCLUSIVE MODE';
const BEGIN_NO_WAIT = "BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL lock_timeout = '1ms'; LOCK TABLE account IN SHARE ROW EXCLUSIVE MODE";

/** A few milliseconds, more each attempt, at random: writers that collided do not collide again in step. */
function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
}

export class PostgresStore extends PgReads implements LedgerStore {
  private constructor(
    private readonly pool: pg.Pool,
    readonly label: string,
    /** The pool's settings, for the journal's and the health check's own connections. */
    config: pg.PoolConfig,
    /** A command's store: its one connection serves the journal and the health check too. */
    single: boolean,
  ) {
    super(pool as unknown as Queryable);
    this.kept = new PgReadCache(pool as unknown as Queryable);
    pool.on('connect', this.adopt);
    pool.on('remove', (client) => this.clients.delete(client));
    this.journalWriter = single ? undefined : new OwnConnection(config, this.adopt, this.clients);
    this.checker = single ? undefined : new OwnConnection(healthConfig(config), this.adopt, this.clients);
  }

  /**
   * The journal's writes go through one connection of their own (a server's), so that a batch
   * never waits for one of the requests' connections, nor holds one.
   */
  private readonly journalWriter: OwnConnection | undefined;
  /** The health check's own connection (own-connection.ts, a server's): it never waits for one the requests hold. */
  private readonly checker: OwnConnection | undefined;
  /** The pools' open connections (close() cuts those a stopped server never lets go of). */
  private readonly clients = new Set<pg.PoolClient>();
  /**
   * Each new connection of any of the pools. One checked out (a transaction, the journal's batch, a
   * snapshot's read, a migration) that the server closes between two queries (a restart: 57P01)
   * emits 'error' with no query to hand it to; unheard, that event would end the process. The
   * query under way, or the next one, fails instead, and the request gets its 503.
   */
  private readonly adopt = (client: pg.PoolClient): void => {
    client.on('error', () => {});
    this.clients.add(client);
  };

  /** The account, the balances, the keys and the named values, kept between requests (pg-cache.ts). */
  private readonly kept: PgReadCache;

  /**
   * Connects, checks the server answers, and brings the schema up to date; sslmode=prefer or allow as
   * psql's (ssl.ts). `single`: a command's store, on one connection (own-connection.ts, oneConnection).
   */
  static async open(url: string, options: { schema?: string; pool?: number; single?: boolean } = {}): Promise<PostgresStore> {
    const label = maskUrl(url);
    let parsed: ReturnType<typeof parseDatabaseUrl>;
    try {
      parsed = parseDatabaseUrl(url, options.schema);
    } catch (err) {
      throw pgError(err, label);
    }
    const config: pg.PoolConfig = {
      connectionString: parsed.connectionString,
      max: options.pool ?? 10,
      idleTimeoutMillis: 10_000,
      // The password file read where the URL has no password (client.ts); a command's one connection's client extends it.
      ...CLIENT,
      ...poolDeadlines(deadlines()),
      ...(options.single === true ? oneConnection(deadlines()) : {}),
      // Every connection works in the sandbox's own schema (after the URL's own options: url.ts).
      options: parsed.options,
      ...parsed.ssl?.options,
    };
    const otherwise = parsed.ssl?.otherwise;
    const failed = (err: unknown): never => {
      throw pgError(err, label);
    };
    const single = options.single === true;
    return await PostgresStore.migrated(config, parsed.schema, label, single).catch((err: unknown) =>
      otherwise?.when(err)
        ? PostgresStore.migrated({ ...config, ssl: otherwise.ssl }, parsed.schema, label, single).catch(failed)
        : failed(err),
    );
  }

  private static async migrated(config: pg.PoolConfig, schema: string, label: string, single: boolean): Promise<PostgresStore> {
    const pool = new pg.Pool(config);
    // An idle connection that breaks (the server restarted) is dropped by the pool; not fatal.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, label, config, single);
    await migrate(pool, schema, label).catch(async (err: unknown) => {
      await pool.end().catch(() => {});
      throw err;
    });
    return store;
  }

  /** A read on the pool, its failure said in the ledger's terms. */
  protected override async run<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      throw pgError(err, this.label);
    }
  }

  override account(): Promise<AccountRecord | undefined> {
    return this.run(async () => (await this.kept.fresh()).account);
  }

  override keyBySecret(secret: string): Promise<KeyRecord | undefined> {
    return this.run(async () => {
      const cache = await this.kept.fresh();
      let key = cache.keys.get(secret);
      if (key === undefined) {
        key = await super.keyBySecret(secret);
        // Only keys that exist are kept.
        if (key !== undefined && cache.keys.size < MAX_KEPT) cache.keys.set(secret, Object.freeze(key));
      }
      return key;
    });
  }

  override balance(mode: Mode): Promise<number> {
    return this.run(async () => (await this.kept.fresh()).balances[livemodeOf(mode)]);
  }

  override meta(name: string): Promise<string | undefined> {
    return this.run(async () => {
      const cache = await this.kept.fresh();
      this.kept.read(name);
      if (cache.metas.has(name)) return cache.metas.get(name);
      const value = await super.meta(name);
      if (cache.metas.size < MAX_KEPT) cache.metas.set(name, value);
      return value;
    });
  }

  /**
   * One transaction on one pooled connection, serializable in two ways at once:
   * - it opens by taking the ledger's writer lock (`LOCK TABLE account IN SHARE ROW EXCLUSIVE
   *   MODE`, which conflicts with itself and not with reads), before its snapshot: LOCK TABLE takes
   *   none, so the snapshot of the statement after it already sees every writer before it. Writers
   *   of every instance take their turn as SQLite's BEGIN IMMEDIATE makes them, and never deadlock
   *   on each other (each waits for one lock, taken first);
   * - it runs at ISOLATION LEVEL SERIALIZABLE, so a write that some future path makes outside
   *   that turn is still caught (40001) and run again rather than interleaved.
   * A serialization failure or deadlock runs `fn` again (up to RETRIES times, with a short random
   * pause); `wait: false` gives up at once when the writer lock is held.
   */
  async transaction<T>(fn: (tx: LedgerTx) => Promise<T>, options: { wait?: boolean } = {}): Promise<T> {
    const wait = options.wait !== false;
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw pgError(err, this.label);
      }
      let broken = false;
      try {
        await client.query(wait ? BEGIN : BEGIN_NO_WAIT);
        const tx = new PgTx(client);
        const result = await fn(tx);
        await client.query(tx.commitStatement());
        // What this process's own transaction wrote is read back at once, not at the next turn.
        if (tx.touched) this.kept.committed(tx.touchedKeys);
        return result;
      } catch (err) {
        const code = (err as { code?: string }).code;
        // A connection cut, or one that did not answer in time, is thrown away: a ROLLBACK on it
        // would wait as long again, and the server ends the transaction when the socket closes.
        // So is one whose session began read-only (25006): it stays so once the database takes writes again.
        broken = connectionLost(err) || code === '25006';
        if (!broken) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
        }
        // A serialization failure or deadlock, or a unique key another writer just took (an
        // Idempotency-Key, say): the transaction runs again and sees what was committed.
        if (wait && (code === '40001' || code === '40P01' || code === '23505') && attempt < RETRIES) {
          await pause(attempt);
          continue;
        }
        throw pgError(err, this.label);
      } finally {
        client.release(broken);
      }
    }
  }

  async takeRequest(keyId: string, now: number, limit: number, windowMs: number): Promise<number | null> {
    // The rule of rate-window.ts in one statement, so every instance counts against one window.
    // The count stops at limit + 1: above the limit means refused.
    const row = await this.run(
      async () =>
        (
          await this.pool.query<{ start_ms: number; count: number }>(
            `INSERT INTO rate_windows AS w (key_id, start_ms, count) VALUES ($1, $2, 1)
           ON CONFLICT (key_id) DO UPDATE SET
             start_ms = CASE WHEN $2 >= w.start_ms + $4 OR $2 < w.start_ms THEN $2 ELSE w.start_ms END,
             count = CASE WHEN $2 >= w.start_ms + $4 OR $2 < w.start_ms THEN 1 WHEN w.count > $3 THEN w.count ELSE w.count + 1 END
           RETURNING start_ms, count`,
            [windowName(keyId, limit, windowMs), now, limit, windowMs],
          )
        ).rows[0]!,
    );
    if (row.count <= limit) return null;
    return Math.max(1, Math.ceil((row.start_ms + windowMs - now) / 1000));
  }

  /**
   * The journal's batch on its own connection (pg-journal.ts), outside the ledger's writer lock:
   * no purchase reads the journal, so it neither waits for nor holds up a purchase. `waitMs` bounds
   * the wait for the journal's lock (a reset's, a load's, another instance's batch); 0, not at all.
   */
  async appendJournal(records: NewJournalRecord[], retention: JournalRetention, options: { waitMs?: number } = {}): Promise<void> {
    await this.run(() => appendJournal(this.journalWriter?.pool ?? this.pool, records, retention, options.waitMs));
  }

  journal(query: JournalQuery): Promise<JournalRecord[]> {
    return this.run(() => readJournal(this.pool as unknown as Queryable, query));
  }

  async exportLedger(metaNames: readonly string[]): Promise<LedgerExport> {
    try {
      return await exportLedger(this.pool, metaNames, this.label);
    } catch (err) {
      throw pgError(err, this.label);
    }
  }

  health(): Promise<Health> {
    return health(this.checker?.pool ?? this.pool);
  }

  /**
   * Ends the pools (the ledger's, the journal's and the health check's), cutting after the connect deadline the
   * connections of a server that never answers (deadlines.ts, endPools).
   */
  close(): Promise<void> {
    this.closed ??= this.end();
    return this.closed;
  }
  private closed: Promise<void> | undefined;

  private end(): Promise<void> {
    return endPools([this.pool, this.journalWriter?.ifMade, this.checker?.ifMade], this.clients);
  }
}
