/**
 * Bad input, fuzzed against the built binary's argv: commands, flags and values, wrong and
 * right, in any order. Each run is a process, so the run count is small. Every run ends by
 * itself with a documented exit code (0–8), prints no stack trace and no key, reports a failure
 * as one line on stderr (the JSON envelope with --json) with nothing on stdout, and a failed
 * run changes nothing in the ledger.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  cleanupHomes,
  ledgerState,
  openLedger,
  printedError,
  provision,
  requireBuilt,
  runCli,
  type SandboxKeys,
  STACK_FRAME,
  tempHome,
} from '../support/children.js';
import { limit } from '../support/load.js';

let home: string;
let keys: SandboxKeys;

beforeAll(async () => {
  requireBuilt();
  home = tempHome();
  keys = await provision(home);
});
afterAll(cleanupHomes);

function state() {
  const db = openLedger(home, { readonly: true });
  try {
    return ledgerState(db);
  } finally {
    db.close();
  }
}

const values = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '1',
      '0',
      '-5',
      '1.5',
      '1e3',
      'abc',
      '',
      ' 7',
      '0x10',
      '١٢',
      'NaN',
      'Infinity',
      '99999999999999999999',
      '5000001',
      '1000001',
      '12.345',
      '--kg',
    ),
  },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 3000 }).map(String) },
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);

const option = fc.oneof(
  fc.tuple(
    fc.constantFrom(
      '--kg',
      '--amount-cents',
      '--amount',
      '--max-cents',
      '--limit',
      '--starting-after',
      '--idempotency-key',
      '--reference',
      '--format',
      '--profile',
      '--max-retries',
      '--timeout',
    ),
    values,
  ),
  fc.tuple(fc.constant('--reference'), fc.constantFrom('😀'.repeat(201), 'a'.repeat(200), '\u202e', '-x')),
  fc.tuple(fc.constant('--idempotency-key'), fc.constantFrom('k'.repeat(256), 'k'.repeat(255), 'ключ', 'a b')),
  fc.tuple(fc.constant('--api-key'), fc.constantFrom('ck_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'nope', '', `ck_test_${'A'.repeat(248)}`)),
  fc.tuple(
    fc.constant('--base-url'),
    fc.constantFrom('http://127.0.0.1:1/api/v1', 'ftp://x', 'not a url', 'http://example.com/api/v1', ''),
  ),
  fc.constantFrom(
    ['--json'],
    ['--live'],
    ['--test'],
    ['--local'],
    ['--all'],
    ['--no-color'],
    ['-y'],
    ['--nope'],
    ['--'],
    ['-'],
    ['--kg=5'],
    ['off_nope'],
    ['%s%n'],
  ),
  fc.constantFrom(['--kg', '5'], ['--amount', '2.50'], ['--amount-cents', '3'], ['--live', '--kg', '1'], ['--json', '--kg', '2']),
);

const argv = fc
  .tuple(
    fc.constantFrom(
      ['buy'],
      ['buy'],
      ['buy'],
      ['quote'],
      ['list'],
      ['show'],
      ['show', 'off_nope'],
      ['show', '%ZZ/..'],
      ['balance'],
      ['impact'],
      ['sandbox', 'status'],
      ['config', 'list'],
      ['nope'],
      ['help'],
      [],
      ['completion', 'tcsh'],
    ),
    fc.array(option, { maxLength: 3 }),
  )
  .map(([command, options]) => [...command, ...options.flat()]);

describe('fuzzing the command line', () => {
  test(
    'any argv: ends by itself with a documented exit code; a failure is one line and changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(argv, async (args) => {
          const before = state();
          const r = await runCli(home, args, { env: { CARBON_MAX_RETRIES: '0' }, timeoutMs: limit(15_000) });
          const context = `carbon ${JSON.stringify(args)} → exit ${r.code}\nstdout: ${r.stdout.slice(0, 300)}\nstderr: ${r.stderr.slice(0, 500)}`;
          expect(r.timedOut, `${context}: did not end in 15 s`).toBe(false);
          expect(r.signal, context).toBeNull();
          expect(r.code, context).toBeGreaterThanOrEqual(0);
          expect(r.code, context).toBeLessThanOrEqual(8);
          expect(r.stdout + r.stderr, context).not.toMatch(STACK_FRAME);
          for (const key of keys.all) expect((r.stdout + r.stderr).includes(key), `${context}: a full key in the output`).toBe(false);
          const after = state();
          if (r.code !== 0) {
            expect(r.stdout, context).toBe('');
            const lines = r.stderr
              .trim()
              .split('\n')
              .filter((l) => !l.startsWith('warning:'));
            expect(lines, context).toHaveLength(1);
            if (args.includes('--json')) expect(printedError(r.stderr), context).toBeDefined();
            else expect(lines[0], context).toMatch(/^error: /);
            expect(after, context).toEqual(before);
          } else if (args[0] === 'buy') {
            // A purchase: at most one offset (none when an Idempotency-Key replayed an earlier one).
            expect(after.offsets - before.offsets, context).toBeLessThanOrEqual(1);
          } else {
            expect({ offsets: after.offsets, test: after.test, live: after.live }, context).toEqual({
              offsets: before.offsets,
              test: before.test,
              live: before.live,
            });
          }
        }),
        { numRuns: 30 },
      );
    },
    limit(100_000),
  );
});
