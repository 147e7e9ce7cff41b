import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { LedgerError } from '../../src/store/ledger-error.js';
import type { LedgerTx } from '../../src/store/port.js';
import { deadlines, WHOLE_LEDGER_DEADLINES, wholeLedgerQuery } from '../../src/store/postgres/deadlines.js';
import { pgError } from '../../src/store/postgres/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { cleanedAfterEach, freshSchema, postgresAvailable, TEST_DATABASE_URL } from '../support/database.js';
import { limit } from '../support/load.js';

// A snapshot's load empties the ledger it replaces, and checks each rule across every row, in one
// statement each, whose time grows with the ledger, as `sandbox reset` empties it: each is given
// WHOLE_LEDGER_DEADLINES statement deadlines (docs/snapshots.md). Held to one, a million offsets on
// PostgreSQL were refused here.

const LABEL = 'postgres://carbon:***@db.internal:5432/carbon';

describe('a statement over the whole ledger', () => {
  test("runs under ten statement deadlines on the server, then the connection's own again; the client waits 0.5 s more", () => {
    expect(WHOLE_LEDGER_DEADLINES).toBe(10);
    expect(wholeLedgerQuery('SELECT 1', deadlines({}))).toEqual({
      text: 'SET LOCAL statement_timeout = 40000; SELECT 1; SET LOCAL statement_timeout TO DEFAULT',
      query_timeout: 40_500,
    });
    // No deadline stays none, on both sides.
    expect(wholeLedgerQuery('SELECT 1', deadlines({ CARBON_PG_STATEMENT_TIMEOUT_MS: '0' }))).toEqual({
      text: 'SET LOCAL statement_timeout = 0; SELECT 1; SET LOCAL statement_timeout TO DEFAULT',
      query_timeout: 0,
    });
  });

  test('past its deadline: said as such, with the deadline it had and how to give it more', () => {
    const err = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', wholeLedger: true });
    const said = pgError(err, LABEL) as LedgerError;
    expect(said).toBeInstanceOf(LedgerError);
    expect(said.message).toBe(
      `PostgreSQL at ${LABEL} did not finish a statement over the whole ledger within 40000 ms (10 times CARBON_PG_STATEMENT_TIMEOUT_MS).`,
    );
    expect(said.hint).toMatch(/^A larger ledger, or a slower server, needs more time: raise CARBON_PG_STATEMENT_TIMEOUT_MS/);
    expect(said.transient).toBe(true);
  });
});

describe.skipIf(!postgresAvailable())('statements over the whole ledger, on PostgreSQL', () => {
  const cleanup = cleanedAfterEach();

  /** A store on a fresh schema, its statements held to `statementMs`, and two sessions of the test's own there. */
  const open = async (statementMs: number) => {
    process.env.CARBON_PG_STATEMENT_TIMEOUT_MS = String(statementMs);
    const schema = freshSchema('whole');
    cleanup.push(() => schema.drop());
    const store = await PostgresStore.open(schema.url);
    cleanup.push(() => store.close());
    const side = async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
      client.on('error', () => {});
      await client.connect();
      cleanup.push(() => client.end());
      return client;
    };
    return { store, holder: await side(), watcher: await side() };
  };

  /**
   * `work` in one transaction, while another session holds `lock` on `table` until `work` waits for
   * it, and three statement deadlines more (one would have ended the wait): what `work` gave, or
   * its error. `before` runs first, with nothing held.
   */
  const pastLock = async <T>(
    table: string,
    lock: string,
    work: (tx: LedgerTx) => Promise<T>,
    before?: (store: PostgresStore) => Promise<void>,
  ) => {
    const statementMs = limit(1000);
    const { store, holder, watcher } = await open(statementMs);
    await before?.(store);
    await holder.query(`BEGIN; LOCK TABLE ${table} IN ${lock} MODE`);
    let settled = false;
    const done = store
      .transaction(work)
      .catch((err: unknown) => err)
      .finally(() => {
        settled = true;
      });
    const waiting = async () =>
      (await watcher.query('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = $1::regclass', [table])).rows[0].n;
    while (!settled && (await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 3 * statementMs));
    await holder.query('COMMIT');
    return { result: await done, store };
  };

  test('emptying the ledger a load replaces waits past the statement deadline, within ten', async () => {
    const { result } = await pastLock('idempotency', 'SHARE', (tx) => tx.importLedger((async function* () {})(), []));
    expect(result, String(result)).toBeUndefined();
  });

  test('emptying it for a reset waits past the statement deadline, within ten', async () => {
    const { result, store } = await pastLock('entries', 'SHARE', (tx) => tx.clear());
    expect(result, String(result)).toBeUndefined();
    expect(await store.keys()).toEqual([]);
  });

  test('a rule checked across every row waits past the statement deadline, within ten', async () => {
    let expected: string | null = null;
    const { result } = await pastLock(
      'offsets',
      'ACCESS EXCLUSIVE',
      (tx) => tx.ledgerProblem(),
      async (store) => {
        expected = await store.transaction((tx) => tx.ledgerProblem());
      },
    );
    expect(result, String(result)).not.toBeInstanceOf(Error);
    expect(result).toBe(expected);
  });
});
