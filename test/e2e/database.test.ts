import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { carbon, homes, json, ok, serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { freezingProxy } from '../support/freezing-proxy.js';
import { limit } from '../support/load.js';

/** `--database` / CARBON_DATABASE_URL through the built binary: the shared ledger, and every way it can be wrong. */

const newHome = homes();
/** stderr's lines but the warning a password typed in --database draws (docs/security.md). */
const errorLine = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('warning: the database password in --database'));

describe('a database URL that cannot be used: one line, exit code, no password, nothing written', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['not PostgreSQL', 'mysql://root:hunter2@127.0.0.1/db', 2, /must start with postgres:\/\//],
    ['a refused connection', 'postgres://carbon:hunter2@127.0.0.1:1/carbon', 1, /cannot be reached right now \(ECONNREFUSED\)/],
    // A setting mistyped (the URL, or the schema in it) is a usage error, said before anything is opened.
    ['a bad schema name', 'postgres://carbon:hunter2@127.0.0.1:1/carbon?schema=Bad-Name', 2, /schema name "Bad-Name"/],
    // A '#' or '?' in the password, not percent-encoded: psql reads it as the password's, and so
    // does carbon; before, a URL reader took `carbon:2024` for host and port, and the rest,
    // password included, for a fragment or a query: the error then showed the password whole.
    [
      'a "#" in the password',
      'postgres://carbon:2024#hunter2@127.0.0.1:1/carbon',
      1,
      /carbon:\*\*\*@127\.0\.0\.1:1\/carbon cannot be reached right now \(ECONNREFUSED\)/,
    ],
    [
      'a "?" in the password',
      'postgres://carbon:9?hunter2@127.0.0.1:1/carbon',
      1,
      /carbon:\*\*\*@127\.0\.0\.1:1\/carbon cannot be reached right now \(ECONNREFUSED\)/,
    ],
    // With an '@' before them too: a URL reader took `x` for the host, and the error named a host that was not it.
    [
      'an "@" and a "#" and a "?" in the password',
      'postgres://carbon:hunter2@x#y?z@127.0.0.1:1/carbon',
      1,
      /carbon:\*\*\*@127\.0\.0\.1:1\/carbon cannot be reached right now \(ECONNREFUSED\)/,
    ],
    // A '/' ends the host for psql too: refused, saying how to write it, the password masked.
    [
      'a "/" in the password',
      'postgres://carbon:8080/hunter2@127.0.0.1:1/carbon',
      2,
      /not usable: .*a "\/" in the user name or password must be written %2F/,
    ],
  ];
  for (const [what, url, code, says] of cases) {
    test(what, async () => {
      const home = newHome();
      for (const args of [
        ['balance', '--database', url],
        ['sandbox', 'keys', '--database', url],
      ]) {
        const r = await carbon(args, { home });
        expect(r.exitCode, r.stderr).toBe(code);
        expect(r.stdout).toBe('');
        expect(errorLine(r.stderr)).toHaveLength(1);
        expect(r.stderr).toMatch(says);
        // A URL that gets as far as being used warns about its password, masked.
        if (code === 1)
          expect(r.stderr).toMatch(/^warning: the database password in --database postgres:\/\/carbon:\*\*\*@127\.0\.0\.1:1\//);
        expect(r.stderr).not.toContain('hunter2');
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
      // The same URL from the environment.
      const env = await carbon(['list'], { home, env: { CARBON_DATABASE_URL: url } });
      expect([env.exitCode, env.stderr.includes('hunter2')]).toEqual([code, false]);
      // Nothing was written in CARBON_HOME's data directory: the ledger was never SQLite here.
      expect(readdirSync(home).filter((f) => f !== 'config')).toEqual([]);
    });
  }

  test('carbon serve on a refused database: one line, exit 1, never listening', async () => {
    const home = newHome();
    const r = await carbon(['serve', '--port', '0', '--database', 'postgres://carbon:hunter2@127.0.0.1:1/carbon'], { home });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/cannot be reached right now/);
    expect(r.stderr).not.toContain('hunter2');
  });

  test('a URL asking for SSL (sslmode) of a server without it: one line naming the database and sslmode, exit 1, no password', async () => {
    // A server that answers the SSL request with 'N', as PostgreSQL with ssl = off does.
    const server = createServer((socket) => {
      socket.once('data', () => socket.end('N'));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await carbon(['balance'], {
        home: newHome(),
        env: { CARBON_DATABASE_URL: `postgres://carbon:hunter2@127.0.0.1:${port}/carbon?sslmode=verify-full` },
      });
      expect([r.exitCode, r.stdout]).toEqual([1, '']);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^error: PostgreSQL at postgres://carbon:\\*\\*\\*@127\\.0\\.0\\.1:${port}/carbon.* does not accept SSL connections.*sslmode`,
        ),
      );
      expect(r.stderr).not.toContain('hunter2');
    } finally {
      server.close();
    }
  });

  test('CARBON_PG_POOL that is no whole number from 1 to 1000: one line, exit 2, before any connection', async () => {
    const home = newHome();
    for (const value of ['abc', '0', '-1', '1001']) {
      const r = await carbon(['balance', '--database', 'postgres://carbon:hunter2@127.0.0.1:1/carbon'], {
        home,
        env: { CARBON_PG_POOL: value },
      });
      expect([value, r.exitCode, r.stdout]).toEqual([value, 2, '']);
      expect(errorLine(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain(`error: CARBON_PG_POOL must be a whole number from 1 to 1000, not "${value}"`);
    }
  });

  test('a ledger timeout that is not whole milliseconds: one line naming it, exit 2, before the ledger is opened', async () => {
    const home = newHome();
    for (const value of ['abc', '-1', '1.5', '5s', '10000000']) {
      const r = await carbon(['balance'], { home, env: { CARBON_BUSY_TIMEOUT_MS: value } });
      expect([value, r.exitCode, r.stdout]).toEqual([value, 2, '']);
      expect(r.stderr).toBe(`error: CARBON_BUSY_TIMEOUT_MS must be whole milliseconds from 0 to 9999999, not "${value}".\n`);
    }
    expect(existsSync(join(home, 'data'))).toBe(false);
    for (const name of ['CARBON_PG_CONNECT_TIMEOUT_MS', 'CARBON_PG_STATEMENT_TIMEOUT_MS', 'CARBON_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS']) {
      const r = await carbon(['balance', '--json', '--database', 'postgres://carbon:hunter2@127.0.0.1:1/carbon'], {
        home,
        env: { [name]: '2s' },
      });
      expect([name, r.exitCode, r.stdout]).toEqual([name, 2, '']);
      expect(JSON.parse(r.stderr)).toMatchObject({
        error: { code: 'usage_error', message: `${name} must be whole milliseconds from 0 to 9999999, not "2s".` },
      });
    }
    // `carbon config` never opens the ledger: such a variable does not stop it (README, "Keys, profiles and modes").
    const listed = await ok(['config', 'list', '--json'], { home, env: { CARBON_BUSY_TIMEOUT_MS: '5s', CARBON_PG_POOL: 'many' } });
    expect(JSON.parse(listed.stdout)).toMatchObject({ selected_profile: 'default' });
    // Whole milliseconds (0 included) and an empty value (the default) are taken.
    for (const value of ['0', '250', '']) await ok(['balance'], { home, env: { CARBON_BUSY_TIMEOUT_MS: value } });
  });

  test("a command on the remote engine never opens this machine's ledger: its malformed settings stop only what does (carbon serve)", async () => {
    const served = newHome();
    const server = await serve(served);
    try {
      const key = (await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home: served })).find(
        (k) => k.default === 'test',
      )!.secret;
      const home = newHome();
      const remote = { CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
      for (const broken of [
        { CARBON_DATABASE_URL: 'postgres://carbon@127.0.0.1:1/carbon?shema=x' },
        { CARBON_DATABASE_URL: 'mysql://root@127.0.0.1/db' },
        { CARBON_BUSY_TIMEOUT_MS: 'abc' },
        { CARBON_JOURNAL_KEEP: 'many' },
      ]) {
        const r = await carbon(['balance', '--json'], { home, env: { ...remote, ...broken } });
        expect([JSON.stringify(broken), r.exitCode, r.stderr]).toEqual([JSON.stringify(broken), 0, '']);
        expect(JSON.parse(r.stdout)).toMatchObject({ object: 'balance', available_cents: 100000 });
        // carbon serve opens this machine's ledger whatever the base URL says: stopped, exit 2, before listening.
        const s = await carbon(['serve', '--port', '0'], { home, env: { ...remote, ...broken } });
        expect([JSON.stringify(broken), s.exitCode, s.stdout]).toEqual([JSON.stringify(broken), 2, '']);
        expect(s.stderr).toMatch(/^error: (The database URL|CARBON_BUSY_TIMEOUT_MS|CARBON_JOURNAL_KEEP)/);
      }
      expect(existsSync(join(home, 'data'))).toBe(false);
    } finally {
      await server.stop();
    }
  });

  test('a schema name that is no schema name, from --database-schema or CARBON_DATABASE_SCHEMA: exit 2, as any malformed setting', async () => {
    const url = 'postgres://carbon:hunter2@127.0.0.1:1/carbon';
    for (const [args, env, said] of [
      [['--database-schema', 'Bad!'], {}, 'the schema name \\"Bad!\\" must be lowercase letters'],
      [[], { CARBON_DATABASE_SCHEMA: 'Bad!' }, 'the schema name \\"Bad!\\" must be lowercase letters'],
      // PostgreSQL's own: before, exit 1, as a URL not usable ("unacceptable schema name"), or an unexpected error.
      [['--database-schema', 'pg_catalog'], {}, 'the schema name \\"pg_catalog\\" is PostgreSQL\'s own'],
      [['--database-schema', 'information_schema'], {}, 'the schema name \\"information_schema\\" is PostgreSQL\'s own'],
    ] as const) {
      const r = await carbon(['balance', '--json', '--database', url, ...args], { home: newHome(), env });
      expect([r.exitCode, r.stdout, JSON.parse(r.stderr.split('\n').filter((l) => l.startsWith('{'))[0]!).error.code]).toEqual([
        2,
        '',
        'usage_error',
      ]);
      expect(r.stderr).toContain(said);
    }
  });

  test('a URL parameter neither carbon nor PostgreSQL reads, one given twice, or a schema the URL and the flag disagree on: exit 2, no connection', async () => {
    // Each would have used a schema not meant (the default `carbon`, the first, the flag's): another team's sandbox.
    const url = 'postgres://carbon:hunter2@127.0.0.1:1/carbon';
    for (const [query, args, env, said] of [
      ['?shema=team_a', [], {}, 'the parameter \\"shema\\" is not one carbon or PostgreSQL reads (a schema is ?schema=NAME)'],
      ['?schema=team_a&colour=blue', [], {}, 'the parameter \\"colour\\" is not one carbon or PostgreSQL reads'],
      ['?schema=a&schema=b', [], {}, 'the parameter \\"schema\\" is given more than once'],
      [
        '?schema=team_a',
        ['--database-schema', 'other'],
        {},
        '\\"other\\" (--database-schema or CARBON_DATABASE_SCHEMA) and \\"team_a\\" in the URL',
      ],
      ['?schema=team_a', [], { CARBON_DATABASE_SCHEMA: 'other' }, 'and \\"team_a\\" in the URL; give one'],
      // The schema is carbon's to set: the URL's options setting another search_path would have moved the ledger there.
      ['?options=-c%20search_path%3Dteam_y', [], {}, "the URL's options set search_path, which carbon sets to the ledger's schema"],
      // A NUL ends a setting in PostgreSQL's protocol: before, the server's 08P01, said as "cannot be reached right now".
      ['?application_name=x%00y', [], {}, 'the parameter \\"application_name\\" holds a NUL character (%00)'],
    ] as const) {
      const r = await carbon(['balance', '--json', '--database', `${url}${query}`, ...args], { home: newHome(), env });
      expect([query, r.exitCode, r.stdout, r.stderr.trim().split('\n').length]).toEqual([query, 2, '', 1]);
      expect(r.stderr).toContain(said);
      expect(r.stderr).not.toMatch(/ECONNREFUSED|hunter2/);
    }
    const nul = await carbon(['balance', '--database', 'postgres://carbon:hun%00ter2@127.0.0.1:1/carbon'], { home: newHome() });
    expect([nul.exitCode, nul.stderr]).toEqual([
      2,
      expect.stringContaining('the user name, password or database name holds a NUL character (%00)'),
    ]);
    expect(nul.stderr).not.toMatch(/hun|ter2/);
    // The same schema twice, and libpq's own parameters, are taken (and the connection then tried: refused here, exit 1).
    for (const [query, args] of [
      ['?schema=team_a', ['--database-schema', 'team_a']],
      ['?application_name=ci&connect_timeout=5&sslmode=disable', []],
    ] as const) {
      expect((await carbon(['balance', '--database', `${url}${query}`, ...args], { home: newHome() })).exitCode, query).toBe(1);
    }
  });

  test('--database-schema without a database is a usage error', async () => {
    const r = await carbon(['balance', '--database-schema', 'x'], { home: newHome() });
    expect([r.exitCode, r.stderr.trim()]).toEqual([2, 'error: --database-schema goes with --database (or CARBON_DATABASE_URL).']);
  });
});

const run = postgresAvailable() ? describe : describe.skip;

run('one ledger on PostgreSQL, for the CLI and for carbon serve', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  test('a URL without its password, and none in the password file: one line naming PGPASSFILE and ~/.pgpass, exit 1', async () => {
    const home = newHome();
    const url = new URL(TEST_DATABASE_URL!);
    // The test's server asks for a password (CI's role has one): without it, the server would not ask.
    expect(url.password).not.toBe('');
    url.password = '';
    const passfile = join(home, 'pgpass');
    writeFileSync(passfile, '', { mode: 0o600 });
    for (const format of [[], ['--json']]) {
      const r = await carbon(['balance', ...format], { home, env: { CARBON_DATABASE_URL: url.toString(), PGPASSFILE: passfile } });
      expect([r.exitCode, r.stdout]).toEqual([1, '']);
      const said = `PostgreSQL at ${url.toString()} asks for a password, and none was found.`;
      if (format.length === 0) {
        expect(r.stderr.startsWith(`error: ${said} Put it in a password file (PGPASSFILE, or ~/.pgpass: `)).toBe(true);
        expect(r.stderr.split('\n')).toHaveLength(2);
      } else expect(JSON.parse(r.stderr).error).toEqual({ type: 'api_error', code: 'storage_error', message: said });
    }
  });

  test('a password file others may read is not read, as libpq does: one line saying so and what to do, exit 1', async () => {
    const home = newHome();
    const url = new URL(TEST_DATABASE_URL!);
    const password = decodeURIComponent(url.password);
    url.password = '';
    const passfile = join(home, 'pgpass');
    // The right password, in a file of mode 0644.
    writeFileSync(passfile, `*:*:*:${decodeURIComponent(url.username)}:${password.replace(/[\\:]/g, '\\$&')}\n`);
    chmodSync(passfile, 0o644);
    const env = { CARBON_DATABASE_URL: url.toString(), PGPASSFILE: passfile };
    for (const format of [[], ['--json']]) {
      const r = await carbon(['balance', ...format], { home, env });
      expect([r.exitCode, r.stdout]).toEqual([1, '']);
      // Before: the pgpass module's own WARNING line, then "none was found".
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(
        `asks for a password, and the password file ${passfile} can be read or written by others (mode 0644), so it is not read.`,
      );
      if (format.length === 0) expect(r.stderr).toContain('chmod 600');
      expect(r.stderr).not.toContain(password);
    }
    chmodSync(passfile, 0o600);
    expect((await carbon(['balance', '--json'], { home, env })).exitCode).toBe(0);
  });

  test('a setting in the URL the server refuses (a bad value, an unknown name in options): said as the setting, not as an unexpected error', async () => {
    const home = newHome();
    for (const [option, said] of [
      ['statement_timeout%3Dbogus', '(22023: invalid value for parameter \\"statement_timeout\\": \\"bogus\\")'],
      ['no_such_setting%3D1', '(42704: unrecognized configuration parameter \\"no_such_setting\\")'],
    ] as const) {
      const url = new URL(TEST_DATABASE_URL!);
      url.searchParams.set('schema', 'carbon_refused_setting');
      const r = await carbon(['balance', '--json'], { home, env: { CARBON_DATABASE_URL: `${url.toString()}&options=-c%20${option}` } });
      expect([r.exitCode, r.stdout, r.stderr.trim().split('\n').length]).toEqual([1, '', 1]);
      expect(r.stderr).toContain('refused a setting the database URL gives');
      expect(r.stderr).toContain(said);
      expect(r.stderr).not.toContain('Unexpected');
    }
  });

  test("the password from the password file: nothing on stderr but what carbon says; a wrong one there is named as the file's", async () => {
    const home = newHome();
    const url = new URL(TEST_DATABASE_URL!);
    const password = decodeURIComponent(url.password);
    url.password = '';
    const passfile = join(home, 'pgpass');
    // host:port:database:user:password, as libpq reads it; `*` for any.
    writeFileSync(passfile, `*:*:*:${decodeURIComponent(url.username)}:${password.replace(/[\\:]/g, '\\$&')}\n`, { mode: 0o600 });
    const env = { CARBON_DATABASE_URL: url.toString(), PGPASSFILE: passfile };
    // Before: node-postgres's DeprecationWarning ("pgpass support is deprecated"), two lines, at every command.
    const read = await carbon(['balance', '--json'], { home, env });
    expect([read.exitCode, read.stderr]).toEqual([0, '']);
    writeFileSync(passfile, `*:*:*:${decodeURIComponent(url.username)}:not-the-password\n`, { mode: 0o600 });
    const wrong = await carbon(['balance'], { home, env });
    expect([wrong.exitCode, wrong.stdout]).toEqual([1, '']);
    expect(wrong.stderr.trim().split('\n'), wrong.stderr).toHaveLength(1);
    expect(wrong.stderr).toContain('refused the credentials (28P01)');
    expect(wrong.stderr).toContain('PGPASSWORD or the password file (PGPASSFILE, or ~/.pgpass)');
    expect(wrong.stderr).not.toContain('not-the-password');
  });

  test(
    '6 runners buying at once on a new schema: it is made and provisioned once, and every purchase is in it',
    async () => {
      const schema = freshSchema('race');
      schemas.push(schema);
      const env = { CARBON_DATABASE_URL: schema.url };
      const runs = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          carbon(['buy', '--kg', '10', '--reference', `runner-${i}`, '--json'], { home: newHome(), env }),
        ),
      );
      for (const r of runs) expect({ code: r.exitCode, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const ids = runs.map((r) => (JSON.parse(r.stdout) as { id: string }).id);
      const home = newHome();
      const listed = await json<{ data: Array<{ id: string; reference: string }> }>(['list', '--limit', '20'], { home, env });
      expect(new Set(listed.data.map((o) => o.id))).toEqual(new Set(ids));
      expect(listed.data.map((o) => o.reference).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `runner-${i}`));
      // One account: one starting balance, charged six times (10 kg at $0.04 is 40 cents); one set of keys.
      expect((await json<{ available_cents: number }>(['balance'], { home, env })).available_cents).toBe(100_000 - 6 * 40);
      const keys = await json<Array<{ default: string | null }>>(['sandbox', 'keys'], { home, env });
      expect(keys.map((k) => k.default).sort()).toEqual(['live', 'read_only', 'test']);
    },
    limit(60_000),
  );

  // Another session holds a table past carbon's statement deadline: the offsets against writes (reads
  // go on), so the purchase's statement is cancelled; or the balances against reads too, so the
  // ledger does not even open. Neither was made, and each says so: not "may or may not".
  test.each([
    ['a purchase whose statement the server cancels at its deadline (a lock held)', 'offsets', 'SHARE ROW EXCLUSIVE'],
    ['a purchase whose ledger does not open in time (its balances locked against reads)', 'balances', 'ACCESS EXCLUSIVE'],
  ])('%s was not made, and says so', async (_what, table, mode) => {
    const schema = freshSchema('cancelled');
    schemas.push(schema);
    const home = newHome();
    await ok(['balance'], { home, env: { CARBON_DATABASE_URL: schema.url } });
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE "${schema.schema}".${table} IN ${mode} MODE`);
      const env = { CARBON_DATABASE_URL: schema.url, CARBON_PG_STATEMENT_TIMEOUT_MS: String(limit(1_000)) };
      for (const format of [[], ['--json']]) {
        const r = await carbon(['buy', '--kg', '5', '--yes', ...format], { home, env });
        expect([r.exitCode, r.stdout]).toEqual([1, '']);
        expect(r.stderr).toContain('did not finish a statement within');
        expect(r.stderr).toContain('Nothing was bought.');
        expect(r.stderr).not.toMatch(/may or may not|idempotency/);
      }
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await json<{ data: unknown[] }>(['list'], { home, env: { CARBON_DATABASE_URL: schema.url } })).data).toEqual([]);
  });

  test("the URL's own options reach every connection, and the schema stays carbon's: the one ?schema= names", async () => {
    const schema = freshSchema('opts');
    schemas.push(schema);
    const withOptions = (options: string) => ({ CARBON_DATABASE_URL: `${schema.url}&options=${encodeURIComponent(options)}` });
    // Before: the URL's options replaced carbon's search_path, and the sandbox was made and topped up in `public`.
    const topup = await carbon(['sandbox', 'topup', '300'], { home: newHome(), env: withOptions('-c statement_timeout=30000') });
    expect([topup.exitCode, topup.stderr]).toEqual([0, '✓ Topped up $300.00 (test balance).\n']);
    const env = { CARBON_DATABASE_URL: schema.url };
    expect((await json<{ available_cents: number }>(['balance'], { home: newHome(), env })).available_cents).toBe(130_000);
    // Applied: a session made read-only by them takes no write.
    const readOnly = await carbon(['sandbox', 'topup', '300'], {
      home: newHome(),
      env: withOptions('-c default_transaction_read_only=on'),
    });
    expect([readOnly.exitCode, readOnly.stderr]).toEqual([1, expect.stringContaining('takes no writes (25006')]);
    expect((await json<{ available_cents: number }>(['balance'], { home: newHome(), env })).available_cents).toBe(130_000);
  });

  test("a schema carbon did not make (another program's tables): one line naming it, exit 1, nothing changed", async () => {
    const cases = [
      ['notours', 'CREATE TABLE account (id int)', 'relation "account" already exists'],
      [
        'flyway',
        "CREATE TABLE schema_version (version text); INSERT INTO schema_version VALUES ('2024.1')",
        'its schema_version says "2024.1"',
      ],
    ] as const;
    for (const [prefix, tables, why] of cases) {
      const schema = freshSchema(prefix);
      schemas.push(schema);
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA "${schema.schema}"; SET search_path TO "${schema.schema}"; ${tables}`);
        // Before: "Unexpected error: relation …", or "Upgrade carbon" for another program's version.
        const r = await carbon(['balance'], { home: newHome(), env: { CARBON_DATABASE_URL: schema.url } });
        expect([r.exitCode, r.stdout]).toEqual([1, '']);
        expect(r.stderr).toContain(`The database schema "${schema.schema}" is not one carbon made (`);
        expect(r.stderr).toContain(why);
        expect(r.stderr).toContain('Give carbon a schema of its own');
        const left = await client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [
          schema.schema,
        ]);
        expect(left.rows.map((t) => t.table_name)).toEqual([tables.includes('account') ? 'account' : 'schema_version']);
      } finally {
        await client.end();
      }
    }
  });

  test(
    "a command opens one connection to the database, whatever CARBON_PG_POOL says (that is carbon serve's pool): the first, which makes the schema, too",
    async () => {
      const schema = freshSchema('pool');
      schemas.push(schema);
      const proxy = await freezingProxy(new URL(schema.url));
      try {
        const home = newHome();
        const csv = join(home, 'batch.csv');
        writeFileSync(csv, 'reference,kg\nrow-1,2\nrow-2,3\n');
        const runs: Array<[string[], Record<string, string>]> = [
          [['buy', '--kg', '5', '--json'], {}],
          [['balance', '--json'], { CARBON_PG_POOL: '10' }],
          [['list', '--all', '--json'], {}],
          [['impact', '--json'], {}],
          [['buy', '--from-csv', csv, '--json'], { CARBON_PG_POOL: '4' }],
          [['sandbox', 'status', '--json'], {}],
          [['sandbox', 'topup', '250'], {}],
          [['logs', '--json'], {}],
          [['report', '--format', 'csv'], {}],
          [['sandbox', 'snapshot', 'save', join(home, 'snap.ndjson')], {}],
        ];
        const opened: Array<[string, number]> = [];
        for (const [args, env] of runs) {
          const before = proxy.accepted();
          await ok(args, { home, env: { CARBON_DATABASE_URL: proxy.url, ...env } });
          opened.push([args.slice(0, 2).join(' '), proxy.accepted() - before]);
        }
        expect(opened).toEqual(opened.map(([command]) => [command, 1]));
        expect(await json(['balance'], { home: newHome(), env: { CARBON_DATABASE_URL: schema.url } })).toMatchObject({
          available_cents: 100_000 - 20 - 20 + 25_000,
        });
      } finally {
        await proxy.close();
      }
    },
    limit(60_000),
  );

  test(
    'a purchase on one machine is seen by another and by a server; sandbox commands act on the shared sandbox',
    async () => {
      const schema = freshSchema('e2e');
      schemas.push(schema);
      const env = { CARBON_DATABASE_URL: schema.url };
      const [runnerA, runnerB] = [newHome(), newHome()];
      const bought = await json<{ id: string; kg: number }>(['buy', '--kg', '42', '--reference', 'from-a'], { home: runnerA, env });
      const listed = await json<{ data: Array<{ id: string }> }>(['list'], { home: runnerB, env });
      expect(listed.data.map((o) => o.id)).toEqual([bought.id]);
      await ok(['sandbox', 'topup', '250'], { home: runnerB, env });
      expect((await json<{ available_cents: number }>(['balance'], { home: runnerA, env })).available_cents).toBe(100_000 - 168 + 25_000);
      // The keys of the shared sandbox, revealed from any runner, work against a server on it.
      const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home: runnerB, env });
      const testKey = keys.find((k) => k.default === 'test')!.secret;
      const server = await serve(newHome(), ['--database', schema.url]);
      try {
        expect(server.stderr()).not.toContain(new URL(TEST_DATABASE_URL!).password || '\u0000');
        // Where its keys are revealed: the same database, not the same home.
        expect(server.stderr()).toContain('with the same --database (or CARBON_DATABASE_URL) and schema)');
        const res = await fetch(`${server.url}/offsets/${bought.id}`, { headers: { authorization: `Bearer ${testKey}` } });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { reference: string }).reference).toBe('from-a');
        const health = await fetch(`${new URL(server.url).origin}/healthz`);
        expect([health.status, await health.json()]).toEqual([200, { status: 'ok', store: 'postgres' }]);
      } finally {
        expect((await server.stop('SIGTERM')).exitCode).toBe(0);
      }
      // Nothing of the ledger was written to the runners' homes.
      for (const home of [runnerA, runnerB]) expect(readdirSync(home).filter((f) => f !== 'config')).toEqual([]);
    },
    limit(60_000),
  );

  test(
    'a second SIGTERM ends carbon serve within a second while its database holds the journal: what was not written is said to be lost',
    async () => {
      const schema = freshSchema('stop');
      schemas.push(schema);
      // No statement deadline: the journal's last write would wait for the lock as long as it is held.
      const server = await serve(newHome(), ['--database', schema.url, '--show-keys'], { CARBON_PG_STATEMENT_TIMEOUT_MS: '0' });
      const get = () => fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
      expect((await get()).status).toBe(200);
      // Another session holds the journal's table: the entry of the next request cannot be written.
      const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE "${schema.schema}".journal IN ACCESS EXCLUSIVE MODE`);
        expect((await get()).status).toBe(200);
        server.child.kill('SIGTERM');
        await waitUntil(() => server.stderr().includes('SIGTERM: closing'));
        const second = Date.now();
        server.child.kill('SIGTERM');
        const ended = await server.child;
        expect([ended.exitCode, Date.now() - second < limit(10_000)]).toEqual([0, true]);
        expect(server.stderr()).toContain('SIGTERM: stopping now');
        expect(server.stderr()).toContain(
          "stopped without waiting for the ledger: the request journal's last entries, not yet written, are lost",
        );
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        await holder.end();
      }
    },
    limit(60_000),
  );

  test(
    'faults set again (after off, or a snapshot loaded) starts the seeded sequence again on every carbon serve, not only on one that never drew',
    async () => {
      const schema = freshSchema('redraw');
      schemas.push(schema);
      const env = { CARBON_DATABASE_URL: schema.url };
      const home = newHome();
      const [b, c] = [
        await serve(newHome(), ['--database', schema.url, '--show-keys']),
        await serve(newHome(), ['--database', schema.url]),
      ];
      const statuses = async (server: typeof b, n = 12) => {
        const got: number[] = [];
        for (let i = 0; i < n; i++)
          got.push((await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${b.ready.test_key}` } })).status);
        return got;
      };
      const set = ['sandbox', 'faults', 'set', '--error-rate', '0.5', '--errors', '500,503', '--seed', '7', '--retry-after', '0'];
      try {
        await ok(set, { home, env });
        const first = await statuses(b);
        expect(new Set(first)).toEqual(new Set([200, 500, 503]));
        await ok(['sandbox', 'faults', 'off'], { home, env });
        await ok(set, { home, env });
        // The instance that drew before and the one that never did meet the same faults: the seeded sequence from its start.
        expect({ b: await statuses(b), c: await statuses(c) }).toEqual({ b: first, c: first });
        // The same setting set once more is set again: a run after it is repeatable too.
        await ok(set, { home, env });
        expect(await statuses(b)).toEqual(first);
        // A snapshot that holds the setting, loaded back: the sequence starts again too.
        const file = join(home, 'seed.ndjson');
        await ok(['sandbox', 'snapshot', 'save', file], { home, env });
        await statuses(b);
        await ok(['sandbox', 'snapshot', 'load', file], { home, env });
        expect(await statuses(b)).toEqual(first);
        // What is shown is the setting as given.
        expect(await json(['sandbox', 'faults', 'show'], { home, env })).toEqual({
          error_rate: 0.5,
          errors: ['500', '503'],
          latency_ms: null,
          route: null,
          mode: null,
          seed: 7,
          retry_after_seconds: 0,
        });
      } finally {
        await Promise.all([b.stop(), c.stop()]);
      }
    },
    limit(60_000),
  );

  test(
    'a ledger made anew under a running carbon serve (its schema dropped and made again): the next request sees it, not the keys and balance it kept',
    async () => {
      const schema = freshSchema('anew');
      schemas.push(schema);
      const env = { CARBON_DATABASE_URL: schema.url };
      const home = newHome();
      const server = await serve(newHome(), ['--database', schema.url, '--show-keys']);
      const balance = async (key: string) => {
        const res = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await res.json()) as { available_cents?: number; error?: { code: string } };
        return [res.status, body.available_cents ?? body.error?.code];
      };
      try {
        for (let i = 0; i < 3; i++) await ok(['sandbox', 'topup', '250'], { home, env });
        expect(await balance(server.ready.test_key!)).toEqual([200, 175_000]);
        // The sandbox started over the hard way: its schema dropped, and made again by the next command.
        const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await db.connect();
        // The server writes the journal of the requests above meanwhile: its transaction and the DROP
        // can each hold a lock the other waits for, and PostgreSQL ends one (40P01, seen in CI): the
        // DROP is run again, as a person would.
        try {
          for (let attempt = 1; ; attempt++) {
            try {
              await db.query(`DROP SCHEMA "${schema.schema}" CASCADE`);
              break;
            } catch (error) {
              if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
            }
          }
        } finally {
          await db.end();
        }
        const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home, env });
        const fresh = keys.find((k) => k.default === 'test')!.secret;
        expect(await balance(server.ready.test_key!)).toEqual([401, 'api_key_invalid']);
        expect(await balance(fresh)).toEqual([200, 100_000]);
      } finally {
        await server.stop();
      }
    },
    limit(60_000),
  );
});

run('a purchase whose COMMIT reached PostgreSQL but whose answer was lost', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  /**
   * A proxy to the test database that passes everything on, until a connection that wrote an
   * offset sends its COMMIT: from then on, nothing the server answers on it comes back.
   */
  async function losingCommitAnswers(
    wrote = 'INSERT INTO offsets',
    /** The COMMIT's answer comes back, and from then on nothing else does, on any connection. */
    afterCommit = false,
  ): Promise<{ port: number; close(): void; lost: () => number }> {
    const target = new URL(TEST_DATABASE_URL!);
    let lost = 0;
    let committed = false;
    const proxy = createServer((client) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      let wroteOffset = false;
      let swallow = false;
      let commitSent = false;
      client.on('data', (d: Buffer) => {
        const text = d.toString('latin1');
        if (text.includes(wrote)) wroteOffset = true;
        server.write(d);
        if (wroteOffset && !swallow && !commitSent && text.includes('COMMIT')) {
          if (afterCommit) commitSent = true;
          else swallow = true;
          lost++;
        }
      });
      server.on('data', (d: Buffer) => {
        if (committed || swallow) return;
        client.write(d);
        if (commitSent) committed = true;
      });
      for (const [a, b] of [
        [client, server],
        [server, client],
      ] as const) {
        a.on('error', () => b.destroy());
        a.on('close', () => b.destroy());
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return { port: (proxy.address() as AddressInfo).port, close: () => proxy.close(), lost: () => lost };
  }

  /**
   * A home on a fresh schema, made directly (`direct`), and the same database through
   * losingCommitAnswers(wrote) (`env`, statements giving up after 0.5 s).
   */
  async function losingLedger(prefix: string, wrote?: string, afterCommit = false) {
    const schema = freshSchema(prefix);
    schemas.push(schema);
    const direct = { CARBON_DATABASE_URL: schema.url };
    const home = newHome();
    await ok(['balance'], { home, env: direct });
    const proxy = await losingCommitAnswers(wrote, afterCommit);
    const through = new URL(schema.url);
    through.host = `127.0.0.1:${proxy.port}`;
    return { home, direct, proxy, env: { CARBON_DATABASE_URL: through.toString(), CARBON_PG_STATEMENT_TIMEOUT_MS: '500' } };
  }

  test.each([
    ['buy', ['buy', '--kg', '10', '--reference', 'lost', '--json']],
    ['carbon api POST /offsets', ['api', 'POST', '/offsets', '-d', '{"kg":10,"reference":"lost"}', '--json']],
  ])(
    '%s says it may have been made and names the key to retry with; retrying with it returns that purchase, never a second',
    async (_, args) => {
      const { home, direct, proxy, env } = await losingLedger(args[0] === 'buy' ? 'lost' : 'lostapi');
      try {
        const r = await carbon(args, { home, env });
        expect(proxy.lost()).toBe(1);
        expect([r.exitCode, r.stdout]).toEqual([1, '']);
        const error = (
          JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: { code: string; message: string; idempotency_key: string } }
        ).error;
        expect(error.code).toBe('storage_error');
        expect(error.message).toMatch(/The purchase may or may not have been made\.$/);
        // The COMMIT was carried out: the key bought once, and buys no more.
        const again = await json<{ id: string; reference: string }>(
          ['buy', '--kg', '10', '--reference', 'lost', '--idempotency-key', error.idempotency_key],
          { home, env: direct },
        );
        const listed = await json<{ data: Array<{ id: string }> }>(['list', '--reference', 'lost'], { home, env: direct });
        expect(listed.data.map((o) => o.id)).toEqual([again.id]);
        expect((await json<{ available_cents: number }>(['balance'], { home, env: direct })).available_cents).toBe(100_000 - 40);
      } finally {
        proxy.close();
      }
    },
    limit(60_000),
  );

  test(
    'sandbox topup says it may have been made and to see the balance first, not that it can be retried',
    async () => {
      const { home, direct, proxy, env } = await losingLedger('lostup', 'INSERT INTO entries');
      try {
        const r = await carbon(['sandbox', 'topup', '250'], { home, env });
        expect(proxy.lost()).toBe(1);
        expect(r.exitCode).toBe(1);
        expect(r.stderr).toMatch(
          /The top-up may or may not have been made\. See the balance \(carbon balance\) before topping up again\.\n$/,
        );
        expect(r.stderr).not.toContain('can be retried');
        // The COMMIT was carried out: topped up once.
        expect((await json<{ available_cents: number }>(['balance'], { home, env: direct })).available_cents).toBe(100_000 + 25_000);
      } finally {
        proxy.close();
      }
    },
    limit(60_000),
  );

  test(
    'sandbox topup whose COMMIT was answered says it was made, whatever fails after it',
    async () => {
      // Every answer after the COMMIT's is lost: before, the rate read after the top-up failed, and
      // the line said the ledger "cannot be reached right now … can be retried" of a top-up made.
      const { home, direct, proxy, env } = await losingLedger('upmade', 'INSERT INTO entries', true);
      try {
        const r = await carbon(['sandbox', 'topup', '250', '--json'], { home, env });
        expect(proxy.lost()).toBe(1);
        expect([r.exitCode, JSON.parse(r.stdout).available_cents]).toEqual([0, 100_000 + 25_000]);
        expect((await json<{ available_cents: number }>(['balance'], { home, env: direct })).available_cents).toBe(100_000 + 25_000);
      } finally {
        proxy.close();
      }
    },
    limit(60_000),
  );
});

/** Resolves once `ready()` holds, checked every 20 ms (the test's limit bounds it). */
async function waitUntil(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 20));
}
