import type { FlagSpec } from './command.js';

/** What to buy: `carbon buy` and `carbon quote` take the same four flags. */
export const PURCHASE_FLAGS: readonly FlagSpec[] = [
  { flags: '--kg <n>', description: 'kg of CO2 to offset (1 to 1,000,000)' },
  { flags: '--amount-cents <n>', description: 'US cents to spend: buys the most whole kg that fits' },
  { flags: '--amount <dollars>', description: 'dollars to spend, e.g. 12.50' },
  { flags: '--reference <text>', description: 'your own label (1 to 200 characters; never public)' },
];

export const QUIET_FLAG: FlagSpec = { flags: '-q, --quiet', description: 'print only the offset ids, one a line (for xargs and loops)' };
