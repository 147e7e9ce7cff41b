import { OFFSET_STATUSES } from '../../../api/types.js';
import type { CommandSpec } from '../../command.js';
import { flagTable } from '../../flags.js';

export const watch: CommandSpec = {
  name: 'watch',
  description: 'follow offsets as they change: an NDJSON event per change (offset.created, offset.placed, offset.refunded)',
  get flags() {
    return flagTable(
      `
    --reference <text>     only offsets with this reference
    --status <status>      only the events that leave an offset in this state
    --since <when>         also replay the offsets created since: a day (2026-01-31, today, yesterday) or an age (7d, 12h)
    --interval <duration>  how often to read the list (default 2s; 10ms to 1h)
    --forward-to <url>     POST each event to this URL, signed (header Carbon-Signature: t=…,v1=HMAC-SHA256)
    --print-secret         print the profile's signing secret (made if there is none) and exit
    --until-settled        exit once every offset followed is placed (0) or some refunded (9); 8 after --timeout (default 120 s)
    --cursor <file>        keep where this run is in FILE, and start from it next time
  `,
      { '--status': { choices: OFFSET_STATUSES }, '--cursor': { values: 'files' } },
    );
  },
  notes: `Without --since, offsets that exist when it starts are not news: their later changes are.
A failed delivery is retried until taken; undelivered at --timeout: exit 12.
Events from the sandbox (local, or carbon serve) are forwarded with Carbon-Sandbox: true.
Ctrl-C or SIGTERM stops it (exit 130); the cursor keeps what was not delivered.`,
  examples: [
    'carbon watch',
    'carbon watch --forward-to http://localhost:3000/webhooks',
    'carbon buy --from-csv flights.csv && carbon watch --until-settled --timeout 300',
    'carbon watch --status refunded --cursor ~/.carbon-watch.cursor | jq -r .data.object.id',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
