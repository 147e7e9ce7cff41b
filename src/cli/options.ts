import { LIMITS, type PurchaseParams } from '../api/types.js';
import { isoTime } from '../platform/iso-time.js';
import { WHOLE_DIGITS } from '../service/units.js';
import type { Context } from './context.js';
import { type CliError, usage } from './errors.js';
import { dollars, grouped, parseDollars } from './render/format.js';

/**
 * One way to read every number typed into carbon (an option, a sandbox argument): digits, with
 * thousands grouped by commas or not at all (`1000`, `1,000`), and a decimal point where the
 * quantity has one (`12.50` dollars). Exponents (`1e3`), underscores, spaces, `0x` and misplaced
 * commas are refused everywhere, and the error says which.
 */
const NUMBER = new RegExp(String.raw`^-?${WHOLE_DIGITS}(?:\.\d+)?$`);

/**
 * Why the text is not a number as carbon reads them, as a parenthesis for the error ('' if it is one).
 * `whole`: for a whole number (kg, cents, a count), where a decimal comma's tenth is no answer either.
 */
export function whyNotANumber(text: string, whole = false): string {
  const t = text.trim();
  if (NUMBER.test(t)) return '';
  if (/^-?[\d,.]*\d[eE][+-]?\d+$/.test(t)) return ' (write the digits out: no exponents)';
  if (/^-?\d[\d_ ]*\d(?:\.\d+)?$/.test(t)) return ' (group thousands with commas, or not at all)';
  if (/^-?0+(?:,\d{3})+(?:\.\d+)?$/.test(t))
    return whole
      ? ' (no group of thousands starts with 0)'
      : ' (no group of thousands starts with 0: a decimal comma? write 0.1 for a tenth)';
  if (/^-?[\d,]+(?:\.\d+)?$/.test(t)) return ' (commas group thousands, as in 1,000)';
  if (/^-?\.\d+$/.test(t)) return ` (a digit before the point: ${t.replace('.', '0.')})`;
  return '';
}

/** A number written well but past what carbon counts exactly (2^53): said, so a good-looking value is not called malformed. */
const TOO_LARGE = ' (too large: more than carbon counts exactly)';

function readNumber(value: string): number {
  return NUMBER.test(value.trim()) ? Number(value.trim().replace(/,/g, '')) : Number.NaN;
}

/**
 * A number the API judges (--kg, --amount-cents): ranges and whole-ness are its to judge (it
 * names the field in its 422), so `--kg 1.5` gets the answer a script calling the API would get.
 */
export function numberOption(value: string, flag: string): number {
  const n = readNumber(value);
  if (Number.isNaN(n)) throw usage(`${flag} must be a number such as 500 or 1,000, not "${value}"${whyNotANumber(value, true)}.`);
  // Decimals a double cannot hold (`4.9999999999999999999` is 5 as a number): sent on, they would
  // be a whole number the API buys, where the API refuses the same text as not whole.
  if (Number.isInteger(n) && /\.\d*[1-9]/.test(value))
    throw usage(`${flag} must be a whole number, not "${value}" (more decimals than carbon counts exactly).`);
  return n;
}

/**
 * A whole number carbon judges itself (counts, cents, seconds): with bounds, the message names them.
 */
export function wholeNumberOption(value: string, name: string, bounds: { min?: number; max?: number } = {}): number {
  // No decimals at all: `3.9999999999999999999` is 4 as a number, and `--max-cents` would allow 4.
  const n = value.includes('.') ? Number.NaN : readNumber(value);
  const min = bounds.min ?? 0;
  // A bound is always said: "-1" is a whole number, one below the least this takes.
  const range = bounds.max === undefined ? (min === 0 ? ' of 0 or more' : ` of at least ${grouped(min)}`) : ` from ${min} to ${bounds.max}`;
  if (!(Number.isSafeInteger(n) && n >= min && n <= (bounds.max ?? Number.MAX_SAFE_INTEGER))) {
    const why = n > Number.MAX_SAFE_INTEGER && bounds.max === undefined ? TOO_LARGE : whyNotANumber(value, true);
    throw usage(`${name} must be a whole number${range}, not "${value}"${why}.`);
  }
  return n;
}

/** Dollars as typed (`250`, `1,000`, `12.50`, `$5`) → integer cents; the error says what it takes. */
export function dollarsOption(value: string, name: string): number {
  const cents = parseDollars(value);
  if (cents === null) {
    const why =
      whyNotANumber(value.replace(/^\$/, '')) ||
      (/\.\d{3,}$/.test(value.trim()) ? ' (at most two decimals: whole cents)' : '') ||
      (/^\$?[\d,]+(?:\.\d{1,2})?$/.test(value.trim()) && !value.trim().startsWith('-') ? TOO_LARGE : '');
    throw usage(`${name} must be dollars such as 250, 1,000 or 12.50, not "${value}"${why}.`);
  }
  return cents;
}

export interface PurchaseFlags {
  kg?: string;
  amountCents?: string;
  amount?: string;
  reference?: string;
}

/** --kg, --amount-cents or --amount (dollars): exactly one, as the API's body. */
export function purchaseParams(flags: PurchaseFlags): PurchaseParams {
  const given = [
    flags.kg !== undefined && '--kg',
    flags.amountCents !== undefined && '--amount-cents',
    flags.amount !== undefined && '--amount',
  ].filter(Boolean);
  if (given.length === 0) throw usage('Say how much to buy: --kg N, --amount-cents N or --amount DOLLARS.');
  if (given.length > 1) throw usage(`Give only one of --kg, --amount-cents and --amount (got ${given.join(' and ')}).`);
  const params: PurchaseParams = {};
  if (flags.kg !== undefined) params.kg = numberOption(flags.kg, '--kg');
  if (flags.amountCents !== undefined) params.amount_cents = numberOption(flags.amountCents, '--amount-cents');
  if (flags.amount !== undefined) {
    params.amount_cents = dollarsOption(flags.amount, '--amount');
    // Said in the dollars typed: the API's refusal names amount_cents, in cents (spec part 8).
    if (params.amount_cents > LIMITS.amountCentsMax)
      throw usage(
        `--amount is at most ${dollars(LIMITS.amountCentsMax)} (the API's amount_cents, ${grouped(LIMITS.amountCentsMax)}), not "${flags.amount}".`,
      );
  }
  if (flags.reference !== undefined) params.reference = flags.reference;
  return params;
}

/**
 * `-q, --quiet` with an output it cannot go with (--json; list's --format too): the one refusal
 * buy, list and show give, naming the flags to leave out.
 */
export function quietWith(...others: string[]): CliError {
  return usage(`--quiet prints only the offset ids: leave out ${others.join(' and ')}.`);
}

/** Whether `value` is one of `list` (a command's declared choices), as that type. */
export const isOneOf = <T extends string>(list: readonly T[], value: string): value is T => (list as readonly string[]).includes(value);

/** A day as --since and --until name it by a word: today and yesterday, by the clock they are given. */
const NAMED_DAYS: Readonly<Record<string, number>> = { today: 0, yesterday: 1 };
/** An age as --since and --until take it: 30m, 12h, 7d, 2w. */
const AGE = /^(\d{1,6})([mhdw])$/;

/**
 * Whether --since/--until's `text` is read against a clock (an age, `today`, `yesterday`), not a
 * date. Only a well-formed one: a malformed text is refused (parseWhen) before the model is opened.
 */
const needsClock = (text: string): boolean => AGE.test(text) || Object.hasOwn(NAMED_DAYS, text.toLowerCase());

/**
 * The time that ages, `today` and `yesterday` among `texts` count back from: the model's clock on
 * the local engine, where offsets are stamped by it (a sandbox's clock may have been moved on), and
 * this computer's on a remote API. The model is opened only when a text needs it.
 */
export async function clockFor(ctx: Context, texts: ReadonlyArray<string | undefined>): Promise<number> {
  const needed = texts.some((t) => t !== undefined && needsClock(t));
  return needed && ctx.settings.engine === 'local' ? await (await ctx.sandbox()).now() : Date.now();
}

/** What a --since/--until text counts from: an age and a named day from the clock, a date from nothing. */
const whenKind = (text: string): 'age' | 'named' | 'date' =>
  AGE.test(text) ? 'age' : Object.hasOwn(NAMED_DAYS, text.toLowerCase()) ? 'named' : 'date';

/**
 * clockFor() for a span, refusing first, with nothing opened, a text that is no day or age, and a
 * span that ends before it starts whatever the clock says: two ages (--since 7d --until 30d), two
 * named days, two dates. Only an age or a named day against a date hangs on the model's clock; the
 * command judges those again.
 */
export async function clockForSpan(ctx: Context, since: string | undefined, until: string | undefined): Promise<number> {
  const now = Date.now();
  const from = since === undefined ? undefined : parseWhen(since, '--since', now);
  const to = until === undefined ? undefined : parseWhen(until, '--until', now, true);
  if (from !== undefined && to !== undefined && whenKind(since!) === whenKind(until!) && from >= to)
    throw usage('--since must come before --until.');
  return clockFor(ctx, [since, until]);
}

/**
 * --since / --until: a day (YYYY-MM-DD, UTC; or `today`, `yesterday`, UTC days of `now`) or an age
 * such as 7d, 12h, 30m (before `now`). A day is its first millisecond, or with `end` the first of
 * the day after (an --until that includes the day whole).
 */
export function parseWhen(text: string, flag: string, now = Date.now(), end = false): number {
  const age = AGE.exec(text);
  if (age) return now - Number(age[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[age[2] as 'm' | 'h' | 'd' | 'w'];
  const back = NAMED_DAYS[text.toLowerCase()];
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms =
    back !== undefined
      ? Math.floor(now / 86_400_000) * 86_400_000 - back * 86_400_000
      : m === null
        ? Number.NaN
        : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (Number.isNaN(ms) || (back === undefined && isoTime(ms).slice(0, 10) !== text)) {
    // An age written well but longer than any span: said so, not as if it were no age.
    const long = /^\d{7,}[mhdw]$/.test(text) ? ' (an age has at most 6 digits: 999999d)' : '';
    throw usage(`${flag} must be a day such as 2026-01-31, today or yesterday, or an age such as 7d, 12h or 30m, not "${text}"${long}.`);
  }
  return end ? ms + 86_400_000 : ms;
}
