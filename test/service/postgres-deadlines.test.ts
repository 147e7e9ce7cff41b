import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { LedgerError } from '../../src/store/ledger-error.js';
import { DEFAULT_DEADLINES, deadlines, poolDeadlines } from '../../src/store/postgres/deadlines.js';
import { pgError } from '../../src/store/postgres/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { cleanedAfterEach, freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { freezingProxy } from '../support/freezing-proxy.js';
import { limit } from '../support/load.js';

// The deadlines on the database (docs/reliability.md, "Deadlines on the database"): every
// connection-level failure is a transient LedgerError (a 503 with Retry-After, exit 1), and no
// wait on PostgreSQL is unbounded: connecting, a statement (on a server that answers, and on one
// that does not), a transaction left idle. The same under load, with real processes stopped and
// killed: test/reliability/postgres-faults.test.ts.

const LABEL = 'postgres://carbon:***@db.internal:5432/carbon';

/** A transient LedgerError: what the server answers with 503 and Retry-After. */
function expectTransient(err: unknown): void {
  expect(err).toBeInstanceOf(LedgerError);
  expect((err as LedgerError).transient, (err as Error).message).toBe(true);
}

describe('a connection-level failure of PostgreSQL', () => {
  const sqlState = (code: string, message = 'from the server') => Object.assign(new Error(message), { code, severity: 'FATAL' });
  const socket = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect' });
  test.each([
    ['a refused connection', socket('ECONNREFUSED')],
    ['a reset connection', socket('ECONNRESET')],
    ['a write to a closed socket', socket('EPIPE')],
    ['an unreachable host', socket('EHOSTUNREACH')],
    ['a connect that timed out in the kernel', socket('ETIMEDOUT')],
    ['admin shutdown (a restart, pg_terminate_backend)', sqlState('57P01', 'terminating connection due to administrator command')],
    ['crash shutdown (another backend died)', sqlState('57P02')],
    ['a server starting or recovering', sqlState('57P03', 'the database system is starting up')],
    ['a connection failure reported by the server', sqlState('08006')],
    ['too many connections', sqlState('53300')],
    ['the statement deadline, on the server', sqlState('57014', 'canceling statement due to statement timeout')],
    ['the idle-in-transaction deadline', sqlState('25P03', 'terminating connection due to idle-in-transaction timeout')],
    ['a socket ended under a client', new Error('Connection terminated unexpectedly')],
    [
      'a client that met a connection error (a postmaster killed with kill -9)',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a client closed under a query', new Error('Client was closed and is not queryable')],
    ['the statement deadline, on the client', new Error('Query read timeout')],
    ['the connect deadline, of a new connection', new Error('Connection terminated due to connection timeout')],
    ['the connect deadline, of the client', new Error('timeout expired')],
    ['the connect deadline, waiting for the pool', new Error('timeout exceeded when trying to connect')],
  ])('%s is transient: a 503 with Retry-After, exit 1, never a 500', (_, err) => {
    const said = pgError(err, LABEL);
    expectTransient(said);
    expect(said.message).toContain(LABEL);
    expect(said.message.split('\n')).toHaveLength(1);
  });

  test('a statement cancelled by another session (pg_cancel_backend) is transient, and not called a statement timeout', () => {
    const said = pgError(sqlState('57014', 'canceling statement due to user request'), LABEL);
    expectTransient(said);
    expect(said.message).toBe(`PostgreSQL at ${LABEL} cancelled a statement (canceling statement due to user request).`);
    expect(said.message).not.toMatch(/timeout|reached/);
  });

  test('too many connections (53300) is transient, and says the limit, not that the server cannot be reached', () => {
    const said = pgError(sqlState('53300', 'sorry, too many clients already'), LABEL);
    expectTransient(said);
    expect(said.message).toBe(`PostgreSQL at ${LABEL} has no connection free (53300: sorry, too many clients already).`);
    expect((said as LedgerError).hint).toContain('CARBON_PG_POOL');
    expect(said.message).not.toMatch(/reached/);
  });

  test.runIf(postgresAvailable())(
    "waiting for the pool's connections, every one busy, is transient, and says so, not that the server cannot be reached",
    async () => {
      // node-postgres's own error: its one connection held, the next waits the connect deadline.
      const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, connectionTimeoutMillis: 100 });
      const held = await pool.connect();
      try {
        const said = pgError(await pool.connect().catch((err: unknown) => err), LABEL);
        expectTransient(said);
        expect(said.message).toBe(
          `Every connection of this instance's to PostgreSQL at ${LABEL} stayed busy for 5000 ms (CARBON_PG_CONNECT_TIMEOUT_MS).`,
        );
        expect((said as LedgerError).hint).toMatch(/^Their statements wait: another session may hold a lock on the tables/);
        expect((said as LedgerError).hint).toContain('CARBON_PG_POOL');
      } finally {
        held.release();
        await pool.end();
      }
    },
  );

  test("no schema to use (3F000) is not called gone: dropped, or not the user's to use, and both ways out named", () => {
    const said = pgError(sqlState('3F000', 'no schema has been selected to create in'), LABEL) as LedgerError;
    expect(said).toBeInstanceOf(LedgerError);
    expect([said.transient, said.message]).toEqual([
      false,
      `The ledger's schema in ${LABEL} cannot be used (3F000: no schema has been selected to create in).`,
    ]);
    expect(said.hint).toMatch(/^It was dropped, or carbon's user has no rights on it: grant them/);
  });

  test('a failure of the statement itself is not one: it stays what it was (a bug is a bug)', () => {
    const err = Object.assign(new Error('syntax error at or near "SELCT"'), { code: '42601', severity: 'ERROR' });
    expect(pgError(err, LABEL)).toBe(err);
  });
});

describe('the deadlines, from the environment', () => {
  test('default to 5 s to connect, 4 s a statement (the client waits 0.5 s more), 10 s idle in a transaction', () => {
    expect(deadlines({})).toEqual({ connectMs: 5000, statementMs: 4000, idleInTransactionMs: 10_000 });
    expect(DEFAULT_DEADLINES).toEqual(deadlines({}));
    // Waiting for a connection, then for a statement's answer: within 10 s.
    const pool = poolDeadlines(deadlines({}));
    expect(pool.connectionTimeoutMillis + pool.query_timeout).toBeLessThan(10_000);
    expect(pool).toMatchObject({
      statement_timeout: 4000,
      query_timeout: 4500,
      idle_in_transaction_session_timeout: 10_000,
      keepAlive: true,
    });
  });

  test('are set in whole milliseconds; 0 is no deadline; anything else keeps the default', () => {
    const env = {
      CARBON_PG_CONNECT_TIMEOUT_MS: '1500',
      CARBON_PG_STATEMENT_TIMEOUT_MS: '0',
      CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
    };
    expect(deadlines(env)).toEqual({ connectMs: 1500, statementMs: 0, idleInTransactionMs: 60_000 });
    expect(poolDeadlines(deadlines(env))).toMatchObject({ connectionTimeoutMillis: 1500, statement_timeout: 0, query_timeout: 0 });
    for (const junk of ['', '1.5', '-1', '2s', '99999999'])
      expect(deadlines({ CARBON_PG_STATEMENT_TIMEOUT_MS: junk }).statementMs, junk).toBe(4000);
  });
});

describe.skipIf(!postgresAvailable())('the deadlines, on PostgreSQL', () => {
  const cleanup = cleanedAfterEach();

  /** A store on a fresh schema with these deadlines (read when it opens), reached directly or through `via`; `single`: a command's. */
  const open = async (env: Record<string, string>, via?: (url: string) => Promise<string>, single = false) => {
    Object.assign(process.env, env);
    const schema = freshSchema('deadline');
    cleanup.push(() => schema.drop());
    const store = await PostgresStore.open(via === undefined ? schema.url : await via(schema.url), { single });
    cleanup.push(() => store.close());
    return { store, schema };
  };

  /** A connection of the test's own in the schema, outside the store. */
  const side = async (schema: TestSchema) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
    client.on('error', () => {});
    await client.connect();
    cleanup.push(() => client.end());
    return client;
  };

  test('a statement stuck on a lock past the statement deadline fails as transient; the connection serves the next request', async () => {
    const statementMs = limit(1000);
    const { store, schema } = await open({ CARBON_PG_STATEMENT_TIMEOUT_MS: String(statementMs) });
    // Another session holds the writer lock, and keeps it.
    const holder = await side(schema);
    await holder.query('BEGIN; LOCK TABLE account IN SHARE ROW EXCLUSIVE MODE');
    const stuck = await store.transaction((tx) => tx.keys()).catch((err: unknown) => err);
    expectTransient(stuck);
    // What the operator reads: the server answered (it is no "cannot be reached"), a statement
    // ran past the deadline, which setting that is, and where to look (a lock held elsewhere).
    const { message, hint } = stuck as LedgerError;
    expect(message).toMatch(new RegExp(`did not finish a statement within ${statementMs} ms \\(CARBON_PG_STATEMENT_TIMEOUT_MS\\)`));
    expect(message).not.toMatch(/cannot be reached/);
    expect(hint).toMatch(/lock .*pg_locks/);
    await holder.query('ROLLBACK');
    expect(await store.transaction((tx) => tx.keys())).toEqual([]);
  });

  test("a command's one connection: a read waiting its turn behind another stuck on a lock waits for it past the connect deadline", async () => {
    const connectMs = 100;
    const { store, schema } = await open(
      { CARBON_PG_CONNECT_TIMEOUT_MS: String(connectMs), CARBON_PG_STATEMENT_TIMEOUT_MS: String(limit(20_000)) },
      undefined,
      true,
    );
    const holder = await side(schema);
    await holder.query('BEGIN; LOCK TABLE key_vault IN ACCESS EXCLUSIVE MODE');
    // Read side by side, as `carbon sandbox keys` reads: the first waits for the lock, the second for the connection.
    let settled = false;
    const both = Promise.all([store.vault(), store.keys()])
      .catch((err: unknown) => err)
      .finally(() => {
        settled = true;
      });
    // Watched from a session of its own: within the holder's transaction, pg_stat_activity would
    // answer from the snapshot its first read took, before the read came to wait.
    const watcher = await side(schema);
    const waiting = async () =>
      (await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%key_vault%'"))
        .rows[0].n;
    // (Until a read waits on the lock, or both are answered already: a read that fails shows its error below.)
    while (!settled && (await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Before, the second read gave up when the connect deadline passed: "cannot be reached right now (timeout exceeded …)".
    await new Promise((resolve) => setTimeout(resolve, 5 * connectMs));
    await holder.query('COMMIT');
    const answered = await both;
    expect(answered, String(answered)).not.toBeInstanceOf(Error);
    expect((answered as [unknown, unknown])[1]).toEqual(await store.keys());
  });

  test("a command's one connection, to a server that does not answer, is given up at the connect deadline", async () => {
    const frozen = async (url: string) => {
      const proxy = await freezingProxy(new URL(url));
      cleanup.push(() => proxy.close());
      proxy.freeze();
      return proxy.url;
    };
    const refused = await open({ CARBON_PG_CONNECT_TIMEOUT_MS: String(limit(300)) }, frozen, true).catch((err: unknown) => err);
    expectTransient(refused);
    expect((refused as Error).message).toMatch(/cannot be reached right now \(timeout expired\)/);
  });

  test('a transaction left idle past its deadline is ended by the server, and the writer lock it held is released', async () => {
    const { store, schema } = await open({ CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(limit(500)) });
    const other = await side(schema);
    const ended = store
      .transaction(async (tx) => {
        await tx.keys();
        // This transaction holds the writer lock and stalls: the other session gets the lock once the server ends it.
        const deadline = Date.now() + limit(20_000);
        for (;;) {
          try {
            await other.query('BEGIN; LOCK TABLE account IN SHARE ROW EXCLUSIVE MODE NOWAIT');
            await other.query('ROLLBACK');
            break;
          } catch (err) {
            await other.query('ROLLBACK');
            if ((err as { code?: string }).code !== '55P03' || Date.now() > deadline) throw err;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        return tx.keys();
      })
      .catch((err: unknown) => err);
    expectTransient(await ended);
    expect(await store.transaction((tx) => tx.keys())).toEqual([]);
  });

  test('a server that stops answering: reads, writes and the health check fail as transient; the store recovers by itself; close() does not wait for it', async () => {
    let proxy!: Awaited<ReturnType<typeof freezingProxy>>;
    const via = async (url: string) => {
      proxy = await freezingProxy(new URL(url));
      cleanup.push(() => proxy.close());
      return proxy.url;
    };
    const { store } = await open(
      // Short, but long enough for a busy machine to connect and answer when nothing is frozen.
      { CARBON_PG_STATEMENT_TIMEOUT_MS: String(limit(500)), CARBON_PG_CONNECT_TIMEOUT_MS: String(limit(1000)) },
      via,
    );
    // Warm: a few pooled connections, idle.
    await Promise.all([store.keys(), store.transaction((tx) => tx.keys()), store.health()]);

    proxy.freeze();
    // Idle pooled connections, and new ones (accepted, never answered): each meets a deadline.
    const failures = await Promise.all([
      store.keys().catch((err: unknown) => err),
      store.transaction((tx) => tx.keys()).catch((err: unknown) => err),
      store.takeRequest('key_x', 0, 10, 60_000).catch((err: unknown) => err),
      store.keys().catch((err: unknown) => err),
    ]);
    for (const err of failures) expectTransient(err);
    expect(await store.health()).toEqual({ ok: false, reason: 'no_answer', passing: true });

    proxy.thaw();
    // The connections that met a deadline were thrown away; the pool makes new ones.
    expect(await store.health()).toEqual({ ok: true });
    expect(await store.transaction((tx) => tx.keys())).toEqual([]);

    proxy.freeze();
    await store.keys().catch(() => {});
    // Each idle connection would wait for the server's goodbye forever; close() cuts them
    // (and closing again is a no-op).
    await store.close();
    await store.close();
  });
});
