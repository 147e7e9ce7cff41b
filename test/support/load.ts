import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/**
 * Time limits that keep up with a busy machine. A limit is there to catch a hang, not to time the
 * code: on a machine whose cores are shared (CI on two cores, other builds beside the tests), a
 * command that takes 200 ms when quiet can take seconds. `slowdown()` is how many times slower
 * than a quiet machine this one is now: the one-minute load average per core (or the processes
 * runnable this instant, if more), at least 1 and at most 10 (a hang is still caught). `limit(ms)` scales a limit by it; the setup file
 * (limits.ts) scales vitest's default test and hook limits the same way, once per test file.
 *
 * Only limits scale, never what a test asserts; a wall-clock bound that a test asserts (a wait
 * that must end at its --timeout, not at the placement a minute later) scales too, since it
 * stands for "well before the alternative", and the alternative is slowed down alike.
 */

/** vitest's default limit of a test and of a hook, on a quiet machine (the setup file scales them). */
export const BASE_TEST_LIMIT_MS = 30_000;

/**
 * Processes that want a core right now (the runnable count of /proc/loadavg, less this one): the
 * one-minute average lags by a minute, so the files that start as a run begins, beside a machine
 * that just became busy, would get a quiet machine's limits without it.
 */
function runnableNow(): number {
  try {
    const runnable = /\s(\d+)\/\d+\s/.exec(readFileSync('/proc/loadavg', 'utf8'));
    return runnable === null ? 0 : Math.max(0, Number(runnable[1]) - 1);
  } catch {
    return 0;
  }
}

function slowdown(): number {
  // CARBON_TEST_SLOWDOWN pins the factor (e.g. 1 to see how a test fares with quiet-machine limits).
  const pinned = Number(process.env.CARBON_TEST_SLOWDOWN);
  if (Number.isFinite(pinned) && pinned > 0) return pinned;
  const perCore = Math.max(loadavg()[0]!, runnableNow()) / availableParallelism();
  return Math.min(10, Math.max(1, perCore));
}

/** `ms` on a quiet machine, scaled for the load now. */
export const limit = (ms: number): number => Math.round(ms * slowdown());
