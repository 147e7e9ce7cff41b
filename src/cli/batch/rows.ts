import { LIMITS, type PurchaseParams } from '../../api/types.js';
import { parseDollars, WHOLE_DIGITS } from '../../service/units.js';
import { usage } from '../errors.js';
import { whyNotANumber } from '../options.js';
import { dollars, grouped } from '../render/format.js';

/**
 * The rows of a `carbon buy --from-csv` file: headers matched loosely, every row read into the
 * API's purchase body, every fault of every row found before anything is bought.
 */

type Field = 'kg' | 'amount' | 'amount_cents' | 'reference';

/**
 * Header names, as `normalize` leaves them (lower case; spaces, underscores, hyphens, dots and
 * brackets gone): `Amount (USD)`, `amount_usd` and `AMOUNT-USD` all read `amountusd`.
 */
const HEADER_ALIASES: Record<Exclude<Field, 'amount'>, readonly string[]> = {
  kg: ['kg', 'kgs', 'kilograms', 'kgco2', 'kgco2e', 'co2kg', 'co2ekg'],
  amount_cents: ['amountcents', 'cents', 'amountincents', 'amountusdcents', 'costcents', 'pricecents', 'totalcents'],
  reference: ['reference', 'ref', 'label', 'memo'],
};
/** Dollars: amount, cost, price or total, with or without the currency (`Cost (USD)`, `Total $`, `price in USD`). */
const DOLLARS = /^(?:(?:amount|cost|price|total)(?:in)?(?:usd|us\$|\$|dollars?)?|usd|dollars?|\$)$/;
/** The same words with another currency: carbon buys in US dollars, and says so rather than ignore the column. */
const OTHER_CURRENCY = /^(?:amount|cost|price|total)(?:in)?(eur|gbp|chf|cad|aud|nzd|jpy|cny|inr|sek|nok|dkk|pln|czk|brl|mxn|€|£|¥)$/;

const normalize = (header: string): string => header.toLowerCase().replace(/[\s_\-.()[\]]/g, '');

export interface BatchRow {
  /** 1 for the first row under the header. */
  row: number;
  /** The line of the file it starts on (1 is the header). */
  line: number;
  params: PurchaseParams;
}

/** Which column holds which field (unknown columns are ignored, and named so), and how many columns the header names. */
export class Columns extends Map<Field, number> {
  constructor(readonly width: number) {
    super();
  }
}

function fieldOf(header: string): Field | undefined {
  const name = normalize(header);
  if (DOLLARS.test(name)) return 'amount';
  const other = OTHER_CURRENCY.exec(name);
  if (other) {
    throw usage(
      `The CSV's column "${header}" is in ${other[1]!.toUpperCase()}; carbon buys in US dollars. Nothing was bought.`,
      'Convert it to dollars (a column amount or "Cost (USD)"), or buy by kg.',
    );
  }
  return (Object.keys(HEADER_ALIASES) as Array<keyof typeof HEADER_ALIASES>).find((f) => HEADER_ALIASES[f].includes(name));
}

/** Which column holds which field; unknown columns are ignored, and named so. */
export function mapHeaders(headers: readonly string[]): { columns: Columns; ignored: string[] } {
  const columns = new Columns(headers.length);
  const ignored: string[] = [];
  headers.forEach((header, i) => {
    const field = fieldOf(header);
    if (field === undefined) {
      if (header.trim() !== '') ignored.push(header);
      return;
    }
    const earlier = columns.get(field);
    if (earlier !== undefined)
      throw usage(`The CSV has two ${field} columns: "${headers[earlier]}" and "${header}"; keep one. Nothing was bought.`);
    columns.set(field, i);
  });
  if (!columns.has('kg') && !columns.has('amount') && !columns.has('amount_cents')) {
    throw usage(
      `The CSV's header (${headers.map((h) => JSON.stringify(h)).join(', ')}) names no kg, amount or amount_cents column. Nothing was bought.`,
      'The first line must name the columns, e.g. "kg,reference" or "amount,reference" (dollars); see `carbon buy --help`.',
    );
  }
  return { columns, ignored };
}

/**
 * How the file writes numbers. A comma-separated file writes them as carbon's options do (`1,000`,
 * `12.50`); a semicolon- or tab-separated one, as the locales that choose those delimiters do:
 * the decimal comma, thousands grouped by dots or spaces (`1.200`, `1.234,50`, `1 234,50`).
 */
export type NumberStyle = 'point' | 'comma';

/** A number read one way: its whole part's digits and its decimals' (no sign: quantities are positive). */
interface Reading {
  whole: string;
  decimals: string;
}

const WHOLE = new RegExp(`^${WHOLE_DIGITS}$`);
const POINT = new RegExp(String.raw`^(${WHOLE_DIGITS})(?:\.(\d+))?$`);
// The same grouping character all through: dots, spaces (also no-break and narrow no-break) or apostrophes.
const COMMA = /^([1-9]\d{0,2}(?:([. \u00a0\u202f'])\d{3}(?:\2\d{3})*)|\d+)(?:,(\d+))?$/;

function readPoint(text: string): Reading | null {
  const m = POINT.exec(text);
  return m ? { whole: m[1]!.replace(/,/g, ''), decimals: m[2] ?? '' } : null;
}
function readComma(text: string): Reading | null {
  const m = COMMA.exec(text);
  return m ? { whole: m[1]!.replace(/[. \u00a0\u202f']/g, ''), decimals: m[3] ?? '' } : null;
}

/** The value of a reading in the field's unit (kg, or cents), or null when the field cannot hold it. */
function amountOf(r: Reading | null, field: 'kg' | 'amount' | 'amount_cents'): number | null {
  if (r === null) return null;
  let n: number;
  if (field === 'amount') {
    if (r.decimals.length > 2) return null;
    n = Number(r.whole) * 100 + Number(r.decimals.padEnd(2, '0'));
  } else {
    if (r.decimals !== '') return null;
    n = Number(r.whole);
  }
  return Number.isSafeInteger(n) ? n : null;
}

/** A reading as a plain number: 1200, 1.2. */
const shown = (r: Reading) => {
  const decimals = r.decimals.replace(/0+$/, '');
  return `${r.whole.replace(/^0+(?=\d)/, '')}${decimals === '' ? '' : `.${decimals}`}`;
};

/**
 * A number of a decimal-comma file: read as the locale writes it; a number that locale cannot
 * write (`12.50`, `1,234.50`) as carbon's options do; and refused, naming both readings, when it is
 * a number of the locale that the field cannot hold but reads as one the other way (`1,200` kg:
 * 1.2, or 1,200?).
 */
function readCommaNumber(text: string, field: 'kg' | 'amount' | 'amount_cents'): number | string {
  const local = readComma(text);
  const other = readPoint(text);
  const l = amountOf(local, field);
  const o = amountOf(other, field);
  if (local !== null && l !== null) {
    if (o !== null && o !== l) return twoWays(text, field, local, other!);
    return l;
  }
  if (local !== null && o !== null) return twoWays(text, field, local, other!);
  if (o !== null) return o;
  const what = field === 'amount' ? 'dollars such as 12,50 or 1.234,50' : 'a whole number such as 500 or 1.000';
  const decimals = field === 'amount' ? ' (at most two decimals: whole cents)' : ' (no decimals)';
  return `${field} must be ${what}, not "${text}"${local !== null || other !== null ? decimals : ''}`;
}

function twoWays(text: string, field: string, local: Reading, other: Reading): string {
  return (
    `${field} "${text}" could be read two ways: ${shown(local)} (a decimal comma, as a semicolon- or tab-separated file writes) ` +
    `or ${shown(other)} (a comma grouping thousands); write it without grouping, e.g. ${shown(other)}`
  );
}

/** One row's purchase body, or why it has none. */
export function readRow(cells: readonly string[], columns: Columns, style: NumberStyle = 'point'): PurchaseParams | string {
  const cell = (f: Field) => {
    const i = columns.get(f);
    return i === undefined ? '' : (cells[i] ?? '').trim();
  };
  // A cell past the header's columns: most often a number split by an unquoted comma (`1,200` as 1
  // and 200), which read would buy the wrong quantity. Empty ones (a spreadsheet's trailing commas) are nothing.
  const extra = cells.slice(columns.width).filter((c) => c.trim() !== '');
  if (extra.length > 0) {
    const shown = extra.slice(0, 3).map((c) => JSON.stringify(c.trim()));
    return `${cells.length} cells where the header names ${columns.width} column${columns.width === 1 ? '' : 's'} (past them: ${shown.join(', ')}${extra.length > 3 ? ', …' : ''}): an unquoted comma splits a cell in two (1,200 is 1 and 200), so quote such a cell ("1,200"), or name the column in the header`;
  }
  const given = (['kg', 'amount', 'amount_cents'] as const).filter((f) => cell(f) !== '');
  if (given.length === 0) return 'no kg, amount or amount_cents';
  if (given.length > 1) return `give one of kg, amount and amount_cents, not ${given.join(' and ')}`;
  const params: PurchaseParams = {};
  const [field] = given as ['kg' | 'amount' | 'amount_cents'];
  const text = cell(field);
  if (style === 'comma') {
    const n = readCommaNumber(field === 'amount' ? text.replace(/^\$\s*|\s*\$$/g, '') : text, field);
    if (typeof n === 'string') return n;
    if (field === 'kg') params.kg = n;
    else params.amount_cents = n;
  } else if (field === 'amount') {
    const cents = parseDollars(text);
    if (cents === null)
      return `amount must be dollars such as 12.50, not "${text}"${/\.\d{3,}$/.test(text) ? ' (at most two decimals: whole cents)' : whyNotANumber(text.replace(/^\$/, ''))}`;
    params.amount_cents = cents;
  } else {
    // kg and amount_cents: whole numbers, grouped by commas or not at all (the API judges the range).
    if (!WHOLE.test(text)) return `${field} must be a whole number such as 500 or 1,000, not "${text}"${whyNotANumber(text, true)}`;
    const n = Number(text.replace(/,/g, ''));
    if (!Number.isSafeInteger(n)) return `${field} is too large: "${text}"`;
    if (field === 'kg') params.kg = n;
    else params.amount_cents = n;
  }
  // Said in the dollars the file wrote, as --amount's is: the API's refusal names amount_cents, in cents.
  const cents = params.amount_cents;
  if (field === 'amount' && cents !== undefined && (cents < LIMITS.amountCentsMin || cents > LIMITS.amountCentsMax))
    return `amount must be ${dollars(LIMITS.amountCentsMin)} to ${dollars(LIMITS.amountCentsMax)} (the API's amount_cents, 1 to ${grouped(LIMITS.amountCentsMax)}), not "${text}"`;
  const reference = cell('reference');
  if (reference !== '') params.reference = reference;
  return params;
}
