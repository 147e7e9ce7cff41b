/**
 * Money and time as people write them and read them, for every surface that talks to people
 * (the CLI, the developer page, the certificate): integer cents and milliseconds in and out,
 * by string arithmetic. Never a float in money.
 */

/** 123456 → "$1,234.56"; negative amounts keep their sign in front. */
export function dollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${whole}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * A rate in millicents per kg as dollars per kg: 4000 → "$0.04/kg", 4125 → "$0.04125/kg".
 * Integer arithmetic on the digits: 1 dollar = 100,000 millicents.
 */
export function ratePerKg(millicents: number): string {
  const whole = Math.floor(millicents / 100_000);
  const frac = String(millicents % 100_000)
    .padStart(5, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `$${whole.toLocaleString('en-US')}.${frac}/kg`;
}

/** "250", "250.5", "$1,000.00" → cents; null for anything else (more than two decimals, a sign, words). */
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

/** 90000 → "1m30s"; 0 → "0s". For people (the CLI, the developer page); the JSON keeps milliseconds. */
export function duration(ms: number): string {
  if (ms === 0) return '0s';
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ];
  let rest = ms;
  let out = '';
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}
