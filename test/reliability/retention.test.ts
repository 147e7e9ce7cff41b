/**
 * What the sandbox keeps, and for how long, through the binary: an Idempotency-Key is honoured
 * for the life of the ledger (the spec gives it no expiry); offsets, balances, keys and account settings are kept through
 * restarts (a killed server included) and any passage of time, until `carbon sandbox reset`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  cleanupHomes,
  http,
  printedOffsetId,
  provision,
  readLedger,
  requireBuilt,
  runCli,
  sandboxKeys,
  tempHome,
} from '../support/children.js';
import { serve } from '../support/cli.js';
import { limit } from '../support/load.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

describe('what the sandbox keeps', () => {
  test(
    'an Idempotency-Key, and everything else, until `carbon sandbox reset`',
    async () => {
      const home = tempHome();
      const keys = await provision(home);
      const buy = async (idem: string) => {
        const r = await runCli(home, ['buy', '--kg', '5', '--idempotency-key', idem, '--json']);
        expect(r.code, r.stderr).toBe(0);
        return printedOffsetId(r.stdout)!;
      };
      const ok = async (args: string[]) => {
        const r = await runCli(home, args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        return r.stdout;
      };
      const first = await buy('order-42');
      await ok(['sandbox', 'rate', '5000']);

      // Through a server killed with SIGKILL and a fresh one: the purchase, the key and the settings remain.
      const killed = await serve(home);
      await killed.kill();
      const server = await serve(home);
      try {
        const replay = await http(`${server.url}/offsets`, { key: keys.test, idem: 'order-42', body: '{"kg":5}' });
        expect([replay.status, (replay.json as { id: string }).id, replay.headers['idempotent-replayed']]).toEqual([201, first, 'true']);
      } finally {
        await server.stop();
      }

      // Two days later (a CI job re-run) the key still names that purchase and buys nothing.
      await ok(['sandbox', 'clock', 'advance', '2d']);
      expect(await buy('order-42')).toBe(first);
      const second = await buy('order-43');
      expect(second).not.toBe(first);

      // A year on, nothing else has gone: both offsets (placed by now), the balance, the keys, the rate.
      await ok(['sandbox', 'clock', 'advance', '365d']);
      const shown = JSON.parse(await ok(['show', first, '--json'])) as { status: string };
      expect(shown.status).toBe('placed');
      const ledger = readLedger(home);
      expect(ledger.problems).toEqual([]);
      expect(ledger.offsets.map((o) => o.id)).toEqual([first, second]);
      expect(ledger.balances[0]).toBe(100_000 - 20 - 25);
      const balance = await runCli(home, ['balance', '--json'], { env: { CARBON_API_KEY: keys.test } });
      expect(JSON.parse(balance.stdout)).toMatchObject({ available_cents: 100_000 - 45, rate_millicents_per_kg: 5000 });

      // Reset: everything goes, the old keys stop working, and the Idempotency-Key is forgotten.
      await ok(['sandbox', 'reset', '--yes']);
      const after = readLedger(home);
      expect(after.offsets).toEqual([]);
      expect(after.balances).toEqual({ 0: 100_000, 1: 0 });
      // The old keys are refused by the API (401); the local engine, given one, says it is not a
      // key of its sandbox and uses its own (a key meant for elsewhere does not stop local runs).
      const served = await serve(home);
      try {
        const old = await http(`${served.url}/balance`, { key: keys.test });
        expect([old.status, (old.json as { error: { code: string } }).error.code]).toEqual([401, 'api_key_invalid']);
      } finally {
        await served.stop();
      }
      const local = await runCli(home, ['balance', '--json'], { env: { CARBON_API_KEY: keys.test } });
      expect(local.code).toBe(0);
      expect(local.stderr).toContain('CARBON_API_KEY is not a key of the local sandbox');
      const fresh = sandboxKeys(home);
      expect([fresh.test, fresh.live, fresh.readOnly].some((k) => keys.all.includes(k))).toBe(false);
      const third = await buy('order-42');
      expect([first, second]).not.toContain(third);
      expect(readLedger(home).offsets.map((o) => o.id)).toEqual([third]);
    },
    limit(60_000),
  );
});
