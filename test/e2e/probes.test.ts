import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { homes, serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { limit } from '../support/load.js';

/**
 * Kubernetes' probes on `carbon serve` (docs/deploy.md, "The probes"): `/livez` says the process
 * answers and never asks the ledger, so a liveness probe does not restart instances that are
 * healthy while their database is busy or away; `/readyz` (and `/healthz`, for balancers) says
 * the ledger answers too. Before, only /healthz existed: a liveness probe on it restarted every
 * instance whose pool had no connection free.
 */

const newHome = homes();

async function probe(origin: string, path: string): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${origin}${path}`);
  return { status: res.status, body: await res.json(), ms: performance.now() - started };
}

describe('the probes on SQLite', () => {
  test('/livez, /readyz and /healthz answer 200 while the ledger answers; the JSON index lists them', async () => {
    const server = await serve(newHome());
    try {
      for (const path of ['/livez', '/readyz', '/healthz']) {
        const r = await probe(server.origin, path);
        expect([path, r.status, r.body]).toEqual([path, 200, { status: 'ok', store: 'sqlite' }]);
      }
      const index = (await (await fetch(server.origin)).json()) as { endpoints: string[] };
      expect(index.endpoints).toEqual(expect.arrayContaining(['GET /livez', 'GET /readyz', 'GET /healthz']));
    } finally {
      await server.stop();
    }
  });
});

const run = postgresAvailable() ? describe : describe.skip;

run('the probes while PostgreSQL has no connection free for the instance', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  test(
    '/livez answers 200 at once; /readyz and /healthz 503, and 200 once the connection is free',
    async () => {
      const schema = freshSchema('probe');
      schemas.push(schema);
      // One connection, and no statement deadline: a purchase waiting on a lock keeps it as long as the lock is held.
      const server = await serve(newHome(), ['--database', schema.url, '--show-keys'], {
        CARBON_PG_POOL: '1',
        CARBON_PG_STATEMENT_TIMEOUT_MS: '0',
      });
      const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE "${schema.schema}".account IN ACCESS EXCLUSIVE MODE`);
        const purchase = fetch(`${server.url}/offsets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.ready.test_key}`, 'idempotency-key': 'probe-1', 'content-type': 'application/json' },
          body: JSON.stringify({ kg: 5 }),
        });
        // The purchase holds the pool's one connection, waiting for the lock: the ledger does not answer.
        let ready = await probe(server.origin, '/readyz');
        for (let i = 0; i < 20 && ready.status === 200; i++) ready = await probe(server.origin, '/readyz');
        expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', store: 'postgres' } });
        expect((await probe(server.origin, '/healthz')).status).toBe(503);
        const live = await probe(server.origin, '/livez');
        expect([live.status, live.body]).toEqual([200, { status: 'ok', store: 'postgres' }]);
        expect(live.ms).toBeLessThan(limit(500));
        await holder.query('COMMIT');
        const bought = await purchase;
        expect(bought.status, await bought.clone().text()).toBe(201);
        expect((await probe(server.origin, '/readyz')).status).toBe(200);
      } finally {
        await holder.end();
        expect((await server.stop('SIGTERM')).exitCode).toBe(0);
      }
    },
    limit(30_000),
  );
});
