/**
 * Tables that fit the terminal (issue 15): a table never wraps. Columns are sized to their
 * widest cell; when the table is wider than the terminal, the columns that may be cut (a
 * reference, a report's group) are cut with '…', widest first, down to their minimum; if that is
 * not enough, the least useful columns are dropped whole, in the order each table gives, and the
 * cut columns get their room back. A column without a minimum is never cut (the id: people copy
 * it), one without a drop rank never dropped. Should the rest still not fit (a terminal narrower
 * than the id), the line is cut at the right edge: it never wraps.
 *
 * Only for a terminal: pipes and --format plain|csv|json never come here. Width is counted in
 * terminal cells: ANSI colour codes take none, combining marks none, East Asian wide characters
 * and emoji two (ranges after wcwidth; a terminal with other fonts may disagree on rare ones).
 * A cell that is cut loses its colour.
 */

export interface Column {
  header: string;
  align?: 'left' | 'right';
  /** Cut with '…' down to this many cells when the table is too wide; without it, never cut. */
  min?: number;
  /** Dropped when cutting is not enough, the lowest rank first; without it, never dropped. */
  drop?: number;
}

/** Which columns are shown (indexes into the table's columns), and how wide each is. */
export interface Layout {
  shown: number[];
  widths: number[];
}

/** Between two columns. */
export const GAP = 2;

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// Made on first use: Unicode property classes cost ~0.4 ms to build, which every command would
// pay at start-up, tables or not.
let widthClasses: { zero: RegExp; wide: RegExp } | undefined;
const classes = () => (widthClasses ??= {
  zero: /[\p{Mn}\p{Me}\p{Cf}\p{Cc}]/u,
  wide: /[\p{Emoji_Presentation}\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u,
});

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

function charWidth(char: string): number {
  const { zero, wide } = classes();
  if (zero.test(char)) return 0;
  return wide.test(char) ? 2 : 1;
}

/** Terminal cells `text` takes. */
export function displayWidth(text: string): number {
  const plain = stripAnsi(text);
  // Nearly every cell is printable ASCII: one cell a character.
  if (/^[\x20-\x7e]*$/.test(plain)) return plain.length;
  let width = 0;
  for (const char of plain) width += charWidth(char);
  return width;
}

/** `text` in at most `width` cells: as it is if it fits, else cut and ended with '…' (colour dropped). */
export function cut(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const char of stripAnsi(text)) {
    const w = charWidth(char);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return `${out}…`;
}

const span = (widths: number[]) => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);

/** The widths of `shown` columns, the cuttable ones narrowed (widest first) until the line fits or all are at their minimum. */
function narrowed(columns: readonly Column[], shown: number[], natural: number[], width: number | undefined): number[] {
  const widths = shown.map((i) => natural[i]!);
  if (width === undefined) return widths;
  for (let over = span(widths) - width; over > 0; over--) {
    let widest = -1;
    shown.forEach((i, j) => {
      const min = columns[i]!.min;
      if (min !== undefined && widths[j]! > Math.max(min, 1) && (widest === -1 || widths[j]! > widths[widest]!)) widest = j;
    });
    if (widest === -1) break;
    widths[widest]!--;
  }
  return widths;
}

/** How `rows` fit in `width` cells (undefined: any width, nothing cut or dropped). */
export function layout(columns: readonly Column[], rows: readonly (readonly string[])[], width: number | undefined): Layout {
  const natural = columns.map((c, i) => rows.reduce((w, r) => Math.max(w, displayWidth(r[i] ?? '')), displayWidth(c.header)));
  const droppable = columns.flatMap((c, i) => (c.drop === undefined ? [] : [i])).sort((a, b) => columns[a]!.drop! - columns[b]!.drop!);
  let shown = columns.map((_, i) => i);
  for (;;) {
    const widths = narrowed(columns, shown, natural, width);
    const next = droppable.shift();
    if (width === undefined || span(widths) <= width || next === undefined) return { shown, widths };
    shown = shown.filter((i) => i !== next);
  }
}

/**
 * One line of a table laid out by `layout`: each cell padded to its column (a cell wider than a
 * cuttable column is cut), two spaces between columns, no trailing blanks, and never more than
 * `width` cells.
 */
export function line(columns: readonly Column[], at: Layout, cells: readonly string[], width: number | undefined): string {
  const text = at.shown
    .map((i, j) => {
      const w = at.widths[j]!;
      const cell = columns[i]!.min === undefined ? (cells[i] ?? '') : cut(cells[i] ?? '', w);
      const pad = ' '.repeat(Math.max(0, w - displayWidth(cell)));
      return columns[i]!.align === 'right' ? pad + cell : cell + pad;
    })
    .join(' '.repeat(GAP))
    .replace(/ +$/, '');
  return width === undefined ? text : cut(text, width);
}

/** The header line: each header painted (dim) on its own, so padding stays unpainted. */
export function headerLine(columns: readonly Column[], at: Layout, width: number | undefined, paint: (s: string) => string): string {
  const painted = columns.map((c, j) => {
    const shownAt = at.shown.indexOf(j);
    return shownAt === -1 ? '' : paint(cut(c.header, at.widths[shownAt]!));
  });
  return line(columns.map((c) => ({ ...c, min: undefined })), at, painted, width);
}

/** A whole table: the header, then one line a row, fitted to `width`. */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[], width: number | undefined, paint: (s: string) => string): string {
  const at = layout(columns, rows, width);
  return [headerLine(columns, at, width, paint), ...rows.map((r) => line(columns, at, r, width))].join('\n');
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
