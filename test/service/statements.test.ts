import { afterEach, describe, expect, test, vi } from 'vitest';
import { migrate } from '../../src/store/sqlite/schema.js';
import { lazyStatements } from '../../src/store/sqlite/statements.js';
import { type Db, openSqlite } from '../support/sqlite.js';

/**
 * The SQLite store's statements are prepared on first use (a command prepares the few it runs,
 * not all of them at open). Preparing late must not hide a statement that no longer fits the
 * schema until some rarely taken path reads it: every one is prepared here against the schema.
 */

let db: Db | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

function migrated(): Db {
  db = openSqlite(':memory:');
  migrate(db);
  return db;
}

describe('lazyStatements', () => {
  test('prepares nothing until a statement is read, then prepares it once and keeps it', () => {
    const conn = migrated();
    const prepare = vi.spyOn(conn, 'prepare');
    const s = lazyStatements(conn);
    expect(prepare).not.toHaveBeenCalled();
    const balance = s.balance;
    expect(prepare).toHaveBeenCalledTimes(1);
    expect(prepare.mock.calls[0]![0]).toMatch(/FROM balances/);
    expect(s.balance).toBe(balance);
    expect(prepare).toHaveBeenCalledTimes(1);
    // Each connection has its own statements.
    expect(lazyStatements(conn).balance).not.toBe(balance);
  });

  test('every statement prepares against the current schema', () => {
    const conn = migrated();
    const s = lazyStatements(conn);
    const names = Object.getOwnPropertyNames(Object.getPrototypeOf(s)).filter((n) => n !== 'constructor');
    expect(names.length).toBeGreaterThan(30);
    for (const name of names) {
      const statement = (s as unknown as Record<string, unknown>)[name];
      // Reading it prepared it: SQL that no longer fits the schema throws here.
      expect(typeof (statement as { get?: unknown }).get, name).toBe('function');
    }
  });

  test('a read through them returns the stored row', () => {
    const conn = migrated();
    conn.prepare('INSERT INTO balances VALUES (0, 1234), (1, 0)').run();
    expect(lazyStatements(conn).balance.get(0)).toBe(1234);
  });
});
