import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';
import { limit } from '../support/load.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { openSandbox } from '../support/world.js';

/**
 * Several `carbon serve` instances on one PostgreSQL ledger: purchases through all of them at
 * once (some under one Idempotency-Key), one instance killed with SIGKILL mid-load, and the
 * ledger read straight from the database afterwards must be exact.
 */

const run = postgresAvailable() ? describe : describe.skip;

run('several carbon serve instances on one PostgreSQL', () => {
  let schema: TestSchema;
  let servers: ServerProcess[] = [];
  let key: string;

  beforeAll(async () => {
    schema = freshSchema('multi');
    const sandbox = await openSandbox({ kind: 'postgres', url: schema.url });
    await sandbox.topUp('test', 1_000_000);
    key = (await sandbox.defaultKey('test'))!;
    await sandbox.close();
    servers = await Promise.all([0, 1, 2].map(() => startServerProcess({ database: schema.url })));
  }, limit(60_000));

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL').catch(() => {})));
    await schema?.drop();
  });

  const buy = async (server: ServerProcess, idem: string, kg: number) => {
    try {
      const res = await fetch(`${server.url}/offsets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
        body: JSON.stringify({ kg }),
      });
      return {
        status: res.status,
        replayed: res.headers.get('idempotent-replayed') === 'true',
        body: (await res.json()) as { id?: string; amount_cents?: number },
      };
    } catch {
      return { status: 0, replayed: false, body: {} };
    }
  };

  test(
    'parallel buys through every instance, shared keys, one instance killed: nothing lost, nothing doubled',
    async () => {
      const [a, b, c] = servers as [ServerProcess, ServerProcess, ServerProcess];
      // The same key sent to three instances at the same moment makes one purchase (ten times over).
      for (let round = 0; round < 10; round++) {
        const key = round === 0 ? 'same-key' : `same-key-${round}`;
        const shared = await Promise.all([buy(a, key, 7), buy(b, key, 7), buy(c, key, 7)]);
        expect(shared.map((r) => r.status)).toEqual([201, 201, 201]);
        expect(new Set(shared.map((r) => r.body.id)).size).toBe(1);
        expect(shared.filter((r) => !r.replayed)).toHaveLength(1);
      }
      // A different body under that key is a 409 from any instance.
      expect((await buy(c, 'same-key', 8)).status).toBe(409);

      // 120 purchases spread over the three; c is killed with SIGKILL part-way.
      const results: Array<{ idem: string; kg: number; status: number; id?: string }> = [];
      const jobs: Promise<void>[] = [];
      for (let i = 0; i < 120; i++) {
        const server = servers[i % 3]!;
        const kg = 1 + (i % 5);
        const idem = `load-${i}`;
        jobs.push(
          buy(server, idem, kg).then(
            (r) => void results.push({ idem, kg, status: r.status, ...(r.body.id === undefined ? {} : { id: r.body.id }) }),
          ),
        );
        if (i === 60) jobs.push(c.stop('SIGKILL').then(() => undefined));
      }
      await Promise.all(jobs);

      // What was cut off is retried with its key through a live instance: bought at most once.
      for (const r of results.filter((x) => x.status !== 201)) {
        const again = await buy(a, r.idem, r.kg);
        expect(again.status).toBe(201);
        r.id = again.body.id;
      }

      const db = new pg.Client({ connectionString: schema.url.replace(/\?.*$/, ''), options: `-c search_path=${schema.schema}` });
      await db.connect();
      try {
        const offsets = (
          await db.query<{ id: string; kg: string; amount_cents: string }>('SELECT id, kg, amount_cents FROM offsets WHERE livemode = 0')
        ).rows;
        // Exactly one offset per key: the ten shared ones and the 120.
        expect(offsets).toHaveLength(130);
        const ids = new Set(offsets.map((o) => o.id));
        for (const r of results) expect(ids.has(r.id!)).toBe(true);
        const keys = (await db.query<{ n: string }>('SELECT count(*) AS n FROM idempotency WHERE livemode = 0')).rows[0]!.n;
        expect(Number(keys)).toBe(130);
        // The ledger's invariant: the balance is top-ups less charges, to the cent.
        const sums = (
          await db.query<{ kind: string; s: string }>('SELECT kind, SUM(amount_cents) AS s FROM entries WHERE livemode = 0 GROUP BY kind')
        ).rows;
        const total = sums.reduce((t, r) => t + Number(r.s), 0);
        const balance = Number((await db.query<{ b: string }>('SELECT available_cents AS b FROM balances WHERE livemode = 0')).rows[0]!.b);
        expect(balance).toBe(total);
        const charged = offsets.reduce((t, o) => t + Number(o.amount_cents), 0);
        expect(balance).toBe(100_000 + 1_000_000 - charged);
        // created and the list's order agree across instances.
        const order = (await db.query<{ created_ms: string }>('SELECT created_ms FROM offsets WHERE livemode = 0 ORDER BY seq')).rows.map(
          (r) => Number(r.created_ms),
        );
        expect(order).toEqual([...order].sort((x, y) => x - y));
      } finally {
        await db.end();
      }
    },
    limit(60_000),
  );

  test(
    'a key revoked through one instance is refused by every instance at once; rate limits hold across instances',
    async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const sandbox = await openSandbox({ kind: 'postgres', url: schema.url });
      try {
        const made = await sandbox.createKey('test', 'read_only');
        const get = (server: ServerProcess, path: string, k = made.secret) =>
          fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${k}` } });
        expect((await get(a, '/balance')).status).toBe(200);
        expect((await get(b, '/balance')).status).toBe(200);
        await sandbox.revokeKey(made.id);
        expect((await get(a, '/balance')).status).toBe(401);
        expect((await get(b, '/balance')).status).toBe(401);

        await sandbox.setRateLimit(4, 60_000);
        const statuses = [];
        for (let i = 0; i < 8; i++) statuses.push((await get(i % 2 === 0 ? a : b, '/impact', key)).status);
        // Four requests a minute for the key, counted across both instances: not four each.
        expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
        // A new setting counts afresh on every instance: the requests above are not counted against it.
        await sandbox.setRateLimit(3, 60_000);
        const again = [];
        for (let i = 0; i < 4; i++) again.push((await get(i % 2 === 0 ? a : b, '/impact', key)).status);
        expect(again).toEqual([200, 200, 200, 429]);
        await sandbox.setRateLimit(null);
      } finally {
        await sandbox.close();
      }
    },
    limit(30_000),
  );

  test('GET /healthz answers 200 while the database answers', async () => {
    const res = await fetch(`${servers[0]!.origin}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', store: 'postgres' });
  });
});
