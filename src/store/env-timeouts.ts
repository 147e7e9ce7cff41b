/**
 * The waits a ledger takes from the environment, each in whole milliseconds from 0 to 9,999,999:
 * CARBON_BUSY_TIMEOUT_MS for SQLite's write lock; for PostgreSQL the deadlines of
 * postgres/deadlines.ts (0 turns one off). A store reads an unset or empty one as its default.
 * The CLI refuses any other value before it opens anything (malformedTimeout), so a typo is a
 * usage error rather than a default nobody asked for.
 */
const TIMEOUTS = {
  sqlite: ['CARBON_BUSY_TIMEOUT_MS'],
  postgres: ['CARBON_PG_CONNECT_TIMEOUT_MS', 'CARBON_PG_STATEMENT_TIMEOUT_MS', 'CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS'],
} as const;

const WHOLE_MS = /^\d{1,7}$/;

/** The milliseconds `raw` gives, or `fallback` when it is unset or not whole milliseconds. */
export function timeoutMs(raw: string | undefined, fallback: number): number {
  return raw !== undefined && WHOLE_MS.test(raw) ? Number(raw) : fallback;
}

/** The first of the store's timeout variables that `env` sets to something other than whole milliseconds. */
export function malformedTimeout(env: NodeJS.ProcessEnv, kind: keyof typeof TIMEOUTS): string | undefined {
  return TIMEOUTS[kind].find((name) => {
    const raw = env[name];
    return raw !== undefined && raw !== '' && !WHOLE_MS.test(raw);
  });
}
