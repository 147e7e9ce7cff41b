import type { Balance, Impact, Offset, Quote } from '../../api/types.js';
import { shownReference } from '../../service/keys.js';
import { type Column, type Layout, layout, lines, table } from './fit.js';
import { dollars, grouped, kg, oneLine, ratePerKg, when } from './format.js';
import { SANDBOX_CSV_COLUMN, SANDBOX_MODE, SANDBOX_PURCHASE } from './sandbox-note.js';

/**
 * Resources as text. Each resource has two renderings: a card for a terminal (label, value)
 * and plain `field<TAB>value` lines with the API's own field names and raw values for pipes.
 * A Paint is chalk when colour is on, identity functions when it is off.
 */
export interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
}

export const noPaint: Paint = { bold: (s) => s, dim: (s) => s, green: (s) => s, yellow: (s) => s, red: (s) => s, cyan: (s) => s };

function statusText(status: Offset['status'], paint: Paint): string {
  if (status === 'placed') return paint.green(status);
  if (status === 'refunded') return paint.red(status);
  return paint.yellow(status);
}

/**
 * The mode, and in the sandbox that it is one: a card is read (and screenshotted, pasted) by
 * people for whom "live" means real money, so its words say it, not only its colour.
 */
export function modeText(livemode: boolean, paint: Paint, sandbox = false): string {
  return `${livemode ? paint.red('live') : paint.cyan('test')}${sandbox ? paint.yellow(` · ${SANDBOX_MODE}`) : ''}`;
}

/**
 * What a table of the sandbox's offsets says under it (on stderr, as `carbon report`'s table says
 * it): the card's own mode row, `mode  live · sandbox: not real`, since a table has no mode column.
 */
export function sandboxTableNote(livemode: boolean, paint: Paint): string {
  return card([['mode', modeText(livemode, paint, true)]], paint).trimEnd();
}

function card(rows: Array<[string, string]>, paint: Paint): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return `${rows.map(([label, value]) => `${paint.dim(label.padEnd(width))}  ${value}`).join('\n')}\n`;
}

/** Plain rows: field TAB value, raw API values, null as the empty string. */
export function plainFields(fields: Array<[string, string | number | boolean | null]>): string {
  return `${fields.map(([k, v]) => `${k}\t${v === null ? '' : oneLine(String(v))}`).join('\n')}\n`;
}

/**
 * A reference as a person reads it on a terminal: one line, and an API key pasted into it masked, as
 * the developer page masks it. Data keeps it as the API returned it (--json, CSV, a pipe).
 */
const referenceLine = (reference: string): string => oneLine(shownReference(reference));

/** `review`: the purchase's quote said it waits for review (the Offset itself does not say). `sandbox`: the sandbox's offset. */
export function offsetCard(o: Offset, paint: Paint, sandbox = false, review = false): string {
  return card(
    [
      ['id', paint.bold(o.id)],
      [
        'status',
        `${statusText(o.status, paint)}${review && o.status === 'processing' ? paint.yellow(' · waiting for review (above the review limit)') : ''}`,
      ],
      ['mode', modeText(o.livemode, paint, sandbox)],
      ['kg', kg(o.kg)],
      ['amount', dollars(o.amount_cents)],
      ['rate', ratePerKg(o.rate_millicents_per_kg)],
      ['requested', o.requested.kg !== null ? kg(o.requested.kg) : dollars(o.requested.amount_cents ?? 0)],
      ['reference', o.reference === null ? paint.dim('—') : referenceLine(o.reference)],
      ['created', when(o.created)],
      ['placed', o.placed === null ? paint.dim('—') : when(o.placed)],
      ['certificate', o.certificate_url ?? paint.dim('—')],
    ],
    paint,
  );
}

export function offsetPlain(o: Offset): string {
  return plainFields([
    ['id', o.id],
    ['status', o.status],
    ['livemode', o.livemode],
    ['kg', o.kg],
    ['amount_cents', o.amount_cents],
    ['currency', o.currency],
    ['rate_millicents_per_kg', o.rate_millicents_per_kg],
    ['requested_kg', o.requested.kg],
    ['requested_amount_cents', o.requested.amount_cents],
    ['reference', o.reference],
    ['created', o.created],
    ['placed', o.placed],
    ['certificate_url', o.certificate_url],
  ]);
}

export function quoteCard(q: Quote, paint: Paint, sandbox = false): string {
  return card(
    [
      ['buys', kg(q.kg)],
      ['costs', paint.bold(dollars(q.amount_cents))],
      ['rate', ratePerKg(q.rate_millicents_per_kg)],
      ['mode', modeText(q.livemode, paint, sandbox)],
      ['balance', dollars(q.available_cents)],
      ['covered', q.sufficient_balance ? paint.green('yes') : paint.red(`no: ${dollars(q.amount_cents - q.available_cents)} short`)],
      [
        'review',
        q.requires_review
          ? paint.yellow(q.livemode ? 'yes: it would wait for review' : 'yes (above the review limit; test offsets are not held)')
          : 'no',
      ],
    ],
    paint,
  );
}

export function quotePlain(q: Quote): string {
  return plainFields(Object.entries(q).filter(([k]) => k !== 'object') as Array<[string, string | number | boolean]>);
}

export function balanceCard(b: Balance, paint: Paint, sandbox = false): string {
  return card(
    [
      ['available', paint.bold(dollars(b.available_cents))],
      ['mode', modeText(b.livemode, paint, sandbox)],
      ['rate', ratePerKg(b.rate_millicents_per_kg)],
      ['buys', `${kg(Math.floor((b.available_cents * 1000) / b.rate_millicents_per_kg))} at this rate`],
    ],
    paint,
  );
}

export function balancePlain(b: Balance): string {
  return plainFields(Object.entries(b).filter(([k]) => k !== 'object') as Array<[string, string | number | boolean]>);
}

export function impactCard(i: Impact, paint: Paint, sandbox = false): string {
  return card(
    [
      ['placed', paint.bold(paint.green(kg(i.placed_kg)))],
      ['processing', kg(i.processing_kg)],
      ['total', kg(i.placed_kg + i.processing_kg)],
      ['offsets', grouped(i.offsets)],
      ['mode', modeText(i.livemode, paint, sandbox)],
    ],
    paint,
  );
}

export function impactPlain(i: Impact): string {
  return plainFields(Object.entries(i).filter(([k]) => k !== 'object') as Array<[string, string | number | boolean]>);
}

/**
 * The list's table on a terminal, fitted to its width (fit.ts): the reference is cut first (down
 * to 10 cells), then columns go, least useful first: CREATED (the list is newest first already),
 * AMOUNT (kg at the account's rate), REFERENCE, KG, then STATUS, so a terminal narrower than the
 * id and its status shows the id alone, whole. The id is never dropped or cut.
 */
const LIST_TABLE: readonly Column[] = [
  { header: 'ID' },
  { header: 'STATUS', drop: 5 },
  { header: 'KG', align: 'right', drop: 4 },
  { header: 'AMOUNT', align: 'right', drop: 2 },
  { header: 'REFERENCE', min: 10, drop: 3 },
  { header: 'CREATED', drop: 1 },
];

/** One plain row of a list: raw values, tab-separated, nothing truncated. */
export function offsetRow(o: Offset): string {
  return [o.id, o.status, o.kg, o.amount_cents, o.reference === null ? '' : oneLine(o.reference), o.created].join('\t');
}

/** One row of a list for a terminal, as table cells (LIST_TABLE). */
function offsetCells(o: Offset, paint: Paint): string[] {
  return [
    o.id,
    statusText(o.status, paint),
    grouped(o.kg),
    dollars(o.amount_cents),
    o.reference === null ? paint.dim('—') : referenceLine(o.reference),
    when(o.created),
  ];
}

/** A page of a list as a table fitted to `width` cells (undefined: as wide as it takes). */
export function offsetTable(offsets: readonly Offset[], paint: Paint, width: number | undefined): string {
  const rows = offsets.map((o) => offsetCells(o, paint));
  return table(LIST_TABLE, rows, width, paint.dim);
}

/**
 * A long list streamed to a terminal (--all), a batch of rows at a time: a table cannot wait for
 * every row, so the columns are sized by the first batch (with the header) and later rows are
 * cut to them.
 */
export function offsetStream(paint: Paint, width: number | undefined): (batch: readonly Offset[]) => string {
  let at: Layout | undefined;
  return (batch) => {
    const rows = batch.map((o) => offsetCells(o, paint));
    const first = at === undefined;
    at ??= layout(LIST_TABLE, rows, width);
    return lines(LIST_TABLE, at, rows, width, first ? paint.dim : undefined)
      .map((l) => `${l}\n`)
      .join('');
  };
}

/**
 * CSV columns: every field of an offset, flattened, with the API's names. The sandbox's offsets
 * have one more, last: `environment`, reading `sandbox: not a real purchase` on every row, as
 * `carbon report`'s CSV has (a spreadsheet keeps no header, and `livemode` reads `true` there).
 */
export const CSV_COLUMNS = [
  'id',
  'status',
  'livemode',
  'kg',
  'amount_cents',
  'currency',
  'rate_millicents_per_kg',
  'requested_kg',
  'requested_amount_cents',
  'reference',
  'created',
  'placed',
  'certificate_url',
] as const;

/**
 * RFC 4180: quote a field when it holds a comma, a quote or a line break; double the quotes. Text
 * that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return:
 * a reference is anyone's text) gets a leading `'`, so it shows as the text it is (OWASP, "CSV
 * injection"). Numbers are written as they are. Written to a terminal (`terminal`), a field's
 * control characters are spaces, as in a table: what a caller sent is never obeyed by the terminal
 * (an escape sequence, a bare CR); a file or a pipe gets the text as it was sent.
 */
export function csvField(value: string | number | boolean | null, terminal = false): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = terminal ? oneLine(value) : value;
  const s = FORMULA_START.includes(text.charAt(0)) ? `'${text}` : text;
  // Searched for, not matched with regular expressions: a regular expression's test of each field
  // of a `list --all --format csv` of a million offsets took 13 MB more of memory, and a sixth of its time.
  return s.includes('"') || s.includes(',') || s.includes('\n') || s.includes('\r') ? `"${s.replaceAll('"', '""')}"` : s;
}
/** What a spreadsheet takes for the start of a formula. */
const FORMULA_START = ['=', '+', '-', '@', '\t', '\r'];

/**
 * One CSV line of the fields; in the sandbox, with the last column that says so: its name
 * (`environment`) on the header, `sandbox: not a real purchase` on a row. Every CSV of purchases
 * carbon writes (a list, a batch's results) ends the same way. `terminal`: see csvField.
 */
export function csvLine(
  fields: ReadonlyArray<string | number | boolean | null>,
  sandbox: boolean,
  header = false,
  terminal = false,
): string {
  const line = fields.map((f) => csvField(f, terminal)).join(',');
  return sandbox ? `${line},${csvField(header ? SANDBOX_CSV_COLUMN : SANDBOX_PURCHASE)}\r\n` : `${line}\r\n`;
}

export function csvHeader(sandbox = false): string {
  return csvLine(CSV_COLUMNS, sandbox, true);
}

export function csvRow(o: Offset, sandbox = false, terminal = false): string {
  const values = [
    o.id,
    o.status,
    o.livemode,
    o.kg,
    o.amount_cents,
    o.currency,
    o.rate_millicents_per_kg,
    o.requested.kg,
    o.requested.amount_cents,
    o.reference,
    o.created,
    o.placed,
    o.certificate_url,
  ];
  return csvLine(values, sandbox, false, terminal);
}
