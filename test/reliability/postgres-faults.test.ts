import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanupHomes, type HttpResult, http, requireBuilt, runCli, STACK_FRAME, sleep, tempHome } from '../support/children.js';
import { type Served, serve } from '../support/cli.js';
import { postgresRows } from '../support/ledger-check.js';
import { limit } from '../support/load.js';
import { throwawayPostgres } from '../support/postgres-cluster.js';
import { openSandbox } from '../support/world.js';

/**
 * Faults under purchase load on a shared PostgreSQL ledger: the database restarted, and an
 * instance killed with SIGKILL. A cluster of this file's own (a restart would cut every other
 * suite's connections): PostgreSQL's server binaries must be installed, as they are in CI.
 * Requests in flight get 503 with Retry-After (never a 500, never a crash); the client's retries,
 * under their Idempotency-Keys, finish them: nothing lost, nothing doubled.
 */

requireBuilt();
afterAll(cleanupHomes);

const root = mkdtempSync(join(tmpdir(), 'carbon-pgfault-'));
const cluster = await throwawayPostgres(root);
if (cluster === null && process.env.CI === 'true')
  throw new Error('the PostgreSQL fault suite could not start a cluster of its own (the line above says why)');
if (cluster === null) process.stderr.write('PostgreSQL fault suite skipped: no PostgreSQL server binaries in /usr/lib/postgresql.\n');
const run = cluster === null ? describe.skip : describe;
afterAll(() => {
  cluster?.stop();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Clients as stripe-node is one: each purchase under an Idempotency-Key of its own, sent again
 * until a 201 through whichever instance of `servers()` comes next (after a 503, its Retry-After
 * in tenths of a second). Every answer goes into the caller's `seen`, made by `note` from the
 * answer, the instance's index and when it was sent.
 */
function purchasers<T>(
  servers: () => readonly Served[],
  key: string,
  options: { attempts: number; timeoutMs: number },
  note: (r: HttpResult, server: number, sent: number) => T,
) {
  const buy = async (idem: string, kg: number, seen: T[]): Promise<HttpResult> => {
    for (let attempt = 0; attempt < options.attempts; attempt++) {
      const server = (attempt + kg) % servers().length;
      const sent = performance.now();
      const r = await http(`${servers()[server]!.url}/offsets`, { key, idem, body: JSON.stringify({ kg }), timeoutMs: options.timeoutMs });
      seen.push(note(r, server, sent));
      if (r.status === 201) return r;
      await sleep(r.status === 503 ? Number(r.headers['retry-after'] ?? 1) * 100 : 50);
    }
    throw new Error(`no answer for ${idem}`);
  };
  /** `clients` buying under fresh keys until `done()`; resolves to the keys they used. */
  const load = (clients: number, seen: T[], done: () => boolean) => {
    const keys: string[] = [];
    const running = Array.from({ length: clients }, async () => {
      while (!done()) {
        const k = randomUUID();
        keys.push(k);
        await buy(k, 1 + (keys.length % 5), seen);
      }
    });
    return Promise.all(running).then(() => keys);
  };
  return { buy, load };
}

/** Nothing answered but 201 and 503, and every 503 a service_unavailable with a Retry-After in seconds. */
function expectCreatedOrUnavailable(answers: readonly HttpResult[]): void {
  expect(answers.filter((r) => r.status !== 201 && r.status !== 503).map((r) => `${r.status} ${r.text}`)).toEqual([]);
  for (const r of answers.filter((a) => a.status === 503)) {
    expect(r.headers['retry-after']).toMatch(/^\d+$/);
    expect((r.json as { error: { code: string } }).error.code).toBe('service_unavailable');
  }
}

/** The ledger at `url` adds up, every Idempotency-Key in `used` bought, and `offsets` offsets in all. */
async function expectEachBoughtOnce(url: string, used: readonly string[], offsets: number): Promise<void> {
  const rows = await postgresRows(url);
  expect(rows.problems).toEqual([]);
  const byKey = new Map(rows.idempotency.map((k) => [k.key, k.offset_id]));
  for (const k of used) expect(byKey.has(k), k).toBe(true);
  expect(rows.offsets.length).toBe(offsets);
}

run('PostgreSQL faults under purchase load', () => {
  const url = `${cluster?.url}?schema=faults`;
  const home = tempHome('carbon-pgfault-');
  const env = { CARBON_DATABASE_URL: url };
  let servers: Served[] = [];
  let key: string;

  beforeAll(async () => {
    const sandbox = await openSandbox({ kind: 'postgres', url });
    await sandbox.topUp('test', 100_000_000);
    key = (await sandbox.defaultKey('test'))!;
    await sandbox.close();
    servers = await Promise.all([serve(home, [], env), serve(home, [], env)]);
  }, limit(60_000));

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
  });

  /** Each answer as it came (the instance a purchase goes to turns with each attempt; a client waits up to 10 s). */
  const load = (clients: number, seen: HttpResult[], done: () => boolean) =>
    purchasers(
      () => servers,
      key,
      { attempts: 200, timeoutMs: limit(10_000) },
      (r) => r,
    ).load(clients, seen, done);

  test(
    'PostgreSQL restarted under load: every instance stays up and answers 503 with Retry-After meanwhile; every purchase lands once',
    async () => {
      // The schema is the describe's: whatever the test beside it bought (in either order) is there.
      const before = (await postgresRows(url)).offsets.length;
      const seen: HttpResult[] = [];
      let restarted = false;
      const keys = load(8, seen, () => restarted && seen.filter((r) => r.status === 201).length > 20);
      // A CLI purchase through the remote engine, with its own retries, across the restart too.
      const cliEnv = { CARBON_BASE_URL: servers[0]!.url, CARBON_API_KEY: key, CARBON_MAX_RETRIES: '10' };
      const cli = runCli(home, ['buy', '--kg', '9', '--json'], { env: cliEnv, timeoutMs: limit(90_000) });
      while (seen.length < 40) await sleep(10);
      // Immediate: the server terminates every connection (57P01), then comes back; the clients go on sending.
      await cluster!.restart();
      restarted = true;
      const used = await keys;
      const bought = await cli;
      expect(bought.code, bought.stderr).toBe(0);

      for (const server of servers) expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
      expectCreatedOrUnavailable(seen);
      // The clients were sending throughout the restart.
      expect(seen.filter((r) => r.status === 503).length, 'requests met the restart').toBeGreaterThan(0);
      // Each client purchase once, and the CLI's.
      await expectEachBoughtOnce(url, used, before + used.length + 1);
    },
    limit(180_000),
  );

  test(
    'an instance killed with SIGKILL under load: its requests are retried through the other, once each',
    async () => {
      const before = (await postgresRows(url)).offsets.length;
      const seen: HttpResult[] = [];
      let killed = false;
      const keys = load(8, seen, () => killed && seen.filter((r) => r.status === 201).length > 60);
      while (seen.length < 40) await sleep(10);
      const victim = servers[1]!;
      servers = [servers[0]!];
      await victim.kill();
      killed = true;
      const used = await keys;
      // Cut off (0) or answered: nothing else, and never a 500.
      expect(seen.filter((r) => r.status !== 201 && r.status !== 0 && r.status !== 503).map((r) => `${r.status} ${r.text}`)).toEqual([]);
      const rows = await postgresRows(url);
      expect(rows.problems).toEqual([]);
      expect(rows.offsets.length - before).toBe(used.length);
    },
    limit(120_000),
  );
});

/** One answer, with which instance gave it, when it was sent and how long it took (ms). */
interface Timed {
  r: HttpResult;
  server: number;
  sent: number;
  took: number;
}

run('PostgreSQL killed or stopped under purchase load', () => {
  /** Two instances on a schema of the test's own, with the deadlines' defaults, and a test key with money. */
  const setUp = async (schema: string) => {
    const url = `${cluster?.url}?schema=${schema}`;
    const home = tempHome('carbon-pgstall-');
    const sandbox = await openSandbox({ kind: 'postgres', url });
    await sandbox.topUp('test', 100_000_000);
    const key = (await sandbox.defaultKey('test'))!;
    await sandbox.close();
    const env = { CARBON_DATABASE_URL: url };
    const servers = await Promise.all([serve(home, [], env), serve(home, [], env)]);
    /** Each answer timed, with the instance that gave it; the client waits up to 30 s, well past every deadline. */
    const { load } = purchasers(
      () => servers,
      key,
      { attempts: 2000, timeoutMs: limit(30_000) },
      (r, server, sent) => ({
        r,
        server,
        sent,
        took: performance.now() - sent,
      }),
    );
    /** Every purchase once, the money exact, both instances up, and nothing but 201 and 503 with Retry-After. */
    const check = async (seen: Timed[], used: string[]) => {
      for (const server of servers) expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
      expectCreatedOrUnavailable(seen.map((t) => t.r));
      await expectEachBoughtOnce(url, used, used.length);
    };
    return { url, home, servers, load, check, stop: () => Promise.all(servers.map((s) => s.kill())) };
  };

  /** Resolves once `ready()` holds; fails the test if it does not within `ms` (scaled for load). */
  const until = async (ready: () => boolean, ms: number, what: string) => {
    const end = performance.now() + limit(ms);
    while (!ready()) {
      if (performance.now() > end) throw new Error(`not within ${limit(ms)} ms: ${what}`);
      await sleep(20);
    }
  };

  test(
    'the postmaster killed with kill -9 under load: 503 with Retry-After until it is started again, never a 500; then every purchase lands once',
    async () => {
      const world = await setUp('killed');
      try {
        const seen: Timed[] = [];
        let startedAt = Number.POSITIVE_INFINITY;
        const keys = world.load(8, seen, () => seen.filter((t) => t.r.status === 201 && t.sent > startedAt).length > 20);
        await until(() => seen.length >= 40, 30_000, '40 answers before the kill');
        const killedAt = performance.now();
        cluster!.killPostmaster();
        await until(
          () => seen.filter((t) => t.sent > killedAt && t.r.status !== 201).length >= 16,
          30_000,
          'requests meet the dead server',
        );
        await cluster!.start();
        startedAt = performance.now();
        const used = await keys;
        expect(seen.filter((t) => t.r.status === 503).length, 'requests met the kill').toBeGreaterThan(0);
        await world.check(seen, used);
      } finally {
        await world.stop();
      }
    },
    limit(180_000),
  );

  test(
    'PostgreSQL stopped (SIGSTOP) under load: every request gets 503 with Retry-After within 10 s, a CLI command fails in one line; continued (SIGCONT), both instances serve again by themselves',
    async () => {
      const world = await setUp('stalled');
      try {
        const seen: Timed[] = [];
        let resumedAt = Number.POSITIVE_INFINITY;
        const served = (server: number) => seen.filter((t) => t.server === server && t.r.status === 201 && t.sent > resumedAt).length;
        const keys = world.load(8, seen, () => served(0) >= 10 && served(1) >= 10);
        await until(() => seen.length >= 40, 30_000, '40 answers before the stop');
        const stoppedAt = performance.now();
        cluster!.pause();
        let cli: Awaited<ReturnType<typeof runCli>> & { took: number };
        let health: Timed[];
        try {
          // The local engine on the stopped database: one line and exit 1, not a hang.
          const [ran, ...probes] = await Promise.all([
            (async () => {
              const started = performance.now();
              const r = await runCli(tempHome('carbon-pgstall-cli-'), ['balance'], {
                env: { CARBON_DATABASE_URL: world.url },
                timeoutMs: limit(60_000),
              });
              return { ...r, took: performance.now() - started };
            })(),
            ...world.servers.map(async (s, server) => {
              const sent = performance.now();
              const r = await http(`${s.origin}/healthz`, { timeoutMs: limit(30_000) });
              return { r, server, sent, took: performance.now() - sent };
            }),
          ]);
          cli = ran;
          health = probes;
          // Every client has met the stopped database twice: no request is left hanging.
          await until(() => seen.filter((t) => t.sent > stoppedAt && t.r.status === 503).length >= 16, 60_000, 'two 503s a client');
        } finally {
          resumedAt = performance.now();
          cluster!.resume();
        }
        const used = await keys;

        expect(cli.timedOut, cli.stderr).toBe(false);
        expect(cli.code, cli.stderr).toBe(1);
        expect(cli.stderr.trim().split('\n'), cli.stderr).toHaveLength(1);
        expect(cli.stderr).toMatch(/cannot be reached right now/);
        expect(cli.stderr).not.toMatch(STACK_FRAME);
        expect(cli.took, 'the CLI gave up within its connect deadline').toBeLessThan(limit(10_000));
        for (const probe of health) {
          expect(probe.r.status, probe.r.text).toBe(503);
          // Within a second: a Kubernetes probe (timeoutSeconds: 1) gets its 503, not a timeout.
          expect(probe.took).toBeLessThan(limit(1000));
        }
        // Each request sent while the database was stopped, and answered before it went on: a 503 within 10 s.
        const during = seen.filter((t) => t.sent > stoppedAt && t.sent + t.took < resumedAt);
        expect(during.length).toBeGreaterThanOrEqual(16);
        expect(during.filter((t) => t.r.status !== 503).map((t) => `${t.r.status} ${t.r.text}`)).toEqual([]);
        expect(Math.max(...during.map((t) => t.took)), 'the slowest 503').toBeLessThan(limit(10_000));
        // Nothing hung across the stop either: every request answered within 10 s of the stop, or of being sent.
        for (const t of seen.filter((t) => t.sent + t.took > stoppedAt && t.sent < resumedAt))
          expect(t.sent + t.took - Math.max(t.sent, stoppedAt), `${t.r.status} ${t.r.text}`).toBeLessThan(limit(10_000));
        await world.check(seen, used);
      } finally {
        await world.stop();
      }
    },
    limit(240_000),
  );
});
