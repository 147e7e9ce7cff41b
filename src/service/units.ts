/**
 * Money and time as people write them and read them, for every surface that talks to people
 * (the CLI, the developer page, the certificate): integer cents and milliseconds in and out,
 * by string arithmetic. Never a float in money.
 */

/**
 * 1234567 → "1,234,567", as `toLocaleString('en-US')` writes a whole number, by string arithmetic:
 * the first use of a locale's formats in a process makes V8 set up ICU, 11–17 ms on Node 22, 24
 * and 26 (BENCHMARKS.md), which every `carbon buy` and every table on a terminal paid for its
 * first number. Anything but a safe integer (none of carbon's counts, kg or cents) is left to it.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(n < 0 ? -n : n);
  let text = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = text.length; at < digits.length; at += 3) text += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${text}` : text;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** A moment's UTC day as a page shows it: "30 November 2026" (en-GB's long date, without ICU: see grouped). */
export function longDay(d: Date): string {
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** A moment's UTC day, short enough for a chart's tick: "Nov 30" (en-US's, without ICU). */
export function shortDay(d: Date): string {
  return `${MONTHS[d.getUTCMonth()]!.slice(0, 3)} ${d.getUTCDate()}`;
}

/** 123456 → "$1,234.56"; negative amounts keep their sign in front. */
export function dollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${grouped(Math.floor(abs / 100))}.${String(abs % 100).padStart(2, '0')}`;
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
  return `$${grouped(whole)}.${frac}/kg`;
}

/**
 * A whole number's digits as carbon reads them everywhere: thousands grouped by commas (the first
 * group not 0: `0,100` reads as a decimal comma, a tenth, and is refused) or not grouped at all.
 */
export const WHOLE_DIGITS = String.raw`(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)`;

/** Dollars as written: `250`, `$1,000.50`; parseDollars says null for such a text only when it is too large to count exactly. */
export const DOLLARS = new RegExp(String.raw`^\$?(${WHOLE_DIGITS})(?:\.(\d{1,2}))?$`);

/** "250", "250.5", "$1,000.00" → cents; null for anything else (more than two decimals, a sign, words). */
export function parseDollars(text: string): number | null {
  const m = DOLLARS.exec(text.trim());
  if (!m) return null;
  const whole = Number(m[1]!.replace(/,/g, ''));
  const cents = Number((m[2] ?? '').padEnd(2, '0'));
  const total = whole * 100 + cents;
  return Number.isSafeInteger(total) ? total : null;
}

/** "90s", "15m", "2h", "1d", "1w", "1h30m" → milliseconds; null when unreadable. */
export function parseDuration(text: string): number | null {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  const parts = [...text.trim().matchAll(/(\d+)(ms|s|m|h|d|w)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return null;
  const total = parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
  return Number.isSafeInteger(total) && total > 0 ? total : null;
}

/**
 * Why `value` is no duration, in one sentence naming `what` (the CLI's `carbon sandbox clock
 * advance` and `rate-limit --window`, the developer page's clock form): a zero or a sign said as
 * such where the clock only moves `forward`, a well-written one past what carbon counts exactly
 * said as too large, anything else with the units carbon reads.
 */
export function durationRefusal(value: string, what: string, forward = false): string {
  const wellWritten = /^(\d+(ms|s|m|h|d|w))+$/.test(value.trim());
  // The model's clock goes back only with a reset or a snapshot loaded: said of a zero or a sign, not of a unit carbon does not read (1y).
  const backwards = forward && ((wellWritten && !/[1-9]/.test(value)) || /^\s*-/.test(value));
  const only = backwards ? ' above zero (the clock only moves forward: `carbon sandbox reset` or a snapshot loaded takes it back)' : '';
  // Written well and not zero, but past what carbon counts exactly: said so, not "above zero".
  const long = wellWritten && /[1-9]/.test(value) ? ' (too large: more than carbon counts exactly)' : '';
  const units = long || only ? '' : ' (units: ms, s, m, h, d, w)';
  return `${what} must be a duration${only} such as 90s, 15m, 2h, 1d, 1w or 1h30m${units}, not "${value}"${long}.`;
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
