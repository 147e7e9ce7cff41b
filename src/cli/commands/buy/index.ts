import type { CommandSpec } from '../../command.js';
import { flagTable, ONCE, purchaseFlags, QUIET_FLAG } from '../../flags.js';

export const buy: CommandSpec = {
  name: 'buy',
  description: 'buy offsets, charged to the balance',
  get flags() {
    return [
      ...purchaseFlags(),
      ...flagTable(
        `
      --idempotency-key <key>   make retries safe: the same key never buys twice (generated when absent)
      --wait                    wait until the offset is placed or refunded
      --max-cents <n>           refuse a purchase that would cost more than this (at the quote, and in the purchase on a sandbox)
      -y, --yes                 do not ask to confirm a live purchase
      --dry-run                 make every check a purchase would (price, balance, --max-cents, permission) and exit as it
                                  would; buy nothing
    `,
        { '--idempotency-key': ONCE, '--max-cents': ONCE },
      ),
      QUIET_FLAG,
      ...flagTable(
        `
      --from-csv <file>         one purchase per row of a CSV file (- for stdin): columns kg, amount (dollars) or amount_cents,
                                  and reference
      --batch-id <id>           with --from-csv: the batch's name in its idempotency keys (default: default); rows are
                                  known by reference, so give each new batch of the same references its own
      --partial                 with --from-csv: when the balance does not cover the batch, buy the rows that fit, in order
      --rebuy-changed           with --from-csv: buy a row whose quantity changed after it was bought, as it is now
    `,
        { '--from-csv': { values: 'files', ...ONCE }, '--batch-id': ONCE },
      ),
    ];
  },
  examples: [
    'carbon buy --kg 500',
    'carbon buy --amount 25 --reference flight-LHR-JFK --wait',
    'carbon buy --kg 500 --live --yes --max-cents 2500',
    'carbon buy --kg 500 --dry-run && carbon buy --kg 500',
    'carbon buy --from-csv flights.csv --max-cents 50000 > results.csv',
    'carbon buy --from-csv - --json < flights.csv | jq -c \'select(.status == "failed")\'',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
