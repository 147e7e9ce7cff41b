/** Pure formatting for people: integer cents and kg in, text out. Never a float in money. */

export { dollars, parseDollars, parseDuration } from '../../service/units.js';

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
