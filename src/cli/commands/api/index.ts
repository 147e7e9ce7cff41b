import type { CommandSpec } from '../../command.js';
import { flagTable, ONCE } from '../../flags.js';

export const api: CommandSpec = {
  name: 'api',
  description: 'one raw API request through the configured engine and key; the answer as JSON, its status as the exit code',
  args: [
    { name: '<method>', description: 'GET or POST' },
    { name: '<path>', description: "under /api/v1, e.g. /balance or '/offsets?limit=2'" },
  ],
  get flags() {
    return flagTable(
      `
    -d, --data <json>         the JSON body, or @FILE (@- for stdin)
    --idempotency-key <key>   for POST /offsets, the same on every retry (generated when absent)
    -y, --yes                 for POST /offsets with the live key: send it without asking (needed where nobody can confirm)
  `,
      { '--data': ONCE, '--idempotency-key': ONCE },
    );
  },
  examples: [
    'carbon api GET /balance',
    "carbon api GET '/offsets?limit=2' | jq '.data[].id'",
    'carbon api POST /quotes -d \'{"kg": 500}\'',
    'carbon api POST /offsets -d @purchase.json',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
