import type { CommandSpec } from '../../command.js';
import { flagTable } from '../../flags.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 4010;

/** The line `carbon serve` writes on stdout when it is ready, as its help shows it. */
const READY_LINE =
  '{"url": "http://127.0.0.1:4010/api/v1", "test_key": "ck_test_…abcd", …, ' +
  '"developer_page_url": "http://127.0.0.1:4010/login?token=…wXyZ", "pid": 1234}';

export const serve: CommandSpec = {
  name: 'serve',
  settings: 'ledger',
  description: 'serve the local model as the HTTP API (a stateful sandbox on a port), with its developer page',
  get flags() {
    return flagTable(
      `
    --host <host>         interface to listen on
    --port <port>         port; 0 picks a free one
    --public-url <url>    origin used in certificate URLs (default http://HOST:PORT)
    --show-keys           print the sandbox's keys and login link in full (masked otherwise)
  `,
      { '--host': { default: DEFAULT_HOST }, '--port': { default: String(DEFAULT_PORT) } },
    );
  },
  notes: `The developer page (top-ups, keys, review, the ledger and a chart of kg bought, in a browser) is
served on the same port: open the login link the banner prints (in full on a terminal, masked in
a log: \`carbon sandbox login\` makes a new one); it signs you in once.

On start: a banner on stderr, and one JSON line on stdout for scripts:
  ${READY_LINE}
Stops gracefully on Ctrl-C (SIGINT) or SIGTERM, finishing requests in flight, and exits 0.`,
  examples: [
    'carbon serve',
    'carbon serve --port 0 --show-keys | head -1 | jq -r .url',
    'CARBON_BASE_URL=http://127.0.0.1:4010/api/v1 CARBON_API_KEY=ck_test_… carbon buy --kg 500',
  ],
  load: () => import('./run.js').then((m) => m.run),
};
