import { OFFSET_STATUSES } from '../../../api/types.js';
import type { CommandSpec } from '../../command.js';
import { QUIET_FLAG } from '../../flags.js';

export const LIST_FORMATS = ['table', 'plain', 'json', 'csv'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

export const list: CommandSpec = {
  name: 'list',
  description: 'list offsets, newest first',
  flags: [
    { flags: '--limit <n>', description: 'how many offsets to print, across pages (default 10)' },
    { flags: '--page-size <n>', description: 'offsets per request (1 to 100; default: what --limit needs, 100 with --all)' },
    { flags: '--starting-after <id>', description: 'the page after this offset', values: 'offsetIds' },
    { flags: '--reference <text>', description: 'only offsets with this reference' },
    { flags: '--all', description: 'every offset, page by page, streamed (NDJSON with --json)' },
    { flags: '--status <status>', description: 'only offsets in this state', choices: OFFSET_STATUSES },
    { flags: '--since <when>', description: 'only offsets created since: a day (2026-01-31) or an age (7d, 12h, 30m)' },
    { flags: '--until <when>', description: 'only offsets created until: a day (included) or an age' },
    QUIET_FLAG,
    { flags: '--format <format>', description: 'output format', choices: LIST_FORMATS },
  ],
  examples: [
    'carbon list',
    'carbon list --json | jq \'.data[].id\'',
    'carbon list --limit 250 --status placed --since 30d',
    'carbon list --all --format csv > offsets.csv',
    'carbon list --all --json | jq -s \'map(.kg) | add\'',
    'carbon list --all -q | xargs -n1 carbon show --json',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
