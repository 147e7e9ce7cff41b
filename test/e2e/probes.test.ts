import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { homes, serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { freezingProxy } from '../support/freezing-proxy.js';
import { limit } from '../support/load.js';

/**
 * Kubernetes' probes on `carbon serve` (docs/deploy.md, "The probes"): `/livez` says the process
 * answers and never asks the ledger, so a liveness probe does not restart instances that are
 * healthy while their database is busy or away; `/readyz` (and `/healthz`, for balancers) says
 * the ledger answers too. Before, only /healthz existed: a liveness probe on it restarted every
 * instance whose pool had no connection free. The readiness check has a connection of its own: a
 * busy instance (every pooled connection taken by requests that are merely waiting) is ready.
 */

const newHome = homes();

async function probe(origin: string, path: string): Promise<{ status: number; body: unknown; ms: number; retryAfter: string | null }> {
  const started = performance.now();
  const res = await fetch(`${origin}${path}`);
  return { status: res.status, body: await res.json(), ms: performance.now() - started, retryAfter: res.headers.get('retry-after') };
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

/** /readyz and /healthz, each a 503 on PostgreSQL saying `reason`, with `retryAfter` (null: none); their probes. */
async function unready(origin: string, reason: string, retryAfter: string | null): Promise<Array<{ ms: number }>> {
  const probes = [];
  for (const path of ['/readyz', '/healthz']) {
    const r = await probe(origin, path);
    expect([path, r.status, r.body, r.retryAfter]).toEqual([path, 503, { status: 'unavailable', store: 'postgres', reason }, retryAfter]);
    probes.push(r);
  }
  return probes;
}

const run = postgresAvailable() ? describe : describe.skip;

run('the probes on PostgreSQL', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  test(
    'every pooled connection busy with a request waiting on a lock: /livez, /readyz and /healthz answer 200 at once (the ledger answers); the request goes on once the lock goes',
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
        // The purchase holds the pool's one connection, waiting for the lock.
        const waiting = async () =>
          (
            await holder.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = $1::regclass', [
              `"${schema.schema}".account`,
            ])
          ).rows[0]!.n;
        while ((await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
        // Before: 503 after 0.8 s, the check waiting for the pool's connection: every busy instance went unready at once.
        for (const path of ['/readyz', '/healthz', '/livez']) {
          const r = await probe(server.origin, path);
          expect([path, r.status, r.body]).toEqual([path, 200, { status: 'ok', store: 'postgres' }]);
          expect(r.ms).toBeLessThan(limit(500));
        }
        expect(await waiting()).toBe(1);
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

  test(
    "the ledger's rights taken from carbon's user: /readyz and /healthz 503 saying so, without Retry-After (a person mends it), as the API's requests answer; 200 once they are given back",
    async () => {
      const schema = freshSchema('probe');
      schemas.push(schema);
      const server = await serve(newHome(), ['--database', schema.url, '--show-keys']);
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        expect((await probe(server.origin, '/healthz')).status).toBe(200);
        await admin.query(`REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA "${schema.schema}" FROM CURRENT_USER`);
        // Before: { status: 'unavailable', store } with Retry-After: 1, as a stall.
        await unready(server.origin, 'ledger_unusable', null);
        const bought = await fetch(`${server.url}/offsets`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${server.ready.test_key}`,
            'content-type': 'application/json',
            'idempotency-key': 'probe-rights-1',
          },
          body: '{"kg": 1}',
        });
        expect([bought.status, bought.headers.get('retry-after')]).toEqual([503, null]);
        await admin.query(`GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA "${schema.schema}" TO CURRENT_USER`);
        expect((await probe(server.origin, '/healthz')).status).toBe(200);
      } finally {
        await admin.end();
        expect((await server.stop('SIGTERM')).exitCode).toBe(0);
      }
    },
    limit(30_000),
  );

  test(
    'the database gone (its connections cut, new ones refused): /readyz and /healthz 503 within a second, /livez 200; 200 again once it is back',
    async () => {
      const schema = freshSchema('probe');
      schemas.push(schema);
      let proxy = await freezingProxy(new URL(schema.url));
      const port = new URL(proxy.url).port;
      const server = await serve(newHome(), ['--show-keys'], { CARBON_DATABASE_URL: proxy.url });
      try {
        // The check's own connection is made, and then cut: the process hears it, and lives on.
        expect((await probe(server.origin, '/readyz')).status).toBe(200);
        await proxy.close();
        // It passes by itself: said so, and to ask again in a second.
        for (const r of await unready(server.origin, 'no_answer', '1')) expect(r.ms).toBeLessThan(limit(1000));
        expect((await probe(server.origin, '/livez')).status).toBe(200);
        proxy = await freezingProxy(new URL(schema.url), Number(port));
        expect((await probe(server.origin, '/readyz')).status).toBe(200);
        expect(server.child.exitCode).toBeNull();
      } finally {
        await proxy.close();
        expect((await server.stop('SIGTERM')).exitCode).toBe(0);
      }
    },
    limit(30_000),
  );
});
