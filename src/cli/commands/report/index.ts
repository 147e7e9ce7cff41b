import type { CommandSpec } from '../../command.js';

export const REPORT_GROUPS = ['month', 'week', 'quarter', 'reference'] as const;
export type ReportGroup = (typeof REPORT_GROUPS)[number];
export const REPORT_FORMATS = ['table', 'plain', 'csv', 'md', 'json', 'html'] as const;

export const report: CommandSpec = {
  name: 'report',
  description: 'kg and dollars per month, week, quarter or reference, over a span: for a sustainability report',
  flags: [
    { flags: '--by <what>', description: 'group by', choices: REPORT_GROUPS, default: 'month' },
    { flags: '--prefix-sep <sep>', description: 'with --by reference: group references by the part before this separator' },
    { flags: '--since <day>', description: 'from this day on (YYYY-MM-DD, UTC)' },
    { flags: '--until <day>', description: 'up to and including this day (YYYY-MM-DD, UTC)' },
    { flags: '--format <format>', description: 'output format (html: one printable page, with a chart)', choices: REPORT_FORMATS },
  ],
  examples: [
    'carbon report',
    'carbon report --by quarter --since 2026-01-01 --format md',
    'carbon report --format html > report.html',
    'carbon report --by reference --prefix-sep - --format csv > by-team.csv',
    'carbon report --live --json | jq .total.kg',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
