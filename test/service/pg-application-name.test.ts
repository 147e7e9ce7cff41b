import { hostname } from 'node:os';
import { afterEach, describe, expect, test } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';

/**
 * carbon's sessions are named in pg_stat_activity (docs/deploy.md): `carbon host:pid`, as the journal
 * names the instance, so an operator on a shared database tells them, and one instance's, apart; a
 * URL's own ?application_name= wins.
 */
describe.skipIf(!postgresAvailable())("carbon's sessions on PostgreSQL", () => {
  const schemas: TestSchema[] = [];
  const stores: PostgresStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const s of schemas.splice(0)) await s.drop();
  });

  const nameOf = async (url: (base: string) => string) => {
    const schema = freshSchema('appname');
    schemas.push(schema);
    const store = await PostgresStore.open(url(schema.url));
    stores.push(store);
    const pool = (store as unknown as { pool: { query(text: string): Promise<{ rows: Array<{ name: string }> }> } }).pool;
    return (await pool.query("SELECT current_setting('application_name') AS name")).rows[0]!.name;
  };

  test('are named carbon host:pid, unless the URL names them', async () => {
    expect(await nameOf((url) => url)).toBe(`carbon ${hostname()}:${process.pid}`);
    expect(await nameOf((url) => `${url}&application_name=ops-sandbox`)).toBe('ops-sandbox');
  });
});
