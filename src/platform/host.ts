import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

let name: string | undefined;

/**
 * This machine's name, as os.hostname() gives it (the kernel's, in this UTS namespace). On Linux
 * it is read from /proc: loading node:os costs a one-shot command about 4 M instructions of its
 * start-up (5 % of `node -e 0`'s), for one name; elsewhere, or if that fails, node:os gives it
 * (the CLI's build loads it only on that first use: scripts/build.mjs).
 */
export function hostName(): string {
  if (name !== undefined) return name;
  if (process.platform === 'linux') {
    try {
      name = readFileSync('/proc/sys/kernel/hostname', 'utf8').trim();
    } catch {
      // No /proc (a sandbox without it): node:os below.
    }
  }
  if (!name) name = hostname();
  return name;
}

/** Now, in whole microseconds of a monotonic clock: node:perf_hooks (`performance`) would load ten modules first. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
