/**
 * Per-key fixed-window rate limiting, the rule every store keeps (PostgreSQL in one UPSERT with
 * the same arithmetic). A window opens at a key's first request and lasts `windowMs`; a request
 * past `limit` in it waits until the window ends, rounded up to whole seconds (Retry-After).
 */
export interface RateWindow {
  start: number;
  count: number;
}

export function takeFromWindow(
  w: RateWindow | undefined,
  now: number,
  limit: number,
  windowMs: number,
): { window: RateWindow; wait: number | null } {
  const current = w === undefined || now >= w.start + windowMs || now < w.start ? { start: now, count: 0 } : w;
  if (current.count >= limit) return { window: current, wait: Math.max(1, Math.ceil((current.start + windowMs - now) / 1000)) };
  return { window: { start: current.start, count: current.count + 1 }, wait: null };
}
