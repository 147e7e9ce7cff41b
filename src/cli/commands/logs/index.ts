import type { CommandSpec } from '../../command.js';
import { flagTable } from '../../flags.js';

const run = () => import('./run.js');

/** `carbon logs`: the sandbox's request journal (every request it answered, with its answer). */
export const logs: CommandSpec = {
  name: 'logs',
  description: "the sandbox's requests and their answers, newest first (--follow: as they come)",
  // --live/--test pick the entries shown, not the key: any key of the sandbox reads its whole journal.
  settings: 'journal',
  notes: `Every request the sandbox answers, through the local model or any carbon serve on its ledger, is
kept in the ledger's journal: the newest 10,000, for 7 days (CARBON_JOURNAL_KEEP,
CARBON_JOURNAL_MAX_AGE_DAYS; CARBON_JOURNAL=off records none). Keys are never kept; API keys in
bodies are masked. --follow says on stderr how many entries were pruned before it read them.
With a base URL, carbon logs reads the journal of that carbon serve; the live API keeps none.`,
  examples: [
    'carbon logs',
    'carbon logs --status 4xx --path /api/v1/offsets',
    'carbon logs --follow',
    "carbon logs --json --limit 500 | jq -r 'select(.replayed) | .id'",
    'carbon logs show req_…',
  ],
  subcommands: [
    {
      name: 'list',
      description: 'the newest requests, filtered',
      isDefault: true,
      get flags() {
        return flagTable(
          `
      --status <status>       2xx, 4xx, 5xx or one code (404)
      --method <method>       GET or POST
      --path <prefix>         paths starting with this (/api/v1/offsets)
      --code <code>           an error's code (idempotency_key_reused)
      --since <when>          answered since: a day (2026-01-31) or an age (30m, 2h, 7d), in real time
      --request-id <id>       the entry of this Request-Id
      --limit <n>             how many (default 50; 1 to 1000); with --follow, the newest n first (default 0)
      -f, --follow            print new requests as they come, from now (or after --limit's), until Ctrl-C or SIGTERM
    `,
          // Completion offers the classes and the methods; a single code (404) is typed.
          { '--status': { values: ['2xx', '4xx', '5xx'] }, '--method': { values: ['GET', 'POST'] } },
        );
      },
      examples: ['carbon logs --status 5xx --since 1h', 'carbon logs --follow --live', 'carbon logs --code rate_limited --json'],
      load: () => run().then((m) => m.list),
    },
    {
      name: 'show',
      description: 'one request whole: what was asked, what was answered, both bodies',
      args: [{ name: '<request-id>', description: 'the Request-Id (req_…), from carbon logs or a response' }],
      examples: ['carbon logs show req_…', 'carbon logs show req_… --json | jq -r .response_body'],
      load: () => run().then((m) => m.show),
    },
  ],
};
