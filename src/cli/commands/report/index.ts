import type { CommandSpec } from '../../command.js';
import { flagTable } from '../../flags.js';

export const REPORT_GROUPS = ['month', 'week', 'quarter', 'reference'] as const;
export type ReportGroup = (typeof REPORT_GROUPS)[number];
export const REPORT_FORMATS = ['table', 'plain', 'csv', 'md', 'json', 'html'] as const;
/**
 * How table, Markdown and HTML reports name the offsets bought without a reference, set apart
 * (dimmed, in italics) from a reference that reads the same; CSV and plain leave the cell empty (a
 * reference has a character at least), JSON has null.
 */
export const NO_REFERENCE = '(no reference)';
/** The units a report's weights take: kg, or tonnes. */
export const WEIGHT_UNITS = ['kg', 't'] as const;

export const report: CommandSpec = {
  name: 'report',
  description: 'kg and dollars per month, week, quarter or reference, over a span: for a sustainability report',
  get flags() {
    return flagTable(
      `
    --by <what>           group by
    --prefix-sep <sep>    with --by reference: group references by the part before this separator
    --since <when>        from this day on: 2026-01-31, today or yesterday (UTC), or an age (30d)
    --until <when>        up to and including this day, or until an age ago
    --format <format>     output format (html: one printable page, with a chart)
    --unit <unit>         weights in kg or t (tonnes), in every format
  `,
      {
        '--by': { choices: REPORT_GROUPS, default: 'month' },
        '--format': { choices: REPORT_FORMATS },
        '--unit': { choices: WEIGHT_UNITS, default: 'kg' },
      },
    );
  },
  examples: [
    'carbon report',
    'carbon report --by quarter --since 2026-01-01 --format md',
    'carbon report --format html --unit t > report.html',
    'carbon report --by reference --prefix-sep - --format csv > by-team.csv',
    'carbon report --live --json | jq .total.kg',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
