/** Pure formatting for people: integer cents and kg in, text out. Never a float in money. */

import { shownReference } from '../../service/keys.js';
import { grouped } from '../../service/units.js';

export { dollars, durationRefusal, grouped, parseDollars, parseDuration, ratePerKg } from '../../service/units.js';

export function kg(n: number): string {
  return `${grouped(n)} kg`;
}

/** ISO timestamp → "2026-11-21 19:36:28 UTC" for reading; null → "—". */
export function when(iso: string | null): string {
  if (iso === null) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/**
 * One line, whatever a reference (or what was typed) holds: tabs and newlines would break rows, and
 * an escape sequence (C1 too: U+009B is a CSI to some terminals) would drive the terminal.
 */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
}

/** `with reference "…"`, as a filter is said: a key pasted into the reference masked, as the table's row masks it. */
export const withReference = (reference: string): string => `with reference ${JSON.stringify(shownReference(reference))}`;
