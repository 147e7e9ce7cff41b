/**
 * Per-key fixed-window rate limiting, held in the memory of one service instance: a served
 * sandbox is one process, which is where limits matter. The window and the count come from
 * the account, so `carbon sandbox rate-limit` changes them for a running server too.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /** Counts one request; returns the seconds to wait when it is over the limit, else null. */
  take(key: string, now: number, limit: number | null, windowMs: number): number | null {
    if (limit === null) return null;
    let w = this.windows.get(key);
    if (!w || now >= w.start + windowMs || now < w.start) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= limit) return Math.max(1, Math.ceil((w.start + windowMs - now) / 1000));
    w.count++;
    return null;
  }
}
