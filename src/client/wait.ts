import type { Offset } from '../api/types.js';
import { CarbonConfigError, WaitTimeoutError } from './errors.js';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Called with each state seen while waiting. */
  onPoll?: (offset: Offset) => void;
}

/** Polls an offset (`get`) until it is placed or refunded; WaitTimeoutError when time runs out first. */
export async function waitUntilSettled(
  get: (id: string) => Promise<Offset>,
  id: string,
  options: WaitOptions,
  sleep: (ms: number) => Promise<void>,
): Promise<Offset> {
  const { timeoutMs = 120_000, intervalMs = 1_000, onPoll } = options;
  // An unset variable read as a number (NaN) would poll as fast as it can, and never time out.
  // A timeout of Infinity is no time limit; an interval must be a number of milliseconds.
  for (const [name, value, least] of [
    ['timeoutMs', timeoutMs, 0],
    ['intervalMs', intervalMs, 1],
  ] as const)
    if (Number.isNaN(value) || value < least || (name === 'intervalMs' && !Number.isFinite(value)))
      throw new CarbonConfigError(`waitUntilSettled's ${name} must be a number of milliseconds from ${least}, not ${String(value)}.`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const offset = await get(id);
    onPoll?.(offset);
    if (offset.status !== 'processing') return offset;
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeoutError(offset);
    await sleep(Math.min(intervalMs, left));
  }
}
