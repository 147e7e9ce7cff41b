import { existsSync } from 'node:fs';
import { type Db, pluck, sqlite } from '../../src/store/sqlite/driver.js';

export { type Db, pragma } from '../../src/store/sqlite/driver.js';

/** Opens a ledger file directly with node:sqlite, as another process would (it must exist unless `create`). */
export function openSqlite(path: string, options: { readonly?: boolean; create?: boolean } = {}): Db {
  if (options.create !== true && path !== ':memory:' && !existsSync(path)) throw new Error(`no SQLite file at ${path}`);
  return new (sqlite(path).DatabaseSync)(path, { readOnly: options.readonly ?? false });
}

/** The first column of the first row of `sql`. */
export function scalar<T = number>(db: Db, sql: string, ...params: Array<number | string | null>): T | undefined {
  return pluck<Array<number | string | null>, T>(db, sql).get(...params);
}
