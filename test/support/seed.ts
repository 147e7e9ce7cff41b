import fc from 'fast-check';
import { afterEach } from 'vitest';
import { generator } from '../../src/service/faults.js';

/**
 * The seed of every randomised test: CARBON_TEST_SEED, default 4242. A failure names it, and the
 * same seed runs the same cases again. What the tests assert holds for every seed.
 */
export const SEED = Number(process.env.CARBON_TEST_SEED ?? 4242);
if (!Number.isSafeInteger(SEED)) throw new Error(`CARBON_TEST_SEED must be a whole number, not ${process.env.CARBON_TEST_SEED}`);

fc.configureGlobal({ seed: SEED });

afterEach((context) => {
  if (context.task.result?.state === 'fail') process.stderr.write(`${context.task.name}: failed with CARBON_TEST_SEED=${SEED}\n`);
});

/** A small deterministic generator (mulberry32) for tests that draw numbers themselves. */
export function random(seed = SEED): () => number {
  return generator(seed);
}
