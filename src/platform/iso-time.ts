/**
 * `new Date(ms).toISOString()`, with the date part made once a day: a `list --all` of a million
 * offsets writes two timestamps an offset, and toISOString took 0.7 µs each (BENCHMARKS.md,
 * streaming). The text is the same for every ms toISOString takes (years past 9999 included); a
 * value that is not a whole ms Date holds goes to toISOString itself (which refuses NaN and the
 * out-of-range with a RangeError, and drops a fraction).
 */
const DAY_MS = 86_400_000;
/** The farthest from 1970 a Date reaches, either way. */
const DATE_MAX_MS = 8.64e15;
let day = Number.NaN;
let dayPrefix = '';

export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > DATE_MAX_MS) return new Date(ms).toISOString();
  const d = Math.floor(ms / DAY_MS);
  if (d !== day) {
    const text = new Date(d * DAY_MS).toISOString();
    dayPrefix = text.slice(0, text.indexOf('T') + 1);
    day = d;
  }
  let rest = ms - d * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  rest -= s * 1000;
  return `${dayPrefix}${two(h)}:${two(m)}:${two(s)}.${rest < 10 ? '00' : rest < 100 ? '0' : ''}${rest}Z`;
}

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
