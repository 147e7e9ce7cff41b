import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { StoreTarget } from '../../src/store/open.js';
import { cleanupHomes, dataDir, http, ledgerPath, requireBuilt, rng, runCli, tempHome } from '../support/children.js';
import { type Served, serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';
import { type LedgerRows, postgresRows, sqliteRows } from '../support/ledger-check.js';
import { limit } from '../support/load.js';
import { openSandbox } from '../support/world.js';

/**
 * The port's promise, raced: conflicting writes started together from separate processes (`carbon
 * sandbox …` runs) and through two `carbon serve` instances on one ledger, many times, on each
 * store. After every round the ledger is read straight from its database and must add up as some
 * serial order of the same writes would have left it (test/support/ledger-check.ts).
 */

requireBuilt();
afterAll(cleanupHomes);

interface Ledger {
  home: string;
  env: Record<string, string>;
  target: StoreTarget;
  /** The ledger's rows, read straight from its database. */
  rows(): Promise<LedgerRows>;
  drop(): Promise<void>;
}

const problems = async (ledger: Ledger): Promise<string[]> => (await ledger.rows()).problems;

function sqliteLedger(): Ledger {
  const home = tempHome('carbon-race-');
  return {
    home,
    env: {},
    target: { kind: 'sqlite', dir: dataDir(home) },
    rows: async () => sqliteRows(ledgerPath(home)),
    drop: async () => {},
  };
}

function postgresLedger(): Ledger {
  const schema: TestSchema = freshSchema('race');
  return {
    home: tempHome('carbon-race-'),
    env: { CARBON_DATABASE_URL: schema.url },
    target: { kind: 'postgres', url: schema.url },
    rows: () => postgresRows(schema.url),
    drop: () => schema.drop(),
  };
}

const stores: Array<[string, () => Ledger]> = [['SQLite', sqliteLedger]];
if (postgresAvailable()) stores.push(['PostgreSQL', postgresLedger]);

describe.each(stores)('conflicting writes raced on %s', (_name, make) => {
  let ledger: Ledger;
  let servers: Served[] = [];
  let liveKey: string;
  let testKey: string;

  /** `carbon sandbox …` in a process of its own, on this ledger. */
  const sandboxCli = (args: string[]) => runCli(ledger.home, ['sandbox', ...args], { env: ledger.env, timeoutMs: limit(60_000) });

  const buy = async (server: Served, key: string, body: Record<string, unknown>, idem: string = randomUUID()) =>
    http(`${server.url}/offsets`, { key, idem, body: JSON.stringify(body) });

  beforeAll(async () => {
    ledger = make();
    const sandbox = await openSandbox(ledger.target);
    try {
      await sandbox.topUp('live', 10_000_000);
      // Every live purchase waits for review, so review, failure and the clock can race over it.
      await sandbox.setReviewLimit(1);
      liveKey = (await sandbox.defaultKey('live'))!;
      testKey = (await sandbox.defaultKey('test'))!;
    } finally {
      await sandbox.close();
    }
    servers = await Promise.all([serve(ledger.home, [], ledger.env), serve(ledger.home, [], ledger.env)]);
  }, limit(60_000));

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await ledger?.drop();
  });

  /** Offsets bought through both instances, each answered 201. */
  const offsets = async (key: string, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const r = await buy(servers[i % 2]!, key, { kg: 10 + i });
      expect(r.status, r.text).toBe(201);
      ids.push((r.json as { id: string }).id);
    }
    return ids;
  };

  test(
    'review, failure, the clock, top-ups and purchases under one Idempotency-Key, raced in pairs: the ledger adds up after every round',
    async () => {
      const random = rng();
      const PAIRS: Array<[string[], string[]]> = [
        [['fail'], ['review', 'reject']],
        [['fail'], ['review', 'approve']],
        [
          ['review', 'approve'],
          ['review', 'reject'],
        ],
        [['fail'], ['fail']],
        [
          ['review', 'reject'],
          ['review', 'reject'],
        ],
        [
          ['review', 'approve'],
          ['review', 'approve'],
        ],
      ];
      for (let round = 0; round < 3; round++) {
        const live = await offsets(liveKey, 8);
        const test = await offsets(testKey, 4);
        const jobs: Array<Promise<unknown>> = [];
        // Each live offset: two sandbox writes that both want to end it, in two processes at once.
        for (const id of live) {
          const [a, b] = PAIRS[Math.floor(random() * PAIRS.length)]!;
          jobs.push(sandboxCli([...a, id]), sandboxCli([...b, id]));
        }
        // Test offsets: failed while the clock moves past their placement.
        for (const id of test) jobs.push(sandboxCli(['fail', id]));
        jobs.push(sandboxCli(['clock', 'advance', '1m']));
        // One Idempotency-Key sent to both instances at once, and a top-up among the purchases.
        const idem = `round-${round}-${randomUUID()}`;
        const twins = Promise.all([buy(servers[0]!, testKey, { kg: 7 }, idem), buy(servers[1]!, testKey, { kg: 7 }, idem)]);
        jobs.push(twins, sandboxCli(['topup', '250', '--live']), buy(servers[round % 2]!, liveKey, { kg: 3 }));
        await Promise.all(jobs);

        const [x, y] = await twins;
        expect([x.status, y.status]).toEqual([201, 201]);
        expect((x.json as { id: string }).id).toBe((y.json as { id: string }).id);
        expect(await problems(ledger), `round ${round}`).toEqual([]);
      }
    },
    limit(240_000),
  );

  test(
    'a key revoked while purchases with it run on both instances: refused by both from then on, and the ledger adds up',
    async () => {
      const sandbox = await openSandbox(ledger.target);
      const key = await sandbox.createKey('test', 'purchase').finally(() => sandbox.close());
      const buying = Array.from({ length: 30 }, (_, i) => buy(servers[i % 2]!, key.secret, { kg: 1 }));
      const revoked = await sandboxCli(['keys', 'revoke', key.id]);
      const answers = await Promise.all(buying);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(
        answers.every((r) => r.status === 201 || r.status === 401),
        answers.map((r) => r.status).join(' '),
      ).toBe(true);
      for (const server of servers) expect((await buy(server, key.secret, { kg: 1 })).status).toBe(401);
      expect(await problems(ledger)).toEqual([]);
    },
    limit(120_000),
  );

  test(
    'the one-time login link raced by 30 requests through both instances opens one session',
    async () => {
      const sandbox = await openSandbox(ledger.target);
      const token = await sandbox.pages.newLoginToken(Date.now()).finally(() => sandbox.close());
      const tries = await Promise.all(
        Array.from({ length: 30 }, (_, i) => fetch(`${servers[i % 2]!.origin}/login?token=${token}`, { redirect: 'manual' })),
      );
      const sessions = tries.filter((r) => r.status === 303 && (r.headers.get('set-cookie') ?? '').includes('carbon_session='));
      expect(sessions).toHaveLength(1);
      expect(tries.filter((r) => r.status !== 303).every((r) => r.status === 401)).toBe(true);
    },
    limit(60_000),
  );

  test(
    'sandbox reset under purchase load: never a deadlock or a 500, and no purchase with an old key lands in the new ledger',
    async () => {
      for (let round = 0; round < 3; round++) {
        const sandbox = await openSandbox(ledger.target);
        const oldKey = (await sandbox.defaultKey('test').finally(() => sandbox.close()))!;
        let stop = false;
        const statuses: number[] = [];
        const load = Array.from({ length: 6 }, async (_, c) => {
          while (!stop) statuses.push((await buy(servers[c % 2]!, oldKey, { kg: 1 })).status);
        });
        const reset = await sandboxCli(['reset', '--yes']);
        stop = true;
        await Promise.all(load);
        expect(reset.code, reset.stderr).toBe(0);
        expect(
          statuses.filter((s) => s !== 201 && s !== 401),
          statuses.join(' '),
        ).toEqual([]);
        // Nothing was bought with the new keys: the new ledger holds no offset at all.
        const rows = await ledger.rows();
        expect(rows.offsets, `round ${round}`).toEqual([]);
        expect(rows.problems).toEqual([]);
      }
      // The instances go on with the new keys.
      const sandbox = await openSandbox(ledger.target);
      liveKey = (await sandbox.defaultKey('live'))!;
      testKey = (await sandbox.defaultKey('test'))!;
      await sandbox.setReviewLimit(1);
      await sandbox.topUp('live', 10_000_000);
      await sandbox.close();
      for (const server of servers) expect((await buy(server, testKey, { kg: 1 })).status).toBe(201);
    },
    limit(180_000),
  );
});
