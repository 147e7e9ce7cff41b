import type { LedgerStore } from './port.js';

/**
 * Where the ledger lives: SQLite in a data directory (the default: CARBON_HOME), or PostgreSQL
 * by URL (`--database` / CARBON_DATABASE_URL). Each store's code, and its driver, loads only when
 * that store is opened: a local `carbon balance` pays nothing for PostgreSQL.
 */
export type StoreTarget =
  | { kind: 'sqlite'; dir: string }
  /**
   * `pool`: the connections a server keeps open at most (default 10; the CLI's CARBON_PG_POOL).
   * `single`: a command's: one connection for everything (postgres/own-connection.ts, oneConnection).
   */
  | { kind: 'postgres'; url: string; schema?: string; pool?: number; single?: boolean };

export async function openStore(target: StoreTarget): Promise<LedgerStore> {
  if (target.kind === 'postgres') {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    const { url, schema, pool, single } = target;
    return PostgresStore.open(url, { schema, pool, single });
  }
  const { SqliteStore } = await import('./sqlite/sqlite-store.js');
  return SqliteStore.open(target.dir);
}
