import { ACCOUNT_STANDINGS } from '../../../api/types.js';
import type { CommandSpec } from '../../command.js';
import { flagTable, ONCE } from '../../flags.js';

const run = () => import('./run.js');
type Handlers = Awaited<ReturnType<typeof run>>;

/** What a subcommand declares besides its name, its description and its handler. */
type Declared = Omit<CommandSpec, 'name' | 'description' | 'load'>;

/**
 * A subcommand done by the function `handler` of run.ts (imported when it runs), and what else it
 * declares. `rest` is added to, not spread: a spread would read its `flags` getter, at every start.
 */
function sub(name: string, handler: keyof Handlers, description: string, rest: Declared = {}): CommandSpec {
  return Object.assign(rest, { name, description, load: () => run().then((m) => m[handler]) });
}

/** An offset of either mode; completion offers those the subcommand can act on. */
const offsetId = (values: 'reviewIds' | 'processingIds') => ({ name: '<id>', description: 'the offset id (off_…)', values }) as const;

const keys: CommandSpec = {
  name: 'keys',
  description: 'API keys: list (masked unless --reveal), create, revoke',
  examples: ['carbon sandbox keys', 'carbon sandbox keys create --live', 'carbon sandbox keys revoke key_…'],
  subcommands: [
    sub('list', 'keysList', 'every key, masked unless --reveal', {
      isDefault: true,
      flags: [{ flags: '--reveal', description: 'print the keys in full' }],
      examples: ['carbon sandbox keys', 'carbon sandbox keys --reveal --json | jq -r \'.[] | select(.default=="test") | .secret\''],
    }),
    sub('create', 'keysCreate', 'create a key of the mode (--live or --test) and print it in full, once', {
      flags: [{ flags: '--read-only', description: 'reads only: purchases get 403 insufficient_permissions' }],
      examples: [
        'carbon sandbox keys create',
        'KEY=$(carbon sandbox keys create --live)',
        'carbon sandbox keys create --read-only --json | jq -r .secret',
      ],
    }),
    sub('revoke', 'keysRevoke', 'revoke a key: it gets 401 from now on', {
      args: [{ name: '<id>', description: "the key's id (key_…), from `carbon sandbox keys`", values: 'keyIds' }],
      examples: ['carbon sandbox keys revoke key_…'],
    }),
  ],
};

const clock: CommandSpec = {
  name: 'clock',
  description: "the model's clock: show it, or move it forward to fire placements",
  examples: ['carbon sandbox clock', 'carbon sandbox clock advance 2m'],
  subcommands: [
    sub('show', 'clockShow', "the model's time, and how far ahead of real time it is", {
      isDefault: true,
      examples: ['carbon sandbox clock', 'carbon sandbox clock --json | jq -r .now'],
    }),
    sub('advance', 'clockAdvance', 'move the clock forward (test offsets place after 3 s, live after 60 s)', {
      args: [{ name: '<duration>', description: 'such as 90s, 15m, 2h, 1d, 1w or 1h30m' }],
      examples: ['carbon sandbox clock advance 90s', 'carbon sandbox clock advance 1d --json'],
    }),
  ],
};

const faults: CommandSpec = {
  name: 'faults',
  description: 'inject faults into API requests: 429/500/503, dropped connections, latency',
  notes: `The setting lives in the ledger: every \`carbon serve\` on it, and the local engine, apply it from
the next request. A seed makes the draws repeatable.`,
  examples: [
    'carbon sandbox faults set --error-rate 0.3 --seed 7',
    'carbon sandbox faults set --latency 50ms-400ms --route "POST /offsets"',
    'carbon sandbox faults off',
  ],
  subcommands: [
    sub('show', 'faultsShow', 'the faults injected now (off by default)', {
      isDefault: true,
      examples: ['carbon sandbox faults', 'carbon sandbox faults --json | jq .error_rate'],
    }),
    sub('set', 'faultsSet', 'replace the fault setting', {
      get flags() {
        return flagTable(`
        --error-rate <share>      share of requests (0 to 1) answered with a fault, such as 0.3
        --errors <list>           the faults drawn from, comma-separated: 429, 500, 503, drop-before, drop-after (default: all)
        --latency <range>         added latency, such as 200ms or 50ms-400ms
        --route <route>           only this endpoint, such as "POST /offsets" (default: every one)
        --mode <mode>             only requests with a test or a live key (default: both)
        --seed <n>                seed of the draws, for a repeatable run (default: random)
        --retry-after <seconds>   Retry-After of injected 429s and 503s (default 1)
      `);
      },
      examples: [
        'carbon sandbox faults set --error-rate 0.3 --seed 7',
        'carbon sandbox faults set --errors drop-after --error-rate 0.5 --route "POST /offsets"',
        'carbon sandbox faults set --latency 50ms-400ms --mode live',
      ],
    }),
    sub('off', 'faultsOff', 'stop injecting faults', {
      examples: ['carbon sandbox faults off'],
    }),
  ],
};

const snapshot: CommandSpec = {
  name: 'snapshot',
  description: 'save the whole sandbox to one file, or load one in place of it (a known state for tests and CI)',
  notes: `A snapshot holds the account and its settings, the clock, the balances, the offsets, the keys (their
SHA-256, never their text), the Idempotency-Keys, the per-day totals and the fault setting.
Loading replaces the ledger all or nothing; the clock starts again from the snapshot's.
FILE may be - for stdout or stdin. docs/snapshots.md describes the format.`,
  examples: [
    'carbon sandbox snapshot save seed.ndjson',
    'carbon sandbox snapshot load seed.ndjson',
    'carbon sandbox snapshot load seed.ndjson --dry-run',
  ],
  subcommands: [
    sub('save', 'snapshotSave', 'write the whole sandbox to FILE (- for stdout)', {
      args: [{ name: '<file>', description: 'the file to write (replaced whole once written), or - for stdout', values: 'files' }],
      flags: [{ flags: '--with-journal', description: 'add the request journal' }],
      examples: ['carbon sandbox snapshot save seed.ndjson', 'carbon sandbox snapshot save - | gzip > seed.ndjson.gz'],
    }),
    sub('load', 'snapshotLoad', 'replace the sandbox with FILE (- for stdin), all or nothing', {
      args: [{ name: '<file>', description: 'a snapshot saved by carbon sandbox snapshot save, or - for stdin', values: 'files' }],
      flags: [{ flags: '--dry-run', description: 'check the file and say what it holds; load nothing' }],
      examples: [
        'carbon sandbox snapshot load seed.ndjson',
        'gunzip -c seed.ndjson.gz | carbon sandbox snapshot load -',
        'carbon sandbox snapshot load seed.ndjson --dry-run --json | jq .counts',
      ],
    }),
  ],
};

/** carbon sandbox: the local model's developer page and back office. Refused on the remote engine. */
export const sandbox: CommandSpec = {
  name: 'sandbox',
  description: 'drive the local model: top-ups, keys, account, review, failures, clock, reset',
  notes: `These act on this machine's model (the one \`carbon serve\` serves from the same CARBON_HOME), never
on a remote API; with a base URL configured, add --local.`,
  examples: [
    'carbon sandbox status',
    'carbon sandbox topup 250 --live',
    'carbon sandbox clock advance 2m',
    'carbon sandbox keys --reveal --json | jq -r \'.[] | select(.default=="test") | .secret\'',
  ],
  subcommands: [
    sub('status', 'status', 'account, rate, limits, clock, balances and impact', {
      examples: ['carbon sandbox status', 'carbon sandbox status --json | jq .balances'],
    }),
    sub('topup', 'topup', 'add to the balance of the mode (--live or --test); the smallest top-up is $250', {
      args: [{ name: '[dollars]', description: 'dollars, such as 250 or 250.00' }],
      flags: [{ flags: '--cents <n>', description: 'the amount in cents instead', ...ONCE }],
      examples: [
        'carbon sandbox topup 250',
        'carbon sandbox topup 1000 --live',
        'carbon sandbox topup --cents 25000 --json | jq .available_cents',
      ],
    }),
    keys,
    sub('account', 'accountStatus', "set the account's standing: suspended or unapproved accounts get 403 api_access_inactive", {
      args: [{ name: '<status>', description: 'the new standing', choices: ACCOUNT_STANDINGS }],
      examples: ['carbon sandbox account suspended', 'carbon sandbox account active'],
    }),
    sub('rate', 'rate', 'set the rate, in thousandths of a cent per kg (4000 = $0.04/kg)', {
      args: [{ name: '<millicents>', description: 'millicents per kg' }],
      examples: ['carbon sandbox rate 4000', 'carbon sandbox rate 4125 --json'],
    }),
    sub('review-limit', 'reviewLimit', 'set the automatic review limit: larger live purchases wait for review', {
      args: [{ name: '<dollars>', description: 'dollars, such as 5000; 0 reviews every live purchase' }],
      examples: ['carbon sandbox review-limit 5000', 'carbon sandbox review-limit 0'],
    }),
    sub('rate-limit', 'rateLimit', 'allow N requests per window per key (429 rate_limited beyond), or off', {
      args: [{ name: '<n|off>', description: 'requests per window, or off', values: ['off'] }],
      flags: [{ flags: '--window <duration>', description: 'the window, such as 1s or 1m (default: unchanged, 1s at first)' }],
      examples: ['carbon sandbox rate-limit 5 --window 1s', 'carbon sandbox rate-limit 0', 'carbon sandbox rate-limit off'],
    }),
    sub('review', 'review', 'approve (placed now) or reject (refunded) a live offset waiting for review', {
      args: [{ name: '<decision>', description: 'approve or reject', choices: ['approve', 'reject'] }, offsetId('reviewIds')],
      examples: ['carbon sandbox review approve off_…', 'carbon sandbox review reject off_… --json | jq .status'],
    }),
    sub('fail', 'fail', 'the order could not be placed: a processing offset is refunded', {
      args: [offsetId('processingIds')],
      examples: ['carbon sandbox fail off_…'],
    }),
    clock,
    sub('login', 'login', 'a fresh one-time link to the developer page of carbon serve (opened, or printed)', {
      get flags() {
        return flagTable(`
        --print       print the link alone on stdout instead of opening it
        --url <url>   the page's address (default: what the last carbon serve on this ledger recorded)
      `);
      },
      examples: ['carbon sandbox login', 'carbon sandbox login --print', 'carbon sandbox login --print --url https://sandbox.example.com'],
    }),
    faults,
    snapshot,
    sub('reset', 'reset', 'delete every offset, balance and key and start over (asks first on a terminal)', {
      flags: [{ flags: '-y, --yes', description: 'do not ask (required when there is no terminal)' }],
      examples: ['carbon sandbox reset', 'carbon sandbox reset --yes --json | jq .balances'],
    }),
  ],
};
