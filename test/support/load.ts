import { availableParallelism, loadavg } from 'node:os';

/**
 * Time limits that keep up with a busy machine. A limit is there to catch a hang, not to time the
 * code: on a machine whose cores are shared (CI on two cores, other builds beside the tests), a
 * command that takes 200 ms when quiet can take seconds. `slowdown()` is how many times slower
 * than a quiet machine this one is now: the one-minute load average per core, at least 1 and at
 * most 10 (a hang is still caught). `limit(ms)` scales a limit by it; the setup file
 * (limits.ts) scales vitest's default test and hook limits the same way, once per test file.
 *
 * Only limits scale, never what a test asserts; a wall-clock bound that a test asserts (a wait
 * that must end at its --timeout, not at the placement a minute later) scales too, since it
 * stands for "well before the alternative", and the alternative is slowed down alike.
 */

/** vitest's default limit of a test and of a hook, on a quiet machine (the setup file scales them). */
export const BASE_TEST_LIMIT_MS = 30_000;

function slowdown(): number {
  // CARBON_TEST_SLOWDOWN pins the factor (e.g. 1 to see how a test fares with quiet-machine limits).
  const pinned = Number(process.env.CARBON_TEST_SLOWDOWN);
  if (Number.isFinite(pinned) && pinned > 0) return pinned;
  const perCore = loadavg()[0]! / availableParallelism();
  return Math.min(10, Math.max(1, perCore));
}

/** `ms` on a quiet machine, scaled for the load now. */
export const limit = (ms: number): number => Math.round(ms * slowdown());
