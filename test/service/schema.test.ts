import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { openEngine } from '../../src/engine/open.js';
import { LedgerError } from '../../src/store/ledger-error.js';
import { pgError } from '../../src/store/postgres/errors.js';
import { health } from '../../src/store/postgres/own-connection.js';
import { migrate as pgMigrate } from '../../src/store/postgres/schema.js';
import { migrate } from '../../src/store/sqlite/schema.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL } from '../support/database.js';
import { type Db, openSqlite, pragma } from '../support/sqlite.js';
import { tempDirs } from '../support/temp.js';
import { openWorld } from '../support/world.js';

// The two stores' schemas: the same tables and columns (src/store/tables.ts writes them once),
// an older SQLite file brought up to date as if it had been made new, and a schema newer than
// this carbon refused without a change.

const dirs = tempDirs('carbon-schema-');
afterAll(() => dirs.removeAll());

const LEDGER = 'ledger.db';
const DAY_MS = 86_400_000;

/** Opens the ledger of `dir` with node:sqlite alone, runs `read`, and closes it. */
function withFile<T>(dir: string, read: (db: Db) => T): T {
  const db = openSqlite(join(dir, LEDGER));
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A SQLite ledger with three test purchases on two model days, the second refunded. */
async function ledgerWithPurchases(): Promise<string> {
  const dir = dirs.make();
  // The wall clock held still, so only the model's clock moves: the 7 kg is still processing when
  // it is failed however slowly this runs (3 s on it is placed, and a placed offset cannot be
  // failed). Not a live one held for review instead: its refund leaves a live day of 0 kg in the
  // per-day totals, which the migration below, counting from the offsets, does not make.
  const world = await openWorld({ dir, start: Date.now() });
  await world.buy({ kg: 5 });
  await world.sandbox.fail((await world.buy({ kg: 7 })).body.id);
  await world.sandbox.advanceClock(DAY_MS);
  await world.buy({ kg: 11 });
  await world.close();
  return dir;
}

const sqliteSchema = (db: Db) =>
  db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
const perDay = (db: Db) =>
  db.prepare('SELECT livemode, day, kg, offsets FROM impact_daily ORDER BY livemode, day').all() as Array<{
    livemode: number;
    day: number;
    kg: number;
    offsets: number;
  }>;

describe('a SQLite ledger of schema version 1 (before the per-day totals)', () => {
  test('is brought up to date on open: the per-day totals are counted from its offsets, and its schema is a new file’s', async () => {
    const dir = await ledgerWithPurchases();
    const { schema, days } = withFile(dir, (db) => ({ schema: sqliteSchema(db), days: perDay(db) }));
    // Two days: 5 kg on the first (the 7 kg refunded), 11 kg on the second.
    expect(days.map((d) => [d.kg, d.offsets])).toEqual([
      [5, 1],
      [11, 1],
    ]);
    // Version 1 is version 3 without what versions 2 and 3 added.
    withFile(dir, (db) => {
      db.exec('DROP TABLE impact_daily; DROP INDEX offsets_in_review; DROP TABLE meta; DROP TABLE journal; PRAGMA user_version = 1');
      expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'impact_daily'").get()).toEqual({ n: 0 });
    });

    const engine = await openEngine({ kind: 'sqlite', dir });
    expect((await engine.sandbox.status()).impact.test.offsets).toBe(2);
    await engine.close();

    withFile(dir, (db) => {
      expect(pragma(db, 'user_version')).toBe(3);
      expect(perDay(db)).toEqual(days);
      expect(sqliteSchema(db)).toEqual(schema);
    });
  });
});

describe('a migration the disk cannot take, on a Node that cannot say whether a transaction is open (before 22.16)', () => {
  test("fails with SQLite's own error, not ROLLBACK's, when SQLite has already rolled the migration back; nothing is migrated", () => {
    // Node 22.13 to 22.15 have no isTransaction, and SQLite ends a transaction by itself on a full
    // disk (SQLITE_FULL). Measured on 22.13.0, an older ledger opened on a nearly full tmpfs said
    // "Unexpected error: cannot rollback - no transaction is active" instead of "the disk is full".
    const db = openSqlite(':memory:', { create: true });
    const full = Object.assign(new Error('database or disk is full'), {
      code: 'ERR_SQLITE_ERROR',
      errcode: 13,
      errstr: 'database or disk is full',
    });
    const exec = (text: string) => {
      if (!/CREATE TABLE/.test(text)) return db.exec(text);
      db.exec('ROLLBACK');
      throw full;
    };
    const older = new Proxy(db, {
      get: (target, name) => {
        if (name === 'isTransaction') return undefined;
        if (name === 'exec') return exec;
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      expect(() => migrate(older)).toThrow(full);
      expect(pragma(db, 'user_version')).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('a ledger written by a newer carbon', () => {
  test('SQLite: refused with what to do, and the file is left as it was', async () => {
    const dir = await ledgerWithPurchases();
    withFile(dir, (db) => db.exec('PRAGMA user_version = 99'));
    await expect(openEngine({ kind: 'sqlite', dir })).rejects.toThrow(
      /was written by a newer carbon \(the ledger's schema is version 99; this carbon knows up to 3\)/,
    );
    withFile(dir, (db) => {
      expect(pragma(db, 'user_version')).toBe(99);
      expect(db.prepare('SELECT count(*) AS n FROM offsets').get()).toEqual({ n: 3 });
    });
  });

  test.runIf(postgresAvailable())('PostgreSQL: refused with what to do, and the schema is left as it was', async () => {
    const schema = freshSchema('newer');
    try {
      await (await openEngine({ kind: 'postgres', url: schema.url })).close();
      await sql(`UPDATE "${schema.schema}".schema_version SET version = 99`);
      await expect(openEngine({ kind: 'postgres', url: schema.url })).rejects.toThrow(
        /schema "newer_[0-9a-f]+" is version 99; this carbon knows up to 4/,
      );
      expect(await sql(`SELECT version FROM "${schema.schema}".schema_version`)).toEqual([{ version: 99 }]);
    } finally {
      await schema.drop();
    }
  });
});

describe.runIf(postgresAvailable())('PostgreSQL that takes no writes (a standby, default_transaction_read_only)', () => {
  test('an up-to-date schema opens and reads; a write fails as a transient LedgerError (a 503, not a 500); the health check says so', async () => {
    const schema = freshSchema('readonly');
    try {
      await (await openEngine({ kind: 'postgres', url: schema.url })).close();
      // The same database, every transaction read-only, as a standby's are.
      const readOnly = new pg.Pool({
        connectionString: TEST_DATABASE_URL,
        options: `-c search_path=${schema.schema} -c default_transaction_read_only=on`,
      });
      try {
        await pgMigrate(readOnly, schema.schema, 'the test database');
        expect((await readOnly.query('SELECT version FROM schema_version')).rows).toEqual([{ version: 4 }]);
        expect(await health(readOnly)).toEqual({ ok: false, reason: 'read_only', passing: true });
        const refused = await readOnly.query('UPDATE account SET rate = rate').catch((err: unknown) => pgError(err, 'the test database'));
        expect(refused).toBeInstanceOf(LedgerError);
        // Refused before anything was written: a purchase there was not made (buy says so, not "may have been").
        expect(refused).toMatchObject({ transient: true, unwritten: true, message: expect.stringMatching(/takes no writes \(25006/) });
      } finally {
        await readOnly.end();
      }
      const writable = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, options: `-c search_path=${schema.schema}` });
      try {
        expect(await health(writable)).toEqual({ ok: true });
        // A session that began read-only (a database's default, set then reset) stays so: the check
        // ends it and asks a new one, and says the database takes writes again.
        const session = await writable.connect();
        await session.query('SET default_transaction_read_only = on');
        session.release();
        expect(await health(writable)).toEqual({ ok: false, reason: 'read_only', passing: true });
        expect(await health(writable)).toEqual({ ok: true });
      } finally {
        await writable.end();
      }
    } finally {
      await schema.drop();
    }
  });
});

describe('PostgreSQL: a user who may not make the schema, or its tables (at the first start)', () => {
  // 42501: no CREATE on the database; 3F000: the schema made by another role, with no rights for carbon's user (search_path then names none).
  test.each([
    ['42501', 'permission denied for database carbon'],
    ['3F000', 'no schema has been selected to create in'],
  ])(
    '%s is told so, with the ways on, not to grant rights on tables that do not exist yet (nor that the schema was dropped); nothing is left in a transaction',
    async (code, message) => {
      const said: string[] = [];
      // A pool whose one client answers as PostgreSQL does such a user.
      const client = {
        query: async (text: string) => {
          said.push(text.split(' ')[0]!);
          if (text.includes('FROM schema_version'))
            throw Object.assign(new Error('relation "schema_version" does not exist'), { code: '42P01' });
          if (text.startsWith('SELECT to_regclass')) return { rows: [{ made: false }] };
          if (text.startsWith('CREATE SCHEMA')) throw Object.assign(new Error(message), { code });
          return { rows: [] };
        },
        release: () => said.push('release'),
      };
      const pool = { connect: async () => client } as unknown as pg.Pool;
      const err = (await pgMigrate(pool, 'team_a', 'postgres://carbon:***@db/carbon').catch((e: unknown) => e)) as LedgerError;
      expect(err).toBeInstanceOf(LedgerError);
      expect(err.message).toBe(
        `carbon's user may not make the ledger's schema "team_a" or its tables in postgres://carbon:***@db/carbon (${code}: ${message}).`,
      );
      expect(err.hint).toBe(
        'Make the schema for it (CREATE SCHEMA "team_a" AUTHORIZATION <carbon\'s user>), or, made already, give it to carbon\'s user (ALTER SCHEMA "team_a" OWNER TO <carbon\'s user>), or grant it CREATE on the database (docs/deploy.md, "The rights carbon\'s user needs").',
      );
      expect(said.slice(-2)).toEqual(['ROLLBACK', 'release']);
    },
  );
});

describe.runIf(postgresAvailable())('PostgreSQL: a schema there already, without the rights to make tables in it', () => {
  // Another role's schema, as carbon's user meets it: no CREATE on it (taken from its owner here, as
  // the test's user may make no role). CREATE on the database, the other advice, would not help.
  test("said as the schema being another role's, with the rights to grant on it; nothing made", async () => {
    const schema = freshSchema('norights');
    try {
      await sql(`CREATE SCHEMA "${schema.schema}"`);
      await sql(`REVOKE CREATE ON SCHEMA "${schema.schema}" FROM CURRENT_USER`);
      const err = (await openEngine({ kind: 'postgres', url: schema.url }).catch((e: unknown) => e)) as LedgerError;
      expect(err).toBeInstanceOf(LedgerError);
      expect(err.message).toMatch(
        new RegExp(
          `^The ledger's schema "${schema.schema}" in .* is another role's, and carbon's user may not make its tables there \\(42501: permission denied for schema`,
        ),
      );
      expect(err.hint).toContain(`GRANT USAGE, CREATE ON SCHEMA "${schema.schema}" TO <carbon's user>`);
      expect(await sql('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', [schema.schema])).toEqual([{ n: 0 }]);
    } finally {
      await schema.drop();
    }
  });

  test("a ledger made there by another role, no USAGE for carbon's user: said as that, with the rights a running carbon needs", async () => {
    const schema = freshSchema('otherledger');
    try {
      await (await openEngine({ kind: 'postgres', url: schema.url })).close();
      await sql(`REVOKE USAGE ON SCHEMA "${schema.schema}" FROM CURRENT_USER`);
      const err = (await openEngine({ kind: 'postgres', url: schema.url }).catch((e: unknown) => e)) as LedgerError;
      expect(err).toBeInstanceOf(LedgerError);
      expect(err.message).toMatch(
        new RegExp(`^The ledger in schema "${schema.schema}" of .* is another role's, and carbon's user has no rights on it`),
      );
      expect(err.hint).toContain(`SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema.schema}"`);
    } finally {
      await sql(`GRANT USAGE ON SCHEMA "${schema.schema}" TO CURRENT_USER`);
      await schema.drop();
    }
  });
});

describe.runIf(postgresAvailable())('PostgreSQL: the schema changed under a running carbon', () => {
  const pool = (engine: Awaited<ReturnType<typeof openEngine>>) => (engine.sandbox as unknown as { ledger: { pool: pg.Pool } }).ledger.pool;

  test('its tables dropped, or its rights on them taken: a LedgerError a person mends (503, no Retry-After), and the health check fails', async () => {
    for (const change of ['DROP SCHEMA "$S" CASCADE', 'REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA "$S" FROM CURRENT_USER']) {
      const schema = freshSchema('changed');
      try {
        const engine = await openEngine({ kind: 'postgres', url: schema.url });
        try {
          expect(await health(pool(engine))).toEqual({ ok: true });
          await sql(change.replace('$S', schema.schema));
          const refused = await engine.sandbox.topUp('test', 25_000).catch((err: unknown) => err);
          expect(refused, change).toBeInstanceOf(LedgerError);
          // The server refused the statement, so its transaction wrote nothing: a purchase says "Nothing was bought."
          expect(refused).toMatchObject({
            transient: false,
            unwritten: true,
            message: change.startsWith('DROP')
              ? expect.stringMatching(/tables in .* are gone \(42P01/)
              : expect.stringMatching(/refused carbon's user \(42501/),
          });
          // A person mends it: said so, so /healthz answers without Retry-After, as the requests do.
          expect(await health(pool(engine)), change).toEqual({ ok: false, reason: 'ledger_unusable', passing: false });
        } finally {
          await engine.close();
        }
      } finally {
        await schema.drop();
      }
    }
  });

  test("another program's schema_version, with no column carbon reads: refused as not carbon's, nothing changed", async () => {
    const schema = freshSchema('other');
    try {
      await sql(`CREATE SCHEMA "${schema.schema}"`);
      await sql(`CREATE TABLE "${schema.schema}".schema_version (v text)`);
      await sql(`INSERT INTO "${schema.schema}".schema_version VALUES ('hello')`);
      await expect(openEngine({ kind: 'postgres', url: schema.url })).rejects.toThrow(
        /schema "other_[0-9a-f]+" is not one carbon made \(column "version" does not exist\); nothing was changed/,
      );
      expect(await sql(`SELECT v FROM "${schema.schema}".schema_version`)).toEqual([{ v: 'hello' }]);
    } finally {
      await schema.drop();
    }
  });

  test('a Unix socket whose file is gone (its server stopped): cannot be reached right now, a transient LedgerError (503), not a 500', async () => {
    const url = new URL(TEST_DATABASE_URL!);
    const gone = new pg.Pool({
      user: url.username,
      password: url.password,
      database: url.pathname.slice(1),
      host: join(dirs.make(), 'no-socket'),
    });
    try {
      const err = await gone.query('SELECT 1').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ENOENT' });
      expect(pgError(err, 'the test database')).toMatchObject({
        transient: true,
        message: expect.stringMatching(/cannot be reached right now \(ENOENT\)/),
      });
    } finally {
      await gone.end();
    }
  });
});

describe.runIf(postgresAvailable())('PostgreSQL: a session that began read-only', () => {
  test('a write it refuses ends it: the next write asks a new session, and is made', async () => {
    const schema = freshSchema('rosession');
    try {
      const engine = await openEngine({ kind: 'postgres', url: schema.url, pool: 1 });
      try {
        // The ledger pool's one session made read-only, as a database's default set then reset leaves a session.
        const pool = (engine.sandbox as unknown as { ledger: { pool: pg.Pool } }).ledger.pool;
        const session = await pool.connect();
        await session.query('SET default_transaction_read_only = on');
        session.release();
        await expect(engine.sandbox.topUp('test', 25_000)).rejects.toThrow(/takes no writes \(25006/);
        expect(await engine.sandbox.topUp('test', 25_000)).toBe(125_000);
      } finally {
        await engine.close();
      }
    } finally {
      await schema.drop();
    }
  });
});

describe.runIf(postgresAvailable())('PostgreSQL: the journal skips the WAL', () => {
  const persistence = async (schema: string) =>
    (
      await sql(
        "SELECT c.relpersistence AS p FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'journal'",
        [schema],
      )
    )[0]?.p;

  test("a new schema's journal is UNLOGGED; a logged one, as an earlier carbon made it, becomes so at the next start with its entries; the version stays", async () => {
    const schema = freshSchema('unlogged');
    try {
      const first = await openEngine({ kind: 'postgres', url: schema.url });
      await first.service.handle({ method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' });
      await first.close();
      expect(await persistence(schema.schema)).toBe('u');
      await sql(`ALTER TABLE "${schema.schema}".journal SET LOGGED`);
      expect(await persistence(schema.schema)).toBe('p');
      await (await openEngine({ kind: 'postgres', url: schema.url })).close();
      expect(await persistence(schema.schema)).toBe('u');
      expect(await sql(`SELECT count(*)::int AS n FROM "${schema.schema}".journal`)).toEqual([{ n: 1 }]);
      expect(await sql(`SELECT version FROM "${schema.schema}".schema_version`)).toEqual([{ version: 4 }]);
    } finally {
      await schema.drop();
    }
  });
});

describe.runIf(postgresAvailable())('PostgreSQL: a schema of version 3 (every key vault row with its text)', () => {
  test("is brought to version 4 at the next start: the vault's texts and roles kept, a row may hold a role without a text", async () => {
    const schema = freshSchema('v3');
    try {
      const first = await openEngine({ kind: 'postgres', url: schema.url });
      const test = await first.sandbox.defaultKey('test');
      expect(test).toMatch(/^ck_test_/);
      await first.close();
      await sql(`ALTER TABLE "${schema.schema}".key_vault ALTER COLUMN secret SET NOT NULL`);
      await sql(`UPDATE "${schema.schema}".schema_version SET version = 3`);

      const again = await openEngine({ kind: 'postgres', url: schema.url });
      expect(await again.sandbox.defaultKey('test')).toBe(test);
      await again.close();
      expect(await sql(`SELECT version FROM "${schema.schema}".schema_version`)).toEqual([{ version: 4 }]);
      const nullable = await sql(
        "SELECT is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'key_vault' AND column_name = 'secret'",
        [schema.schema],
      );
      expect(nullable).toEqual([{ is_nullable: 'YES' }]);
    } finally {
      await schema.drop();
    }
  });
});

/** Runs one statement on the test database and returns its rows. */
async function sql(text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** SQLite's INTEGER holds any of PostgreSQL's whole-number types; TEXT is text, BLOB is bytea. */
const SAME_TYPE: Record<string, string> = { smallint: 'INTEGER', integer: 'INTEGER', bigint: 'INTEGER', text: 'TEXT', bytea: 'BLOB' };

describe.runIf(postgresAvailable())('the two stores', () => {
  test('hold the same tables, columns, types, nulls and indexes (PostgreSQL adds its key vault, rate windows and version)', async () => {
    const dir = dirs.make();
    await (await openEngine({ kind: 'sqlite', dir })).close();
    const lite = withFile(dir, (db) => {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all() as unknown as Array<{ name: string }>;
      const columns = tables.flatMap(({ name }) =>
        (
          db.prepare(`PRAGMA table_info(${name})`).all() as unknown as Array<{ name: string; type: string; notnull: number; pk: number }>
        ).map((c) => `${name}.${c.name} ${c.type}${c.notnull || c.pk ? ' NOT NULL' : ''}`),
      );
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").all();
      return { columns, indexes: indexes.map((i) => (i as { name: string }).name) };
    });

    const schema = freshSchema('same');
    try {
      await (await openEngine({ kind: 'postgres', url: schema.url })).close();
      const columns = await sql(
        `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
         WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
        [schema.schema],
      );
      // The indexes made by CREATE INDEX (SQLite keeps no text for those its keys and UNIQUE make).
      const indexes = await sql(
        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key' ORDER BY 1",
        [schema.schema],
      );
      const postgresOnly = ['key_vault', 'rate_windows', 'ledger_version', 'schema_version'];
      expect(
        columns
          .filter((c) => !postgresOnly.includes(c.table_name as string))
          .map((c) => `${c.table_name}.${c.column_name} ${SAME_TYPE[c.data_type as string]}${c.is_nullable === 'NO' ? ' NOT NULL' : ''}`),
      ).toEqual(lite.columns);
      expect(indexes.map((i) => i.indexname)).toEqual(lite.indexes);
    } finally {
      await schema.drop();
    }
  });
});
