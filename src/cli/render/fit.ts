/**
 * Tables that fit the terminal (issue 15): a table never wraps. Columns are sized to their
 * widest cell; when the table is wider than the terminal, the columns that may be cut (a
 * reference, a report's group) are cut with '…', widest first, down to their minimum; if that is
 * not enough, the least useful columns are dropped whole, in the order each table gives, and the
 * cut columns get their room back. A column may ask to stay whole while the least useful ones are
 * still shown (`whole`): they are dropped before it is cut. A column without a minimum is never
 * cut (the id: people copy it), one without a drop rank never dropped. Should the rest still not
 * fit (a terminal narrower than the id), the line is cut at the right edge: it never wraps.
 *
 * fit.ts decides which columns are shown and how wide each is, and cuts the cells; cli-table3
 * draws the lines (`lines` below): fixed column widths, no borders, two spaces between columns.
 *
 * Only for a terminal (and --format table): pipes and --format plain|csv|json never come here.
 * Width is counted in terminal cells (width.ts), by fit.ts and cli-table3 alike. A cell that is
 * cut loses its colour.
 */

import { cliTable3 } from './cli-table3.js';
import { cut, displayWidth } from './width.js';

export { cut, displayWidth, stripAnsi } from './width.js';

export interface Column {
  header: string;
  align?: 'left' | 'right';
  /** Cut with '…' down to this many cells when the table is too wide; without it, never cut. */
  min?: number;
  /** Dropped when cutting is not enough, the lowest rank first; without it, never dropped. */
  drop?: number;
  /** Not cut while a column of a lower drop rank than this is shown: that one is dropped first. */
  whole?: number;
}

/** Which columns are shown (indexes into the table's columns), and how wide each is. */
export interface Layout {
  shown: number[];
  widths: number[];
}

/** Between two columns. */
const GAP = 2;

const span = (widths: number[]) => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);

/**
 * The widths of `shown` columns, the cuttable ones narrowed (widest first) until the line fits or
 * all are at their minimum. `rank`: the drop rank of the next column to drop (none: Infinity);
 * a column to keep whole before it is not cut.
 */
function narrowed(columns: readonly Column[], shown: number[], natural: number[], width: number | undefined, rank: number): number[] {
  const widths = shown.map((i) => natural[i]!);
  if (width === undefined) return widths;
  for (let over = span(widths) - width; over > 0; over--) {
    let widest = -1;
    shown.forEach((i, j) => {
      const { min, whole } = columns[i]!;
      if (min === undefined || (whole !== undefined && rank < whole)) return;
      if (widths[j]! > Math.max(min, 1) && (widest === -1 || widths[j]! > widths[widest]!)) widest = j;
    });
    if (widest === -1) break;
    widths[widest]!--;
  }
  return widths;
}

/**
 * How `rows` fit in `width` cells (undefined: any width, nothing cut or dropped). A column is at
 * least one cell wide, as cli-table3 draws it, even with nothing in it.
 */
export function layout(columns: readonly Column[], rows: readonly (readonly string[])[], width: number | undefined): Layout {
  const natural = columns.map((c, i) => rows.reduce((w, r) => Math.max(w, displayWidth(r[i] ?? '')), Math.max(1, displayWidth(c.header))));
  const droppable = columns.flatMap((c, i) => (c.drop === undefined ? [] : [i])).sort((a, b) => columns[a]!.drop! - columns[b]!.drop!);
  let shown = columns.map((_, i) => i);
  for (;;) {
    const next = droppable.shift();
    const widths = narrowed(columns, shown, natural, width, next === undefined ? Number.POSITIVE_INFINITY : columns[next]!.drop!);
    if (width === undefined || span(widths) <= width || next === undefined) return { shown, widths };
    shown = shown.filter((i) => i !== next);
  }
}

/** cli-table3's border characters, every one none but the two spaces between columns. */
export const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: ' '.repeat(GAP),
} as const;

/** cli-table3 lays a table out in time that grows with the square of its cells: a long table is drawn 50 lines a table. */
const ROWS_A_TABLE = 50;

/**
 * Lines of a table laid out by `layout`, drawn by cli-table3: the header when `paint` is given
 * (each header cut to its column, then painted on its own, so padding stays unpainted), then one
 * line a row. A cell of a cuttable column is cut to it; any other stays whole, and one wider than
 * its column (a later batch of a stream) pushes the rest of its line along. Each cell is padded to
 * its column as it aligns, two spaces between columns, no trailing blanks, and no line is more
 * than `width` cells: one that would be is cut at the edge (it never wraps).
 *
 * fit.ts cuts (whole characters, colour kept and reset after the cut), so cli-table3 is given fixed widths
 * (`colWidths`, no padding) that every cell fits: it pads and aligns, and its `truncate` ('…', as
 * fit.ts's) never has to act. Rows whose cells give the same widths are drawn by one table.
 */
export function lines(
  columns: readonly Column[],
  at: Layout,
  rows: readonly (readonly string[])[],
  width: number | undefined,
  paint?: (s: string) => string,
): string[] {
  const cells = (row: readonly string[], header: boolean) =>
    at.shown.map((i, j) => (header || columns[i]!.min !== undefined ? cut(row[i] ?? '', at.widths[j]!) : (row[i] ?? '')));
  const head =
    paint === undefined
      ? undefined
      : cells(
          columns.map((c) => c.header),
          true,
        ).map((h) => paint(h));
  const drawn = [...(head === undefined ? [] : [head]), ...rows.map((r) => cells(r, false))];
  const out: string[] = [];
  for (let from = 0; from < drawn.length; ) {
    const widths = at.widths.map((w, j) => Math.max(w, displayWidth(drawn[from]![j]!)));
    let to = from + 1;
    while (
      to < drawn.length &&
      to - from < ROWS_A_TABLE &&
      drawn[to]!.every((c, j) => Math.max(at.widths[j]!, displayWidth(c)) === widths[j])
    )
      to++;
    const withHead = from === 0 && head !== undefined;
    out.push(...draw(columns, at, widths, withHead ? drawn[0] : undefined, drawn.slice(withHead ? 1 : from, to)));
    from = to;
  }
  return out.map((l) => (width === undefined ? l : cut(l, width)));
}

/** One cli-table3 table, borderless, its columns `widths` wide: its lines, without trailing blanks. */
function draw(columns: readonly Column[], at: Layout, widths: number[], head: string[] | undefined, rows: string[][]): string[] {
  const Table = cliTable3();
  const table = new Table({
    chars: BORDERLESS,
    style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
    colWidths: widths,
    colAligns: at.shown.map((i) => columns[i]!.align ?? 'left'),
    truncate: '…',
    wordWrap: false,
    head: head ?? [],
  });
  table.push(...rows);
  // cli-table3 leaves out an empty line, which every line is when no column is shown (each
  // column of the table may be dropped, and was): one line a row all the same.
  const text = table.toString();
  return text === '' ? rows.map(() => '').concat(head === undefined ? [] : ['']) : text.split('\n').map((l) => l.replace(/ +$/, ''));
}

/** One line of a table laid out by `layout` (a row of a stream, sized by earlier rows). */
export function line(columns: readonly Column[], at: Layout, cells: readonly string[], width: number | undefined): string {
  return lines(columns, at, [cells], width)[0]!;
}

/** The header line: each header painted (dim) on its own, so padding stays unpainted. */
export function headerLine(columns: readonly Column[], at: Layout, width: number | undefined, paint: (s: string) => string): string {
  return lines(columns, at, [], width, paint)[0]!;
}

/** A whole table: the header, then one line a row, fitted to `width`. */
export function table(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  width: number | undefined,
  paint: (s: string) => string,
): string {
  return lines(columns, layout(columns, rows, width), rows, width, paint).join('\n');
}

/**
 * The width to fit, in cells, when `stream` is a terminal: COLUMNS when set to a whole number
 * (as Python's shutil.get_terminal_size reads it), else the terminal's own. Undefined, and then
 * nothing is cut, when it is not a terminal (a pipe gets every cell whole, `--format table` too)
 * or nothing says (a pty nobody sized reports 0 columns).
 */
export function terminalWidth(stream: object, env: NodeJS.ProcessEnv): number | undefined {
  const { isTTY, columns } = stream as { isTTY?: boolean; columns?: number };
  if (!isTTY) return undefined;
  if (/^\s*\d+\s*$/.test(env.COLUMNS ?? '') && Number(env.COLUMNS) > 0) return Number(env.COLUMNS);
  return columns !== undefined && columns > 0 ? columns : undefined;
}
