/** Pure formatting for people: integer cents and kg in, text out. Never a float in money. */

/** 123456 → "$1,234.56"; negative amounts keep their sign in front. */
export function dollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${whole}.${String(abs % 100).padStart(2, '0')}`;
}

/** 1234567 → "1,234,567". */
export function grouped(n: number): string {
  return n.toLocaleString('en-US');
}

export function kg(n: number): string {
  return `${grouped(n)} kg`;
}

/**
 * A rate in millicents per kg as dollars per kg: 4000 → "$0.04/kg", 4125 → "$0.04125/kg".
 * Integer arithmetic on the digits: 1 dollar = 100,000 millicents.
 */
export function ratePerKg(millicents: number): string {
  const whole = Math.floor(millicents / 100_000);
  const frac = String(millicents % 100_000).padStart(5, '0').replace(/0+$/, '').padEnd(2, '0');
  return `$${grouped(whole)}.${frac}/kg`;
}

/** ISO timestamp → "2026-11-21 19:36:28 UTC" for reading; null → "—". */
export function when(iso: string | null): string {
  if (iso === null) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** One line, whatever a reference holds: tabs and newlines would break rows. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Parses a dollar amount as typed ("12.50", "$1,000", "250") into integer cents, without floats:
 * the digits are split at the point. Null when it is not a plain amount with at most two decimals.
 */
export function parseDollars(text: string): number | null {
  const m = /^\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) return null;
  const whole = Number(m[1]!.replace(/,/g, ''));
  const cents = Number((m[2] ?? '').padEnd(2, '0'));
  const total = whole * 100 + cents;
  return Number.isSafeInteger(total) ? total : null;
}

/** "90s", "15m", "2h", "1d", "1h30m" → milliseconds; null when unreadable. */
export function parseDuration(text: string): number | null {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = [...text.trim().matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return null;
  const total = parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
  return Number.isSafeInteger(total) && total > 0 ? total : null;
}
