/**
 * Same Idempotency-Key, many callers at once: over HTTP against two server processes sharing one
 * ledger (so the race is between processes, not just requests on one event loop), and as
 * `carbon buy --idempotency-key` processes on the local engine.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { cleanupHomes, http, printedError, provision, readLedger, requireBuilt, runCli, tempHome } from '../support/children.js';
import { type Served, serve } from '../support/cli.js';
import { limit } from '../support/load.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

const CALLERS = 20;

describe('one Idempotency-Key, 20 simultaneous callers', () => {
  let home: string;
  let key: string;
  let servers: Served[] = [];
  beforeAll(async () => {
    home = tempHome();
    key = (await provision(home)).test;
    servers = await Promise.all([serve(home), serve(home)]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  /** Fires all the posts at once, alternating between the two servers. */
  const fire = (idem: string, bodies: string[]) =>
    Promise.all(bodies.map((body, i) => http(`${servers[i % servers.length]!.url}/offsets`, { key, idem, body })));

  test('the same body: one offset, one charge, every caller gets that offset, all but one flagged as replays', async () => {
    const before = readLedger(home);
    const responses = await fire(
      'same-key-same-body',
      Array.from({ length: CALLERS }, () => JSON.stringify({ kg: 123, reference: 'po-1' })),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(CALLERS).fill(201));
    const ids = new Set(responses.map((r) => (r.json as { id: string }).id));
    expect(ids.size).toBe(1);
    const flags = responses.map((r) => r.headers['idempotent-replayed']);
    expect(flags.filter((f) => f === undefined)).toHaveLength(1);
    expect(flags.filter((f) => f === 'true')).toHaveLength(CALLERS - 1);
    // Every response is the same offset, field for field (the one created first), in one of the two
    // states it has had: a replay shows the offset as it is now, and on a slow machine the burst can
    // outlast the 3 s to its placement.
    const first = responses.find((r) => r.headers['idempotent-replayed'] === undefined)!.json as Offset;
    const placed = { ...first, status: 'placed', placed: new Date(Date.parse(first.created) + 3_000).toISOString() };
    for (const r of responses) expect([first, placed]).toContainEqual(r.json);

    const after = readLedger(home);
    expect(after.problems).toEqual([]);
    expect(after.offsets.length - before.offsets.length).toBe(1);
    expect(after.charges[0]! - before.charges[0]!).toBe(123 * 4);
    expect(after.balances[0]).toBe(before.balances[0]! - 123 * 4);
    expect(after.byId.get([...ids][0]!)).toMatchObject({ kg: 123, reference: 'po-1' });
  });

  test('different bodies: exactly one wins with 201, every other caller gets 409 idempotency_key_reused', async () => {
    const before = readLedger(home);
    const responses = await fire(
      'same-key-other-bodies',
      Array.from({ length: CALLERS }, (_, i) => JSON.stringify({ kg: i + 1 })),
    );

    const winners = responses.filter((r) => r.status === 201);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.headers['idempotent-replayed']).toBeUndefined();
    for (const r of responses.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(409);
      expect((r.json as { error: { code: string } }).error.code).toBe('idempotency_key_reused');
    }
    const winner = winners[0]!.json as { id: string; kg: number };
    // The winner's body is the one that was charged.
    const winnerIndex = responses.indexOf(winners[0]!);
    expect(winner.kg).toBe(winnerIndex + 1);

    const after = readLedger(home);
    expect(after.problems).toEqual([]);
    expect(after.offsets.length - before.offsets.length).toBe(1);
    expect(after.byId.get(winner.id)).toMatchObject({ kg: winner.kg });
    expect(after.charges[0]! - before.charges[0]!).toBe(winner.kg * 4);
  });
});

describe('one --idempotency-key, 20 `carbon buy` processes at once (local engine)', () => {
  const cliLimit = { timeoutMs: limit(30_000) };
  test(
    'the same purchase: every process prints the one offset; all but one say it was already bought',
    async () => {
      const home = tempHome();
      await provision(home);
      const before = readLedger(home);
      const results = await Promise.all(
        Array.from({ length: CALLERS }, () => runCli(home, ['buy', '--kg', '77', '--idempotency-key', 'cli-same-key'], cliLimit)),
      );
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const ids = results.map((r) => /^id\t(\S+)$/m.exec(r.stdout)?.[1]);
      expect(new Set(ids).size).toBe(1);
      expect(ids[0]).toMatch(/^off_/);
      expect(results.filter((r) => r.stderr.includes('Already bought with this idempotency key'))).toHaveLength(CALLERS - 1);
      expect(results.filter((r) => /Bought .* \(test mode, sandbox: not a real purchase\)/.test(r.stderr))).toHaveLength(1);

      const after = readLedger(home);
      expect(after.problems).toEqual([]);
      expect(after.offsets.length - before.offsets.length).toBe(1);
      expect(after.balances[0]).toBe(before.balances[0]! - 77 * 4);
    },
    limit(60_000),
  );

  test(
    'different purchases under one key: one exits 0, the others exit 6 and are charged nothing',
    async () => {
      const home = tempHome();
      await provision(home);
      const buyKg = (kg: number) => runCli(home, ['buy', '--kg', String(kg), '--idempotency-key', 'cli-other', '--json'], cliLimit);
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => buyKg(i + 1)));
      const ok = results.filter((r) => r.code === 0);
      expect(ok).toHaveLength(1);
      for (const r of results.filter((x) => x.code !== 0)) {
        expect(r.code, r.stderr).toBe(6);
        expect(printedError(r.stderr)?.code).toBe('idempotency_key_reused');
      }
      const winner = JSON.parse(ok[0]!.stdout) as { id: string; kg: number };
      const after = readLedger(home);
      expect(after.problems).toEqual([]);
      expect(after.offsets.map((o) => o.id)).toEqual([winner.id]);
      expect(after.balances[0]).toBe(100_000 - winner.kg * 4);
    },
    limit(60_000),
  );
});
