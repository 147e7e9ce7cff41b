import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Mode } from '../../src/api/types.js';
import { Sandbox } from '../../src/service/sandbox.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { limit } from '../support/load.js';
import { openSandbox, T0, tempDir } from '../support/world.js';

/**
 * Several node processes buy from ONE data directory at the same instant while others top up
 * and refund. Afterwards the ledger must be exact. The children run the library bundled from
 * src/ with esbuild (into node_modules/.cache, so that pg resolves from the repo). Nothing here
 * waits on real time: the children start together when all are ready (files in a sync
 * directory), and the model's clock stands at T0 in every process, so the offsets the refunder
 * looks for stay processing however slowly a busy machine runs the test.
 */

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const worker = join(here, 'fixtures', 'ledger-worker.mjs');
const cacheDir = join(root, 'node_modules', '.cache', 'carbon-service-test');
const lib = join(cacheDir, `lib-${process.pid}.mjs`);
let dir: string;
let sync: string;

beforeAll(async () => {
  const { build } = await import('esbuild');
  mkdirSync(cacheDir, { recursive: true });
  await build({
    entryPoints: [join(root, 'src/index.ts')],
    outfile: lib,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: ['pg'],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    logLevel: 'error',
  });
  dir = tempDir('carbon-mp-');
  sync = tempDir('carbon-mp-sync-');
});

afterAll(() => {
  rmSync(lib, { force: true });
  for (const d of [dir, sync]) if (d) rmSync(d, { recursive: true, force: true });
});

interface BuyResult {
  idem: string;
  kg: number;
  status: number;
  replayed: boolean;
  body: {
    id?: string;
    amount_cents?: number;
    livemode?: boolean;
    error?: { code: string; balance_cents?: number; required_cents?: number };
  };
}

/** A deterministic spread of sizes: 1000 to 2000 kg, i.e. 4,000 to 8,000 cents each at the default rate. */
function sizes(seed: number, n: number): number[] {
  const out: number[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(1000 + (x % 1001));
  }
  return out;
}

/** Resolves once `names` have each left a file in `where`, or `gone` resolves; checking every 10 ms. */
async function allThere(where: string, names: string[], gone: Promise<unknown>): Promise<void> {
  let over = false;
  void gone.then(() => (over = true));
  while (!over && !names.every((n) => existsSync(join(where, n)))) await new Promise((r) => setTimeout(r, 10));
}

test('processes buying, topping up and refunding on one ledger at once leave it exact', { timeout: limit(60_000) }, async () => {
  const clock = () => T0;
  const setup = await openSandbox(dir, clock);
  const keys = { test: (await setup.defaultKey('test'))!, live: (await setup.defaultKey('live'))! };
  await setup.topUp('live', 30_000);
  const start = await setup.status();
  await setup.close();
  expect(start.balances).toEqual({ test: 100_000, live: 30_000 });

  const base = { CARBON_LIB: lib, DATA_DIR: dir, SYNC_DIR: sync, CLOCK_MS: String(T0) };
  const buyers = [
    { NAME: 'b1', ROLE: 'buyer', API_KEY: keys.test, MODE: 'test', SIZES: JSON.stringify(sizes(1, 25)) },
    { NAME: 'b2', ROLE: 'buyer', API_KEY: keys.test, MODE: 'test', SIZES: JSON.stringify(sizes(2, 25)) },
    { NAME: 'b3', ROLE: 'buyer', API_KEY: keys.test, MODE: 'test', SIZES: JSON.stringify(sizes(3, 25)) },
    { NAME: 'b4', ROLE: 'buyer', API_KEY: keys.live, MODE: 'live', SIZES: JSON.stringify(sizes(4, 10)) },
  ];
  const others = [
    { NAME: 'topper', ROLE: 'topper', API_KEY: keys.test, MODE: 'test', COUNT: '4', CENTS: '25000', GAP_MS: '2' },
    { NAME: 'failer', ROLE: 'failer', API_KEY: keys.test, MODE: 'test', COUNT: '6', GAP_MS: '3' },
  ];
  const children = [...buyers, ...others].map((env) =>
    execa('node', [worker], { env: { ...base, ...env }, reject: false, timeout: limit(45_000) }),
  );
  const exited = Promise.all(children);
  // Every child has opened the ledger: go. (A child that failed first ends the wait with its exit.)
  await allThere(
    sync,
    [...buyers, ...others].map((c) => `ready-${c.NAME}`),
    exited,
  );
  writeFileSync(join(sync, 'go'), '');
  await Promise.all(children.slice(0, buyers.length));
  writeFileSync(join(sync, 'stop'), '');
  const runs = await exited;
  for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
  const [b1, b2, b3, b4, topper, failer] = runs.map((r) => JSON.parse(r.stdout) as unknown[]);
  const byMode: Record<Mode, BuyResult[]> = {
    test: [...(b1 as BuyResult[]), ...(b2 as BuyResult[]), ...(b3 as BuyResult[])],
    live: b4 as BuyResult[],
  };
  const topups = (topper as { cents: number }[]).reduce((s, t) => s + t.cents, 0);
  const refunds = (failer as { id: string; amount_cents?: number; status?: string }[]).filter((f) => f.status === 'refunded');
  expect(topups).toBe(100_000);

  const store = SqliteStore.open(dir);
  const after = await Sandbox.over(store, clock);
  try {
    const db = store.db;
    for (const mode of ['test', 'live'] as const) {
      const results = byMode[mode];
      const lmode = mode === 'live' ? 1 : 0;
      const shared = results.filter((r) => r.idem === 'shared-across-processes');
      const own = results.filter((r) => r.idem !== 'shared-across-processes');

      // The shared Idempotency-Key made exactly one offset, however many processes sent it at once.
      expect(shared.every((r) => r.status === 201)).toBe(true);
      expect(new Set(shared.map((r) => r.body.id)).size).toBe(1);
      expect(shared.filter((r) => !r.replayed)).toHaveLength(1);

      // Every failure is a 402 with nothing charged, and it was a true shortfall at that moment.
      const failures = own.filter((r) => r.status !== 201);
      for (const f of failures) {
        expect(f.status).toBe(402);
        expect(f.body.error?.code).toBe('insufficient_balance');
        expect(f.body.error?.required_cents).toBe(f.kg * 4);
        expect(f.body.error!.balance_cents!).toBeLessThan(f.body.error!.required_cents!);
        expect(f.body.error!.balance_cents!).toBeGreaterThanOrEqual(0);
      }
      const bought = [...own.filter((r) => r.status === 201), shared.find((r) => !r.replayed)!];
      expect(bought.every((r) => !r.replayed && r.body.livemode === (mode === 'live'))).toBe(true);
      // The balance ran out: some purchases failed; and some succeeded.
      expect(failures.length).toBeGreaterThan(0);
      expect(bought.length).toBeGreaterThan(1);

      // The offsets table holds exactly the successful purchases; one charge entry each, for its amount.
      const rows = db.prepare('SELECT id, amount_cents, status FROM offsets WHERE livemode = ?').all(lmode) as {
        id: string;
        amount_cents: number;
        status: string;
      }[];
      expect(rows.map((r) => r.id).sort()).toEqual(bought.map((r) => r.body.id!).sort());
      for (const r of bought) expect(rows.find((x) => x.id === r.body.id)!.amount_cents).toBe(r.kg * 4);
      const charges = db.prepare("SELECT offset_id, amount_cents FROM entries WHERE kind = 'charge' AND livemode = ?").all(lmode) as {
        offset_id: string;
        amount_cents: number;
      }[];
      expect(charges.map((c) => c.offset_id).sort()).toEqual(rows.map((r) => r.id).sort());
      for (const c of charges) expect(-c.amount_cents).toBe(rows.find((r) => r.id === c.offset_id)!.amount_cents);

      // The refunds the failer made are exactly the refund entries and the refunded offsets.
      const modeRefunds = mode === 'test' ? refunds : [];
      const refundRows = db.prepare("SELECT offset_id, amount_cents FROM entries WHERE kind = 'refund' AND livemode = ?").all(lmode) as {
        offset_id: string;
        amount_cents: number;
      }[];
      expect(refundRows.map((r) => r.offset_id).sort()).toEqual(modeRefunds.map((r) => r.id).sort());
      expect(
        rows
          .filter((r) => r.status === 'refunded')
          .map((r) => r.id)
          .sort(),
      ).toEqual(modeRefunds.map((r) => r.id).sort());

      // balance = top-ups − charges + refunds, from the children's own reports and from the entries table.
      const charged = bought.reduce((s, r) => s + r.kg * 4, 0);
      const refunded = modeRefunds.reduce((s, r) => s + r.amount_cents!, 0);
      const expected = start.balances[mode] + (mode === 'test' ? topups : 0) - charged + refunded;
      const balance = (await after.status()).balances[mode];
      expect(balance).toBe(expected);
      const total = db.prepare('SELECT SUM(amount_cents) AS s FROM entries WHERE livemode = ?').get(lmode) as { s: number };
      expect(total.s).toBe(balance);
      expect(balance).toBeGreaterThanOrEqual(0);
    }
    // The failer did refund something while the buyers were buying.
    expect(refunds.length).toBeGreaterThan(0);
    // And the processes really ran at once: in ledger order, the test buyers' purchases interleave.
    const order = db
      .prepare(
        "SELECT i.key FROM offsets o JOIN idempotency i ON i.offset_id = o.id WHERE o.livemode = 0 AND i.key <> 'shared-across-processes' ORDER BY o.seq",
      )
      .all() as { key: string }[];
    const who = order.map((r) => r.key.split('-')[0]);
    const switches = who.filter((b, i) => i > 0 && b !== who[i - 1]).length;
    if (process.env.DEBUG_MP) console.log({ who: who.join(' '), refunds: refunds.length, switches });
    expect(switches).toBeGreaterThanOrEqual(2);
  } finally {
    await after.close();
  }
});
