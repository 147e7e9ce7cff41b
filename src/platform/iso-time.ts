/**
 * `new Date(ms).toISOString()`, with the date part made once a day: a `list --all` of a million
 * offsets writes two timestamps an offset, and toISOString took 0.7 µs each (BENCHMARKS.md,
 * streaming). The date is reckoned from the day number (civil from days), not by toISOString: its
 * first call makes V8 look up the machine's time zone through ICU, 0.25–0.3 ms of every command
 * that prints a time. The text is the same for every ms toISOString takes (years past 9999 and
 * before 0 as its six digits and a sign); a value that is not a whole ms Date holds goes to
 * toISOString itself (which refuses NaN and the out-of-range with a RangeError, and drops a fraction).
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
    dayPrefix = `${civilDate(d)}T`;
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

/** Day `days` after 1970-01-01 as YYYY-MM-DD (±YYYYYY outside 0–9999, as toISOString): H. Hinnant's civil_from_days. */
function civilDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const yyyy =
    year >= 0 && year <= 9999 ? String(year).padStart(4, '0') : `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`;
  return `${yyyy}-${two(month)}-${two(doy - Math.floor((153 * mp + 2) / 5) + 1)}`;
}
