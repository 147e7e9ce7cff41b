import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { carbon, homes, spawnCarbon } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { limit } from '../support/load.js';

/**
 * `carbon sandbox snapshot save` on PostgreSQL whose connection is ended while the rows are being
 * read (a restart, pg_terminate_backend, or the idle-in-transaction deadline while the reader of
 * `save -` is slow): one line naming the database, never "Unexpected error" with the driver's words.
 */

const newHome = homes();
const run = postgresAvailable() ? describe : describe.skip;

run('snapshot save when PostgreSQL ends its connection mid-read', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  /** The sessions of the test database whose application_name is `name`, with their state. */
  const sessions = async (name: string): Promise<string[]> => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      return (await client.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE application_name = $1', [name])).rows.map(
        (r) => r.state,
      );
    } finally {
      await client.end();
    }
  };

  test(
    'save - to a reader that stalls past CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: one line, exit 1, the password masked',
    async () => {
      const schema = freshSchema('snapcut');
      schemas.push(schema);
      const home = newHome();
      const env = { CARBON_DATABASE_URL: schema.url };
      expect((await carbon(['balance'], { home, env })).exitCode).toBe(0);
      // A journal of ~1.5 MB: far more than a pipe and the reader's buffer hold, so the save waits on its reader mid-table.
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(
        `INSERT INTO "${schema.schema}".journal (request_id, model_ms, real_ms, method, path, query, status, duration_us, replayed, instance, request_body, response_body)
         SELECT 'req_' || g, g, g, 'GET', '/v1/balance', '', 200, 1, 0, 'x', '', repeat('y', 200) FROM generate_series(1, 6000) g`,
      );
      await client.end();

      // Its connection named, so the test sees it (and only it) in pg_stat_activity.
      const name = `carbon-snapcut-${randomBytes(4).toString('hex')}`;
      const child = spawnCarbon(home, ['sandbox', 'snapshot', 'save', '-', '--with-journal'], {
        ...env,
        PGAPPNAME: name,
        CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '300',
      });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      // Nothing is read: the save fills the pipe and waits, its transaction open and idle.
      child.stdout!.pause();
      while (!(await sessions(name)).includes('idle in transaction')) await new Promise((r) => setTimeout(r, 50));
      // The server ends the session at its deadline; then the reader goes on.
      while ((await sessions(name)).length > 0) await new Promise((r) => setTimeout(r, 50));
      child.stdout!.resume();
      const { exitCode } = await child;

      expect(exitCode, stderr).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: PostgreSQL at postgres:\/\/[^ ]*:\*\*\*@[^ ]* cannot be reached right now/);
      expect(stderr).not.toMatch(/Unexpected error/);
    },
    limit(60_000),
  );
});
