import type { DatabaseSync } from 'node:sqlite';
import { LedgerError } from '../ledger-error.js';

/**
 * The SQLite driver: the runtime's own `node:sqlite` (Node 22.13 and later), no native addon.
 * This file is the one place that loads it, and the typed statements the store prepares on it.
 */

type Sqlite = typeof import('node:sqlite');
let loaded: Sqlite | undefined;

/**
 * node:sqlite, loaded once. Node 22 prints `ExperimentalWarning: SQLite is an experimental
 * feature…` when it loads (24.21 and 26 do not): that one warning is silenced while it loads,
 * and every other warning, then or later, is printed as Node would. A Node without it (started
 * with --no-experimental-sqlite, or older than 22.13: the library has no bin to refuse it) is
 * a LedgerError that says so, before anything is made on disk.
 */
export function sqlite(path: string): Sqlite {
  if (loaded !== undefined) return loaded;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : ((rest[0] as { type?: string } | undefined)?.type ?? (warning as Error).name);
    if (type === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(text)) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    // Node 20 before 20.16 has no getBuiltinModule either.
    loaded = process.getBuiltinModule?.('node:sqlite') as Sqlite | undefined;
  } finally {
    process.emitWarning = emit;
  }
  if (loaded === undefined) {
    throw new LedgerError(
      `This Node.js (${process.version}) has no node:sqlite, which the local ledger needs.`,
      path,
      'Run carbon on Node.js 22.13 or later, without --no-experimental-sqlite (in NODE_OPTIONS too).',
    );
  }
  return loaded;
}

export type Db = DatabaseSync;

/** What `run` answers: rows changed, and the rowid of the last insert. */
interface Changes {
  changes: number;
  lastInsertRowid: number;
}

/** A prepared statement, typed by its parameters and the rows it returns. */
export interface Query<P extends unknown[] = [], R = unknown> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): Changes;
}

/** Rows as objects keyed by column. */
export function query<P extends unknown[] = [], R = unknown>(db: Db, sql: string): Query<P, R> {
  return db.prepare(sql) as unknown as Query<P, R>;
}

/**
 * Rows as arrays, in the columns' order: one array literal a row, not an object built key by
 * key (BENCHMARKS.md, streaming). `setReturnArrays` came in Node 22.16; before, the object's
 * values are taken.
 */
export function rows<P extends unknown[], R extends unknown[]>(db: Db, sql: string): Query<P, R> {
  const stmt = db.prepare(sql);
  if (typeof stmt.setReturnArrays === 'function') {
    stmt.setReturnArrays(true);
    return stmt as unknown as Query<P, R>;
  }
  return {
    get: (...params) => {
      const row = stmt.get(...(params as unknown as never[]));
      return row === undefined ? undefined : (Object.values(row) as R);
    },
    all: (...params) => stmt.all(...(params as unknown as never[])).map((row) => Object.values(row) as R),
    run: (...params) => stmt.run(...(params as unknown as never[])) as Changes,
  };
}

/** The first column of each row alone. */
export function pluck<P extends unknown[], R>(db: Db, sql: string): Query<P, R> {
  const stmt = rows<P, [R]>(db, sql);
  return {
    get: (...params) => stmt.get(...params)?.[0],
    all: (...params) => stmt.all(...params).map((row) => row[0]),
    run: (...params) => stmt.run(...params),
  };
}

/** A pragma's value (`journal_mode`, `user_version`, …). */
export function pragma<T>(db: Db, name: string): T | undefined {
  return pluck<[], T>(db, `PRAGMA ${name}`).get();
}

/** Whether the connection is inside a transaction (`isTransaction` came in Node 22.16; before, SQLite is asked to end one). */
export function inTransaction(db: Db): boolean {
  return typeof db.isTransaction === 'boolean' ? db.isTransaction : true;
}
