import type { CommandSpec, RootSpec } from '../command.js';
import { EXIT_CODES_HELP } from '../exit-codes.js';
import { flagTable } from '../flags.js';
import { api } from './api/index.js';
import { balance } from './balance/index.js';
import { buy } from './buy/index.js';
import { complete } from './complete/index.js';
import { completion } from './completion/index.js';
import { config } from './config/index.js';
import { impact } from './impact/index.js';
import { list } from './list/index.js';
import { logs } from './logs/index.js';
import { open } from './open/index.js';
import { quote } from './quote/index.js';
import { report } from './report/index.js';
import { sandbox } from './sandbox/index.js';
import { serve } from './serve/index.js';
import { show } from './show/index.js';
import { watch } from './watch/index.js';

/**
 * Every command of carbon, in the order `carbon help` lists them. A new command is a folder here
 * (index.ts declares it, run.ts does it) and one line in this list.
 */
export const COMMANDS: readonly CommandSpec[] = [
  buy,
  quote,
  list,
  show,
  balance,
  impact,
  report,
  watch,
  open,
  api,
  logs,
  config,
  sandbox,
  serve,
  completion,
  complete,
];

/** `carbon` itself: the global flags every command takes, and the help that explains them. */
export const ROOT: RootSpec = {
  description: 'Buy carbon offsets from a prepaid balance: from the live API, or from a full local model of it.',
  get flags() {
    return flagTable(
      `
    --json                     print the API's JSON object (errors: the JSON envelope on stderr)
    --profile <name>           use this profile (env CARBON_PROFILE)
    --live                     use the live key of the profile for this call
    --test                     use the test key of the profile for this call
    --local                    use the local model even if a base URL is set
    --base-url <url>           the API's base URL, ending in /api/v1 (env CARBON_BASE_URL)
    --api-key <key>            API key (prefer env CARBON_API_KEY: flags show up in ps)
    --max-retries <n>          retries of failed requests (env CARBON_MAX_RETRIES, default 2)
    --timeout <seconds>        per request timeout, and how long --wait (or watch --until-settled) waits (env CARBON_TIMEOUT)
    --allow-insecure-http      allow sending the key over http:// to a non-loopback host
    --database <url>           the local model's ledger in PostgreSQL: postgres://… (env CARBON_DATABASE_URL;
                                 default SQLite in CARBON_HOME)
    --database-schema <name>   the PostgreSQL schema (env CARBON_DATABASE_SCHEMA, or ?schema= in the URL; default carbon)
    --verbose                  one line on stderr per HTTP request: method, URL, status, time, Request-Id, attempt
                                 (also CARBON_DEBUG=http)
    --no-color                 no colour (also NO_COLOR=1)
  `,
      { '--profile': { values: 'profiles' } },
    );
  },
  examples: ['carbon buy --kg 500', 'carbon quote --amount 12.50', "carbon list --json | jq '.data[].id'", 'carbon balance'],
  epilogue: `Environment: CARBON_API_KEY, CARBON_BASE_URL, CARBON_PROFILE, CARBON_HOME (config and data),
CARBON_MAX_RETRIES, CARBON_TIMEOUT, CARBON_ALLOW_INSECURE_HTTP=1 (as --allow-insecure-http),
CARBON_DATABASE_URL, CARBON_DATABASE_SCHEMA, CARBON_PG_POOL, CARBON_PG_CONNECT_TIMEOUT_MS,
CARBON_PG_STATEMENT_TIMEOUT_MS, CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS, CARBON_BUSY_TIMEOUT_MS
(SQLite), CARBON_JOURNAL=off, CARBON_JOURNAL_KEEP, CARBON_JOURNAL_MAX_AGE_DAYS (the request
journal), NO_COLOR, FORCE_COLOR, CARBON_DEBUG=1 (stack traces) or CARBON_DEBUG=http (as --verbose).

${EXIT_CODES_HELP}`,
};
