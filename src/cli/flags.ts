import type { FlagSpec } from './command.js';

/** What a flag of a table takes besides its description (choices, completion values), by its long name ('--status'). */
export type FlagExtras = Readonly<Record<string, Omit<FlagSpec, 'flags' | 'description'>>>;

/**
 * A flag table written as aligned text: on each line the flags as commander writes them, two or more
 * spaces, the description. A line indented further than the flags carries on the description above
 * it (joined with a space). It runs at every start-up, so it stays plain string work: no regular
 * expression, no spread.
 */
export function flagTable(text: string, extras?: FlagExtras): FlagSpec[] {
  const rows: FlagSpec[] = [];
  let indent = -1;
  let used = 0;
  for (const line of text.split('\n')) {
    const rest = line.trimStart();
    if (rest === '') continue;
    const start = line.length - rest.length;
    if (indent < 0) indent = start;
    const last = rows[rows.length - 1];
    if (start > indent && last !== undefined) {
      last.description += ` ${rest}`;
      continue;
    }
    const gap = rest.indexOf('  ');
    if (gap < 0) throw new Error(`flag table: no description in "${rest}"`);
    const row: FlagSpec = { flags: rest.slice(0, gap), description: rest.slice(gap).trim() };
    const extra = extras?.[row.flags.slice(row.flags.indexOf('--')).split(' ')[0] ?? ''];
    if (extra !== undefined) used++;
    rows.push(extra === undefined ? row : Object.assign(row, extra));
  }
  // A misspelt name in extras would lose its choices or completion values without a word.
  if (extras !== undefined && used !== Object.keys(extras).length) throw new Error('flag table: extras for a flag it does not have');
  return rows;
}

/** A flag that says what is bought or what it may cost: given twice with two values, refused (FlagSpec.once). */
export const ONCE = { once: true } as const;

/** What to buy: `carbon buy` and `carbon quote` take the same four flags. */
export const purchaseFlags = (): FlagSpec[] =>
  flagTable(
    `
  --kg <n>             kg of CO2 to offset (1 to 1,000,000)
  --amount-cents <n>   US cents to spend: buys the most whole kg that fits
  --amount <dollars>   dollars to spend, e.g. 12.50
  --reference <text>   your own label (1 to 200 characters; never public)
`,
    { '--kg': ONCE, '--amount-cents': ONCE, '--amount': ONCE },
  );

export const QUIET_FLAG: FlagSpec = { flags: '-q, --quiet', description: 'print only the offset ids, one a line (for xargs and loops)' };
