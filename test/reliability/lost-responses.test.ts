/**
 * Lost responses: the fault proxy sits between `carbon buy` (remote engine) and `carbon serve`
 * and, at random, lets a purchase through but loses its answer, answers 503 itself, or answers
 * 429 with Retry-After. Every buy that exits 0 made exactly one offset; every buy that fails
 * says how to retry, and retrying with its --idempotency-key never makes a second offset.
 */

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanupHomes, pool, printedError, provision, readLedger, requireBuilt, rng, runCli, tempHome } from '../support/children.js';
import { serve } from '../support/cli.js';
import { type Fault, startFaultProxy } from '../support/fault-proxy.js';
import { limit } from '../support/load.js';
import { SEED } from '../support/seed.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

const BUYS = 24;

describe('lost responses between carbon buy and carbon serve', () => {
  test(
    'exit 0 means exactly one offset; a failed buy retried with its key never buys twice',
    async () => {
      // One seed for every randomised test (test/support/seed.ts).
      const seed = SEED;
      const random = rng(seed);
      const faults: Fault[] = [
        'drop',
        'drop',
        'drop',
        { status: 503 },
        { status: 503 },
        { status: 429, retryAfter: 1 },
        'forward',
        'forward',
        'forward',
        'forward',
      ];
      const serverHome = tempHome();
      const key = (await provision(serverHome)).test;
      const server = await serve(serverHome);
      const proxy = await startFaultProxy({
        target: server.url,
        // The first purchase request always loses its answer, so the run never goes without one.
        plan: (i) => (i === 0 ? 'drop' : faults[Math.floor(random() * faults.length)]!),
        only: { method: 'POST', path: /\/offsets$/ },
      });
      const cliHome = tempHome();
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: key };
      const context = (what: string) => `seed ${seed}: ${what}`;
      try {
        interface Attempt {
          reference: string;
          kg: number;
          json: boolean;
          code: number | null;
          id?: string;
          /** The key to retry with: ours in --json mode, else the one the error message gives. */
          retryKey?: string;
          /** Refused 429 at every attempt: nothing can have been bought, and no key is offered. */
          refusedEveryTime?: boolean;
          output: string;
        }
        const attempts = await pool(
          Array.from({ length: BUYS }, (_, i) => i),
          4,
          async (i): Promise<Attempt> => {
            const reference = `lost-${i}`;
            const kg = 10 + i;
            // A third as a person would (text), a third as a script with its own key, a third as a script without.
            const json = i % 3 !== 0;
            const ownKey = i % 3 === 1;
            const args = ['buy', '--kg', String(kg), '--reference', reference];
            if (json) args.push('--json');
            if (ownKey) args.push('--idempotency-key', `own-key-${i}`);
            const r = await runCli(cliHome, args, { env, timeoutMs: limit(30_000) });
            const output = `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
            const attempt: Attempt = { reference, kg, json, code: r.code, output };
            if (r.code === 0) {
              attempt.id = json ? (JSON.parse(r.stdout) as { id: string }).id : /^id\t(\S+)$/m.exec(r.stdout)?.[1];
              expect(attempt.id, context(output)).toMatch(/^off_/);
              return attempt;
            }
            // A failure: a network failure or 5xx after retries (exit 1), or 429 after retries (exit 7).
            expect([1, 7], context(output)).toContain(r.code);
            expect(r.stdout, context(output)).toBe('');
            if (json) {
              // The envelope carries the key to retry with, the caller's own or the generated one.
              const error = printedError(r.stderr);
              expect(error?.code, context(output)).toMatch(/^(service_unavailable|connection_error|rate_limited)$/);
              attempt.retryKey = error?.idempotency_key as string | undefined;
              attempt.refusedEveryTime = attempt.retryKey === undefined && error?.code === 'rate_limited';
              if (attempt.refusedEveryTime) return attempt;
              if (ownKey) expect(attempt.retryKey, context(output)).toBe(`own-key-${i}`);
              else expect(attempt.retryKey, context(`no idempotency_key in: ${output}`)).toMatch(/^[0-9a-f-]{36}$/);
            } else {
              // The person is told the key that makes a retry safe: without it they cannot retry without risk.
              attempt.retryKey = /--idempotency-key (\S+?)[.:]?(\s|$)/.exec(r.stderr)?.[1];
              attempt.refusedEveryTime = attempt.retryKey === undefined && r.code === 7;
              if (!attempt.refusedEveryTime) expect(attempt.retryKey, context(`no key to retry with in: ${output}`)).toBeDefined();
            }
            return attempt;
          },
        );

        // The faults did happen: some responses were lost and some buys failed.
        expect(proxy.requests.filter((r) => r.fault === 'drop').length, context('drops')).toBeGreaterThan(0);

        let ledger = readLedger(serverHome);
        expect(ledger.problems, context('ledger')).toEqual([]);
        const offsetsFor = (reference: string) => readLedger(serverHome).offsets.filter((o) => o.reference === reference);
        for (const a of attempts) {
          const found = ledger.offsets.filter((o) => o.reference === a.reference);
          if (a.code === 0) {
            // Exactly one offset, the one printed, even when the first answer was lost and a retry replayed it.
            expect(
              found.map((o) => o.id),
              context(a.output),
            ).toEqual([a.id]);
            expect(found[0]!.kg).toBe(a.kg);
          } else {
            // A buy refused 429 at every attempt offers no key: it bought nothing.
            expect(found.length, context(a.output)).toBeLessThanOrEqual(a.refusedEveryTime ? 0 : 1);
          }
        }

        // Retry every failure with its key, twice, with some answers still being lost: each ends with
        // exactly one offset, the earlier one when the failed attempt had in fact made it.
        const before = new Map(attempts.map((a) => [a.reference, offsetsFor(a.reference)]));
        proxy.setPlan(() => (random() < 0.25 ? 'drop' : 'forward'));
        for (let round = 0; round < 2; round++) {
          await pool(
            attempts.filter((x) => x.code !== 0),
            4,
            async (a) => {
              const r = await runCli(
                cliHome,
                [
                  'buy',
                  '--kg',
                  String(a.kg),
                  '--reference',
                  a.reference,
                  '--idempotency-key',
                  a.retryKey ?? `again-${a.reference}`,
                  '--json',
                  '--max-retries',
                  '6',
                ],
                { env, timeoutMs: limit(60_000) },
              );
              const output = `retry ${round}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nfirst: ${a.output}`;
              expect(r.code, context(output)).toBe(0);
              const id = (JSON.parse(r.stdout) as { id: string }).id;
              expect(
                offsetsFor(a.reference).map((o) => o.id),
                context(output),
              ).toEqual([id]);
              const earlier = before.get(a.reference)!;
              if (earlier.length === 1) expect(id, context(`the retry made a second offset: ${output}`)).toBe(earlier[0]!.id);
            },
          );
        }

        ledger = readLedger(serverHome);
        expect(ledger.problems, context('ledger')).toEqual([]);
        expect(ledger.offsets.map((o) => o.reference).sort(), context('one offset per purchase')).toEqual(
          attempts.map((a) => a.reference).sort(),
        );
        expect(ledger.charges[0]).toBe(attempts.reduce((s, a) => s + a.kg * 4, 0));
      } finally {
        await proxy.close();
        await server.stop();
      }
    },
    limit(110_000),
  );
});
