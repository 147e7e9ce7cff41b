/**
 * Per-key fixed-window rate limiting, the rule every store keeps (PostgreSQL in one UPSERT with
 * the same arithmetic). A window opens at a key's first request and lasts `windowMs`; a request
 * past `limit` in it waits until the window ends, rounded up to whole seconds (Retry-After).
 */
export interface RateWindow {
  start: number;
  count: number;
}

/**
 * What a key's window is kept under: the key and the setting it counts for. A new setting
 * (`carbon sandbox rate-limit`) counts afresh: requests made under "1,000 a second" never count
 * against "3 an hour" (docs/service-model.md, "Rate limiting").
 */
export function windowName(keyId: string, limit: number, windowMs: number): string {
  return `${keyId} ${limit}/${windowMs}`;
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
