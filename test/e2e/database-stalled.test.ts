import { afterAll, describe, expect, test } from 'vitest';
import { homes, type Served, serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';
import { freezingProxy } from '../support/freezing-proxy.js';
import { limit } from '../support/load.js';

/**
 * `carbon serve` (the built binary) while its PostgreSQL does not answer: a TCP proxy between them
 * stops passing anything on, as a partition or a stopped server does (connections accepted, no
 * answer), with the deadlines' defaults unless a test says otherwise. The same with the cluster's
 * processes stopped (SIGSTOP), under load: test/reliability/postgres-faults.test.ts.
 */

const newHome = homes();
const run = postgresAvailable() ? describe : describe.skip;

run('carbon serve while PostgreSQL does not answer', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const done of cleanup.reverse()) await done();
  });

  /** A server on a fresh schema, reached through a proxy the test freezes and thaws. */
  const stallable = async (env: Record<string, string> = {}) => {
    const schema: TestSchema = freshSchema('stall');
    cleanup.push(() => schema.drop());
    const proxy = await freezingProxy(new URL(schema.url));
    cleanup.push(() => proxy.close());
    const server: Served = await serve(newHome(), ['--show-keys'], { CARBON_DATABASE_URL: proxy.url, ...env });
    cleanup.push(() => server.kill());
    return { schema, proxy, server };
  };

  /** GET /healthz: its status, body, Retry-After and how long it took (ms). */
  const probe = async (server: Served) => {
    const sent = performance.now();
    const res = await fetch(`${server.origin}/healthz`, { signal: AbortSignal.timeout(limit(30_000)) });
    const body = (await res.json()) as unknown;
    return { status: res.status, body, retryAfter: res.headers.get('retry-after'), took: performance.now() - sent };
  };

  test(
    '/healthz answers 503 within a second (a probe with a 1 s timeout gets an answer), and 200 again once the database answers, with no restart',
    async () => {
      const { proxy, server } = await stallable();
      expect(await probe(server)).toMatchObject({ status: 200, body: { status: 'ok', store: 'postgres' } });
      proxy.freeze();
      try {
        // A probe at a time, as a kubelet sends them, then several at once (balancers of each instance).
        const probes = [await probe(server), await probe(server), ...(await Promise.all([1, 2, 3].map(() => probe(server))))];
        for (const p of probes) {
          expect(p).toMatchObject({ status: 503, body: { status: 'unavailable', store: 'postgres' }, retryAfter: '1' });
          // Before: 4.5 to 5 s, the statement and connect deadlines, so the probe timed out instead.
          expect(p.took, 'the 503 came within a second').toBeLessThan(limit(1000));
        }
      } finally {
        proxy.thaw();
      }
      // The check under way when the database went on answers: the next probe says 200 at once.
      const back = await probe(server);
      expect(back).toMatchObject({ status: 200, body: { status: 'ok', store: 'postgres' } });
      expect(back.took).toBeLessThan(limit(1000));
      expect(server.child.exitCode).toBeNull();
      expect(server.stderr()).not.toMatch(/ 500 /);
    },
    limit(60_000),
  );
});
