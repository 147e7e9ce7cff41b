import { OFFSET_STATUSES } from '../../../api/types.js';
import type { CommandSpec } from '../../command.js';
import { flagTable, QUIET_FLAG } from '../../flags.js';

export const LIST_FORMATS = ['table', 'plain', 'json', 'csv'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

export const list: CommandSpec = {
  name: 'list',
  description: 'list offsets, newest first',
  get flags() {
    return [
      ...flagTable(
        `
      --limit <n>             how many offsets to print, across pages (default 10)
      --page-size <n>         offsets per request (1 to 100; default: what --limit needs, 100 with --all)
      --starting-after <id>   the page after this offset
      --reference <text>      only offsets with this reference
      --all                   every offset, page by page, streamed (NDJSON with --json)
      --status <status>       only offsets in this state
      --since <when>          only offsets created since: a day (2026-01-31, today, yesterday) or an age (7d, 12h, 30m)
      --until <when>          only offsets created until: a day (included) or an age
    `,
        { '--starting-after': { values: 'offsetIds' }, '--status': { choices: OFFSET_STATUSES } },
      ),
      QUIET_FLAG,
      { flags: '--format <format>', description: 'output format', choices: LIST_FORMATS },
    ];
  },
  examples: [
    'carbon list',
    "carbon list --json | jq '.data[].id'",
    'carbon list --limit 250 --status placed --since 30d',
    'carbon list --all --format csv > offsets.csv',
    "carbon list --all --json | jq -s 'map(.kg) | add'",
    'carbon list --all -q | xargs -n1 carbon show --json',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
