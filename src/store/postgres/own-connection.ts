import pg from 'pg';
import type { Health } from '../health.js';
import { PasswordFileClient } from './client.js';
import type { Deadlines } from './deadlines.js';

/**
 * A connection of its own beside the ledger's pool, made on first use (a pool of one, so it is made
 * again after the server drops it): the journal's writes have one, the health check another. Each
 * is adopted as the ledger pool's connections are (an error listener from its first moment, and
 * kept among the store's clients for close(), which ends it with the others).
 */
export class OwnConnection {
  private made: pg.Pool | undefined;

  constructor(
    private readonly config: pg.PoolConfig,
    private readonly adopt: (client: pg.PoolClient) => void,
    private readonly clients: Set<pg.PoolClient>,
  ) {}

  get pool(): pg.Pool {
    if (this.made === undefined) {
      this.made = new pg.Pool({ ...this.config, max: 1 });
      // An idle connection that breaks (the server restarted) is dropped by the pool; not fatal.
      this.made.on('error', () => {});
      this.made.on('connect', this.adopt);
      this.made.on('remove', (client) => this.clients.delete(client));
    }
    return this.made;
  }

  /** The pool if it was ever made (close() ends it), else undefined. */
  get ifMade(): pg.Pool | undefined {
    return this.made;
  }
}

/**
 * A command's pool (PostgresStore.open's `single`): one connection, on which its reads, its
 * transactions and its journal's batch take turns. A query waits its turn for as long as the one
 * before it takes, which the statement deadline bounds, and not the connect deadline, which the
 * pool would apply to the wait too (a read queued behind another stuck on a lock was told that the
 * server "cannot be reached"); opening the connection keeps the connect deadline, as the client's own.
 */
export function oneConnection(d: Deadlines): pg.PoolConfig {
  const connectionTimeoutMillis = d.connectMs;
  return {
    max: 1,
    connectionTimeoutMillis: 0,
    Client: class extends PasswordFileClient {
      // pg-pool constructs it with the pool's settings (its types say no argument).
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis });
      }
    },
  };
}

/**
 * The health check's settings: its one connection is kept while idle (a probe every few seconds
 * then costs a `SELECT 1`, not a new connection), and ended by close().
 */
export const healthConfig = (config: pg.PoolConfig): pg.PoolConfig => ({ ...config, idleTimeoutMillis: 0 });

/**
 * Whether the database answers and takes writes, asked on the health check's own connection,
 * never one of the ledger pool's: requests waiting on a lock may hold them all while the database
 * answers, and a readiness check that waited for one would take a busy instance (every instance of
 * a busy ledger at once) out of its balancer. A database that is down, refuses connections or does
 * not answer still fails it (or keeps it waiting, which the server bounds: endpoints.ts); so does
 * one that takes no writes (a standby, default_transaction_read_only), where every purchase fails,
 * and one whose ledger carbon's user cannot write (its tables gone, or its rights taken), which a
 * person mends.
 */
export async function health(pool: pg.Pool): Promise<Health> {
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    // Writable, and the ledger's tables there for carbon's user to write (a schema dropped, or rights taken, under a running carbon: not ok).
    const { rows } = await client.query<{ writable: boolean; ledger: boolean | null }>(
      "SELECT current_setting('transaction_read_only') = 'off' AS writable, has_table_privilege(to_regclass('offsets'), 'INSERT') AND has_table_privilege(to_regclass('offsets'), 'UPDATE') AS ledger",
    );
    if (rows[0]?.ledger !== true) {
      client.release();
      return { ok: false, reason: 'ledger_unusable', passing: false };
    }
    const writable = rows[0]?.writable === true;
    // A session keeps the read-only default it began with (ALTER DATABASE … SET default_transaction_read_only):
    // one that says no is ended, so the next check asks a new one, not it again once writes are back.
    client.release(!writable);
    return writable ? { ok: true } : { ok: false, reason: 'read_only', passing: true };
  } catch {
    client?.release(true);
    return { ok: false, reason: 'no_answer', passing: true };
  }
}
