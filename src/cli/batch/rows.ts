import type { PurchaseParams } from '../../api/types.js';
import { parseDollars } from '../../service/units.js';
import { CliError, usage } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { whyNotANumber } from '../options.js';

/**
 * The rows of a `carbon buy --from-csv` file: headers matched loosely, every row read into the
 * API's purchase body, every fault of every row found before anything is bought.
 */

type Field = 'kg' | 'amount' | 'amount_cents' | 'reference';

/**
 * Header names, as `normalize` leaves them (lower case; spaces, underscores, hyphens, dots and
 * brackets gone): `Amount (USD)`, `amount_usd` and `AMOUNT-USD` all read `amountusd`.
 */
const HEADER_ALIASES: Record<Field, readonly string[]> = {
  kg: ['kg', 'kgs', 'kilograms', 'kgco2', 'kgco2e', 'co2kg', 'co2ekg'],
  amount: ['amount', 'amountusd', 'usd', 'dollars', 'amountdollars', 'amount$'],
  amount_cents: ['amountcents', 'cents', 'amountincents', 'amountusdcents'],
  reference: ['reference', 'ref', 'label', 'memo'],
};

const normalize = (header: string): string => header.toLowerCase().replace(/[\s_\-.()[\]]/g, '');

export interface BatchRow {
  /** 1 for the first row under the header. */
  row: number;
  /** The line of the file it starts on (1 is the header). */
  line: number;
  params: PurchaseParams;
}

export interface RowFault {
  row: number;
  line: number;
  message: string;
}

/** Which column holds which field; unknown columns are ignored, and named so. */
function mapHeaders(headers: readonly string[]): { columns: Map<Field, number>; ignored: string[] } {
  const columns = new Map<Field, number>();
  const ignored: string[] = [];
  headers.forEach((header, i) => {
    const field = (Object.keys(HEADER_ALIASES) as Field[]).find((f) => HEADER_ALIASES[f].includes(normalize(header)));
    if (field === undefined) {
      if (header.trim() !== '') ignored.push(header);
      return;
    }
    const earlier = columns.get(field);
    if (earlier !== undefined) throw usage(`The CSV has two ${field} columns: "${headers[earlier]}" and "${header}"; keep one.`);
    columns.set(field, i);
  });
  if (!columns.has('kg') && !columns.has('amount') && !columns.has('amount_cents')) {
    throw usage(
      `The CSV's header (${headers.map((h) => JSON.stringify(h)).join(', ')}) names no kg, amount or amount_cents column.`,
      'The first line must name the columns, e.g. "kg,reference" or "amount,reference" (dollars); see `carbon buy --help`.',
    );
  }
  return { columns, ignored };
}

/** One row's purchase body, or why it has none. */
function readRow(cells: readonly string[], columns: Map<Field, number>): PurchaseParams | string {
  const cell = (f: Field) => {
    const i = columns.get(f);
    return i === undefined ? '' : (cells[i] ?? '').trim();
  };
  const given = (['kg', 'amount', 'amount_cents'] as const).filter((f) => cell(f) !== '');
  if (given.length === 0) return 'no kg, amount or amount_cents';
  if (given.length > 1) return `give one of kg, amount and amount_cents, not ${given.join(' and ')}`;
  const params: PurchaseParams = {};
  const [field] = given as [Field];
  const text = cell(field);
  if (field === 'amount') {
    const cents = parseDollars(text);
    if (cents === null)
      return `amount must be dollars such as 12.50, not "${text}"${/\.\d{3,}$/.test(text) ? ' (at most two decimals: whole cents)' : whyNotANumber(text.replace(/^\$/, ''))}`;
    params.amount_cents = cents;
  } else {
    // kg and amount_cents: whole numbers, grouped by commas or not at all (the API judges the range).
    if (!/^(?:\d{1,3}(?:,\d{3})+|\d+)$/.test(text))
      return `${field} must be a whole number such as 500 or 1,000, not "${text}"${whyNotANumber(text)}`;
    const n = Number(text.replace(/,/g, ''));
    if (!Number.isSafeInteger(n)) return `${field} is too large: "${text}"`;
    if (field === 'kg') params.kg = n;
    else params.amount_cents = n;
  }
  const reference = cell('reference');
  if (reference !== '') params.reference = reference;
  return params;
}

/** The file's bytes as text: UTF-8 (with or without a BOM), or a usage error that says how to save it. */
export function decodeCsv(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(
      'The CSV is not UTF-8 text; nothing was bought.',
      EXIT.usage,
      'csv_invalid',
      'Save it as "CSV UTF-8" (Excel) or convert it: iconv -f WINDOWS-1252 -t UTF-8.',
    );
  }
}

/** Parses the file's text: the rows, each fault by row, and the columns that were ignored. */
export async function readRows(text: string): Promise<{ rows: BatchRow[]; faults: RowFault[]; ignored: string[] }> {
  const { parse } = await import('csv-parse/sync');
  let records: Array<{ record: string[]; info: { lines: number } }>;
  // Comma-separated; a header line with no comma but semicolons or tabs (a spreadsheet saved in a
  // locale whose decimal mark is the comma, or pasted from one) is read with that delimiter.
  const first = /^[^\r\n]*/.exec(text)![0];
  const delimiter = first.includes(',') ? ',' : first.includes(';') ? ';' : first.includes('\t') ? '\t' : ',';
  try {
    records = parse(text, {
      bom: true,
      delimiter,
      skip_empty_lines: true,
      info: true,
      relax_column_count: true,
    }) as unknown as typeof records;
  } catch (err) {
    // csv-parse names the line: "Invalid Closing Quote: … at line 4".
    throw new CliError(`The CSV cannot be read: ${(err as Error).message}. Nothing was bought.`, EXIT.usage, 'csv_invalid');
  }
  const [header, ...body] = records;
  if (header === undefined)
    throw new CliError('The CSV is empty: it needs a header line and at least one row. Nothing was bought.', EXIT.usage, 'csv_invalid');
  const { columns, ignored } = mapHeaders(header.record);
  if (body.length === 0) throw new CliError('The CSV has a header and no rows. Nothing was bought.', EXIT.usage, 'csv_invalid');
  const rows: BatchRow[] = [];
  const faults: RowFault[] = [];
  body.forEach(({ record, info }, i) => {
    // info.lines is the line the record ends on; a record spans as many lines as its line breaks.
    const line = info.lines - record.join(',').split('\n').length + 1;
    const params = readRow(record, columns);
    if (typeof params === 'string') faults.push({ row: i + 1, line, message: params });
    else rows.push({ row: i + 1, line, params });
  });
  return { rows, faults, ignored };
}
