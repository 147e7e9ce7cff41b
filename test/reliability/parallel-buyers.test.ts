/**
 * Parallel buyers on one ledger: `carbon buy` processes (the local engine) and HTTP clients of a
 * served instance, all at once on the same data directory, buying until the balance runs out.
 * Afterwards the ledger is exact and every caller's answer matches what the ledger holds.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { pluck } from '../../src/store/sqlite/driver.js';
import {
  cleanupHomes,
  dataDir,
  http,
  openLedger,
  pool,
  printedError,
  printedOffsetId,
  provision,
  readLedger,
  requireBuilt,
  runCli,
  sandboxKeys,
  sleep,
  tempHome,
} from '../support/children.js';
import { type Served, serve } from '../support/cli.js';
import { limit } from '../support/load.js';
import { random } from '../support/seed.js';
import { openSandbox } from '../support/world.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

/** What each buyer asks for: by volume and by price, cents 200 to 2000 at the default rate. */
const ORDERS: Array<{ flag: '--kg' | '--amount-cents'; field: 'kg' | 'amount_cents'; value: number }> = [
  { flag: '--kg', field: 'kg', value: 50 },
  { flag: '--kg', field: 'kg', value: 250 },
  { flag: '--amount-cents', field: 'amount_cents', value: 999 },
  { flag: '--kg', field: 'kg', value: 500 },
  { flag: '--amount-cents', field: 'amount_cents', value: 401 },
];

interface Outcome {
  reference: string;
  ok: boolean;
  id?: string;
  amount?: number;
  /** For a refusal: the balance and the cost the error reported. */
  balance?: number;
  required?: number;
  detail: string;
}

describe('parallel buyers', () => {
  // Three fresh homes: one race seldom lands on the narrow windows (the switch to WAL, the key
  // file written around the commit) that once failed a buyer.
  test.each([1, 2, 3])(
    '8 processes racing to create a fresh sandbox make one account, one set of keys, and all buy (round %i)',
    async () => {
      const home = tempHome();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => runCli(home, ['buy', '--kg', '10', '--reference', `first-${i}`, '--json'])),
      );
      for (const r of results) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const ids = results.map((r) => printedOffsetId(r.stdout));
      const ledger = readLedger(home);
      expect(ledger.problems).toEqual([]);
      expect(new Set(ledger.offsets.map((o) => o.id))).toEqual(new Set(ids));
      expect(ledger.topups).toEqual({ 0: 100_000, 1: 0 });
      expect(ledger.balances[0]).toBe(100_000 - 8 * 40);
      // The keys file names exactly the keys the ledger knows (by hash): no process's keys were lost.
      const keys = sandboxKeys(home);
      const db = openLedger(home, { readonly: true });
      const hashes = (db.prepare('SELECT hash FROM api_keys').all() as Array<{ hash: Uint8Array }>)
        .map((r) => Buffer.from(r.hash).toString('hex'))
        .sort();
      db.close();
      expect(keys.all.map((k) => createHash('sha256').update(k).digest('hex')).sort()).toEqual(hashes);
      expect(hashes).toHaveLength(3);
    },
  );

  test(
    '8 CLI buyers and 8 HTTP clients on one ledger until the balance runs out: the ledger is exact',
    async () => {
      const home = tempHome();
      await provision(home);
      const sandbox = await openSandbox(dataDir(home));
      await sandbox.topUp('test', 150_000);
      await sandbox.close();
      const { test: key } = sandboxKeys(home);
      const server: Served = await serve(home);

      const CLI_WORKERS = 8;
      const CLI_BUYS = 12;
      const HTTP_CLIENTS = 8;
      const HTTP_BUYS = 30;
      // The HTTP clients keep pace with the CLI buyers (buy j waits for a share j/HTTP_BUYS of the
      // CLI purchases to be done), so both kinds are still buying when the balance runs out.
      let cliDone = 0;
      try {
        const cliWorker = async (w: number): Promise<Outcome[]> => {
          const out: Outcome[] = [];
          for (let j = 0; j < CLI_BUYS; j++) {
            const order = ORDERS[(w + j) % ORDERS.length]!;
            const reference = `cli-${w}-${j}`;
            const args = ['buy', order.flag, String(order.value), '--reference', reference, '--json'];
            const r = await runCli(home, args, { timeoutMs: limit(30_000) });
            cliDone++;
            const id = printedOffsetId(r.stdout);
            const detail = `exit ${r.code} ${r.signal ?? ''} stdout=${r.stdout.slice(0, 200)} stderr=${r.stderr}`;
            if (r.code === 0) {
              const amount = (JSON.parse(r.stdout) as { amount_cents: number }).amount_cents;
              out.push({ reference, ok: true, ...(id === undefined ? {} : { id }), amount, detail });
            } else {
              const err = printedError(r.stderr);
              // Every refusal is exit 3 with the 402 envelope; nothing else (a lock timeout, a crash) is allowed.
              expect({ code: r.code, error: err?.code, stdout: r.stdout }, detail).toEqual({
                code: 3,
                error: 'insufficient_balance',
                stdout: '',
              });
              out.push({ reference, ok: false, balance: err!.balance_cents as number, required: err!.required_cents as number, detail });
            }
          }
          return out;
        };
        const httpClient = async (c: number): Promise<Outcome[]> => {
          const out: Outcome[] = [];
          for (let j = 0; j < HTTP_BUYS; j++) {
            const order = ORDERS[(c * 3 + j) % ORDERS.length]!;
            const reference = `http-${c}-${j}`;
            while (cliDone < Math.floor((j * CLI_WORKERS * CLI_BUYS) / HTTP_BUYS)) await sleep(10);
            const res = await http(`${server.url}/offsets`, {
              key,
              idem: `idem-${reference}`,
              body: JSON.stringify({ [order.field]: order.value, reference }),
            });
            const detail = `${res.status} ${res.text}`;
            if (res.status === 201) {
              const body = res.json as { id: string; amount_cents: number; reference: string };
              expect(body.reference).toBe(reference);
              out.push({ reference, ok: true, id: body.id, amount: body.amount_cents, detail });
            } else {
              const err = (res.json as { error?: { code: string; balance_cents: number; required_cents: number } } | undefined)?.error;
              expect({ status: res.status, code: err?.code }, detail).toEqual({ status: 402, code: 'insufficient_balance' });
              out.push({ reference, ok: false, balance: err!.balance_cents, required: err!.required_cents, detail });
            }
          }
          return out;
        };
        const outcomes = (
          await Promise.all([
            pool(
              Array.from({ length: CLI_WORKERS }, (_, w) => w),
              CLI_WORKERS,
              cliWorker,
            ),
            pool(
              Array.from({ length: HTTP_CLIENTS }, (_, c) => c),
              HTTP_CLIENTS,
              httpClient,
            ),
          ])
        ).flat(2);

        expect(outcomes).toHaveLength(CLI_WORKERS * CLI_BUYS + HTTP_CLIENTS * HTTP_BUYS);
        const ledger = readLedger(home);
        expect(ledger.problems).toEqual([]);

        const successes = outcomes.filter((o) => o.ok);
        const failures = outcomes.filter((o) => !o.ok);
        // The balance really ran out, and both kinds of caller were refused at some point.
        expect(failures.some((f) => f.reference.startsWith('cli-'))).toBe(true);
        expect(failures.some((f) => f.reference.startsWith('http-'))).toBe(true);
        expect(successes.length).toBeGreaterThan(100);

        // No success without an offset, no offset without a success: the same ids, one per success.
        expect(ledger.offsets).toHaveLength(successes.length);
        expect(new Set(ledger.offsets.map((o) => o.id))).toEqual(new Set(successes.map((s) => s.id)));
        for (const s of successes) {
          expect(ledger.byId.get(s.id!), s.detail).toMatchObject({ reference: s.reference, amount_cents: s.amount });
        }
        // No refusal charged anything: no offset carries a refused caller's reference.
        const refused = new Set(failures.map((f) => f.reference));
        expect(ledger.offsets.filter((o) => refused.has(o.reference ?? ''))).toEqual([]);

        // balance = top-ups − charges, to the cent, and equal to what the callers were told they paid.
        const paid = successes.reduce((sum, s) => sum + s.amount!, 0);
        expect(ledger.charges[0]).toBe(paid);
        expect(ledger.balances[0]).toBe(250_000 - paid);
        // Each refusal was right when it was made, and the balance never grew back afterwards.
        for (const f of failures) {
          expect(f.balance!, f.detail).toBeLessThan(f.required!);
          expect(ledger.balances[0]!, f.detail).toBeLessThanOrEqual(f.balance!);
        }
      } finally {
        await server.stop();
      }
    },
    limit(120_000),
  );

  test(
    'reads that leave the WAL race purchases that copy it back, some reads killed: every answer is in the journal, the ledger exact',
    async () => {
      const home = tempHome();
      await provision(home);
      const next = random();
      // A purchase every third process; the rest read (their close leaves the WAL: sqlite-store.ts).
      const jobs = Array.from({ length: 36 }, (_, i) =>
        i % 3 === 0 ? ['buy', '--kg', '1', '--reference', `race-${i}`, '--json'] : [i % 2 === 0 ? 'balance' : 'impact', '--json'],
      );
      const results = await pool(jobs, 8, (args, i) => {
        // One read in six is killed at a moment drawn from the seed, anywhere in its short life.
        const killAfter = args[0] !== 'buy' && i % 6 === 1 ? next() * 400 : null;
        return runCli(home, args, killAfter === null ? {} : { onSpawn: (child) => setTimeout(() => child.kill('SIGKILL'), killAfter) });
      });
      const finished = results.map((r, i) => ({ r, args: jobs[i]! })).filter(({ r }) => r.signal === null);
      for (const { r, args } of finished) expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);

      // A purchase alone at the end copies everything back: ledger.db alone holds it all.
      const last = await runCli(home, ['buy', '--kg', '1', '--json']);
      expect(last.code, last.stderr).toBe(0);
      expect(existsSync(`${join(dataDir(home), 'ledger.db')}-wal`)).toBe(false);
      const ledger = readLedger(home);
      expect(ledger.problems).toEqual([]);
      const db = openLedger(home, { readonly: true });
      try {
        const answered = new Set(pluck<[], string>(db, 'SELECT instance FROM journal').all());
        for (const { r, args } of finished) {
          // Each process's entry, by the instance that answered it (host:pid).
          expect(
            [...answered].some((instance) => instance.endsWith(`:${r.pid}`)),
            `${args.join(' ')} (pid ${r.pid}) has no journal entry`,
          ).toBe(true);
          if (args[0] === 'buy') expect(ledger.byId.has(printedOffsetId(r.stdout)!)).toBe(true);
        }
      } finally {
        db.close();
      }
    },
    limit(120_000),
  );
});
