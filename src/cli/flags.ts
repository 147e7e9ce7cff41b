import type { FlagSpec } from './command.js';

/** What a flag of a table takes besides its description (choices, completion values), by its long name ('--status'). */
export type FlagExtras = Readonly<Record<string, Omit<FlagSpec, 'flags' | 'description'>>>;

/**
 * A flag table written as aligned text: on each line the flags as commander writes them, two or more
 * spaces, the description. A line indented further than the flags carries on the description above
 * it (joined with a space). Parsing it is a split and a regular expression a line: cheap at start-up.
 */
export function flagTable(text: string, extras: FlagExtras = {}): FlagSpec[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const indent = Math.min(...lines.map(indentOf));
  const rows: FlagSpec[] = [];
  for (const line of lines) {
    const last = rows.at(-1);
    if (indentOf(line) > indent && last !== undefined) {
      last.description += ` ${line.trim()}`;
      continue;
    }
    const match = /^(\S.*?)\s{2,}(\S.*)$/.exec(line.trim());
    if (match === null) throw new Error(`flag table: no description in "${line.trim()}"`);
    const [, flags, description] = match as unknown as [string, string, string];
    rows.push({ flags, description, ...extras[/--[\w-]+/.exec(flags)?.[0] ?? flags] });
  }
  return rows;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** What to buy: `carbon buy` and `carbon quote` take the same four flags. */
export const PURCHASE_FLAGS = flagTable(`
  --kg <n>             kg of CO2 to offset (1 to 1,000,000)
  --amount-cents <n>   US cents to spend: buys the most whole kg that fits
  --amount <dollars>   dollars to spend, e.g. 12.50
  --reference <text>   your own label (1 to 200 characters; never public)
`);

export const QUIET_FLAG: FlagSpec = { flags: '-q, --quiet', description: 'print only the offset ids, one a line (for xargs and loops)' };
