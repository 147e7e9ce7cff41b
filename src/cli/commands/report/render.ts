import type { Context } from '../../context.js';
import { type Column, headerLine, layout, line, terminalWidth } from '../../render/fit.js';
import { dollars, grouped, oneLine } from '../../render/format.js';
import { markdownCell } from '../../render/markdown.js';
import type { Paint } from '../../render/resources.js';
import { SANDBOX_DETAIL, SANDBOX_HEADLINE } from '../../render/sandbox-note.js';
import type { Weight } from '../../render/weight.js';
import { NO_REFERENCE, type ReportGroup } from './index.js';
import type { ReportRow } from './run.js';

// `carbon report`'s rows for a person: a Markdown table, and a terminal's table with a bar of kg a row.

const money = (r: ReportRow) => dollars(r.amount_cents);

/** A GitHub-flavoured Markdown table; every group is escaped (markdown.ts), so no reference can add markup or split a row. */
export function markdown(
  by: ReportGroup,
  w: Weight,
  list: readonly ReportRow[],
  total: ReportRow,
  sandbox: boolean,
  counted: string,
): string {
  const cell = (r: ReportRow) =>
    r === total ? '**total**' : r.group === null ? `*${markdownCell(NO_REFERENCE)}*` : markdownCell(r.group) || ' ';
  const md = [
    ...(sandbox ? [`> **${markdownCell(SANDBOX_HEADLINE)}** ${markdownCell(SANDBOX_DETAIL)}`, ''] : []),
    `| ${markdownCell(by)} | offsets | ${w.heading()} | ${w.heading('placed')} | ${w.heading('processing')} | amount |`,
    '|---|---:|---:|---:|---:|---:|',
    ...[...list, total].map(
      (r) =>
        `| ${cell(r)} | ${grouped(r.offsets)} | ${w.text(r.kg)} | ${w.text(r.placed_kg)} | ${w.text(r.processing_kg)} | ${markdownCell(money(r))} |`,
    ),
    '',
    `*${markdownCell(counted)}*`,
  ];
  return `${md.join('\n')}\n`;
}

/**
 * A table with a bar of kg per row, scaled to the largest, fitted to the terminal (fit.ts): the
 * bar (30 cells, down to 5) and a long group (a reference, down to 10) narrow, the wider first;
 * then columns go, in this order: the bar, processing kg, placed kg, the offsets, the amount.
 * The group and kg always stay.
 */
export function printTable(ctx: Context, paint: Paint, by: ReportGroup, w: Weight, list: readonly ReportRow[], total: ReportRow): void {
  const width = terminalWidth(ctx.out.stdout, ctx.env);
  const columns: Column[] = [
    { header: by, min: 10 },
    { header: 'offsets', align: 'right', drop: 4 },
    { header: w.heading(), align: 'right' },
    { header: w.heading('placed'), align: 'right', drop: 3 },
    { header: w.heading('processing'), align: 'right', drop: 2 },
    { header: 'amount', align: 'right', drop: 5 },
    { header: '', min: 5, drop: 1 },
  ];
  const BAR = columns.length - 1;
  const max = Math.max(...list.map((r) => r.kg), 1);
  // A period without purchases has no bar; any other at least one cell.
  const bar = (r: ReportRow, cells: number) => (r === total || r.kg === 0 ? '' : '█'.repeat(Math.max(1, Math.round((r.kg / max) * cells))));
  const kgCells = (r: ReportRow) => [r.kg, r.placed_kg, r.processing_kg].map((kg) => `${w.text(kg)} ${w.unit}`);
  const tableRows = (cells: number) =>
    [...list, total].map((r) => [oneLine(r.group ?? NO_REFERENCE), grouped(r.offsets), ...kgCells(r), money(r), bar(r, cells)]);
  // The bar in the status colours: its placed kg green, its processing kg yellow (as the HTML report's bars, and `carbon list`'s statuses).
  const painted = (bar: string, r: ReportRow | undefined) => {
    if (r === undefined || bar === '') return bar;
    const placed = Math.round((bar.length * r.placed_kg) / r.kg);
    return `${placed > 0 ? paint.green(bar.slice(0, placed)) : ''}${placed < bar.length ? paint.yellow(bar.slice(placed)) : ''}`;
  };
  const at = layout(columns, tableRows(30), width);
  // The bars are drawn again to the width their column got, not cut.
  const barCells = at.widths[at.shown.indexOf(BAR)] ?? 30;
  const out = [
    headerLine(columns, at, width, paint.dim),
    ...tableRows(barCells).map((cells, j) =>
      line(
        columns,
        at,
        // The offsets without a reference dimmed, apart from a reference that reads "(no reference)".
        cells.map((c, i) => (i === BAR ? painted(c, list[j]) : i === 0 && list[j]?.group === null ? paint.dim(c) : c)),
        width,
      ),
    ),
  ];
  ctx.out.data(out.join('\n'));
}
