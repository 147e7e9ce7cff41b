import type pg from 'pg';
import { timeoutMs } from '../env-timeouts.js';
/**
 * How long carbon waits for PostgreSQL, so that a request whose database does not answer gets its
 * 503 (and a command its one-line error) within 10 s, instead of waiting as long as the network
 * does. Each is whole milliseconds from the environment, 0 for no deadline (../env-timeouts.ts:
 * the CLI refuses any other value). docs/reliability.md ("Deadlines on the database") has the reasoning.
 */
export interface Deadlines {
  /** Opening a connection, or waiting for one of the pool's: CARBON_PG_CONNECT_TIMEOUT_MS. */
  connectMs: number;
  /** Every statement, on the server and on the client: CARBON_PG_STATEMENT_TIMEOUT_MS. */
  statementMs: number;
  /** A transaction left open with nothing running (its session is ended): CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS. */
  idleInTransactionMs: number;
}

export const DEFAULT_DEADLINES: Deadlines = { connectMs: 5000, statementMs: 4000, idleInTransactionMs: 10_000 };

/**
 * How much longer than the server's statement_timeout the client waits for an answer: a live
 * server cancels the statement itself (57014) and the connection stays usable; only a server that
 * does not answer at all meets the client's deadline, and then the connection is thrown away.
 */
const CLIENT_GRACE_MS = 500;

export function deadlines(env: NodeJS.ProcessEnv = process.env): Deadlines {
  return {
    connectMs: timeoutMs(env.CARBON_PG_CONNECT_TIMEOUT_MS, DEFAULT_DEADLINES.connectMs),
    statementMs: timeoutMs(env.CARBON_PG_STATEMENT_TIMEOUT_MS, DEFAULT_DEADLINES.statementMs),
    idleInTransactionMs: timeoutMs(env.CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS, DEFAULT_DEADLINES.idleInTransactionMs),
  };
}

/**
 * How many statement deadlines a statement over the whole ledger is given: emptying it (a snapshot's
 * load, `sandbox reset`), and each rule a load checks across every row. Their time grows with the
 * ledger (a million offsets: 1.9 s to empty, 3.5–5.0 s for the rule over offsets, entries and keys
 * here; BENCHMARKS.md, "Snapshots"), where every other statement's does not: 40 s by default.
 */
export const WHOLE_LEDGER_DEADLINES = 10;

/**
 * A statement over the whole ledger, as its text runs: the server's statement_timeout raised for it
 * alone (SET LOCAL, then back to the connection's own), and the client's deadline with it. Statements
 * without parameters, as one simple query: the results are those of `text`'s own statements.
 */
export function wholeLedgerQuery(text: string, d: Deadlines = deadlines()): { text: string; query_timeout: number } {
  const ms = d.statementMs * WHOLE_LEDGER_DEADLINES;
  return {
    text: `SET LOCAL statement_timeout = ${ms}; ${text}; SET LOCAL statement_timeout TO DEFAULT`,
    query_timeout: ms === 0 ? 0 : ms + CLIENT_GRACE_MS,
  };
}

/**
 * The deadlines as node-postgres's pool options. The server-side ones travel in the startup
 * packet, once per connection: no statement pays a round trip for them.
 * - connectionTimeoutMillis bounds both a new connection (a server that accepts TCP and never
 *   answers, as a stopped one does) and the wait for a pooled one;
 * - statement_timeout and idle_in_transaction_session_timeout are the server's own, for a server
 *   that answers: a statement stuck on a lock, a session whose client stalled with the writer
 *   lock held (its lock is released);
 * - query_timeout is the client's, for a server that does not answer at all: statement_timeout
 *   cannot fire in a stopped server. The connection it fires on is thrown away (pg-pool does so
 *   for pool.query; PostgresStore.transaction() for its own);
 * - TCP keepalive finds a connection whose peer has vanished while it sat idle in the pool.
 */
export function poolDeadlines(d: Deadlines) {
  return {
    connectionTimeoutMillis: d.connectMs,
    statement_timeout: d.statementMs,
    query_timeout: d.statementMs === 0 ? 0 : d.statementMs + CLIENT_GRACE_MS,
    idle_in_transaction_session_timeout: d.idleInTransactionMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * Ends the pools: each connection says goodbye and waits for the server to close it. A server
 * that does not answer never does, so after the connect deadline the sockets are cut instead
 * (a command on a stopped database exits rather than hangs).
 */
export async function endPools(pools: Array<pg.Pool | undefined>, clients: Set<pg.PoolClient>): Promise<void> {
  const ended = Promise.all(pools.map((pool) => pool?.end()));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), deadlines().connectMs || 5000);
    timer.unref();
  });
  if ((await Promise.race([ended, late])) === 'late') {
    for (const client of clients) client.connection.stream.destroy();
    await ended;
  }
  clearTimeout(timer);
}
