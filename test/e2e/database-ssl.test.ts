import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { carbon, homes } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { TLS_CERT, type TlsProxy, tlsProxy } from '../support/tls-proxy.js';

/**
 * `sslmode` in CARBON_DATABASE_URL means what it means to psql (libpq), and carbon prints nothing
 * of its own about it: node-postgres 8 took prefer, require and verify-ca for verify-full, and
 * printed an 8-line SECURITY WARNING on stderr about that changing in pg 9. Against a front that
 * speaks SSL with a self-signed certificate (or refuses SSL), in front of the test database.
 */

const newHome = homes();
const run = postgresAvailable() ? describe : describe.skip;

run('sslmode as psql reads it', () => {
  const schemas: TestSchema[] = [];
  let sslOnly: TlsProxy;
  let noSsl: TlsProxy;
  beforeAll(async () => {
    sslOnly = await tlsProxy(TEST_DATABASE_URL!, 'ssl-only');
    noSsl = await tlsProxy(TEST_DATABASE_URL!, 'no-ssl');
  });
  afterAll(async () => {
    await Promise.all([sslOnly.close(), noSsl.close()]);
    for (const s of schemas) await s.drop();
  });

  /** `carbon balance --json` on the proxy's URL with `query`; the password in it is `hunter2` for no server. */
  const balance = (proxy: TlsProxy, query: string) => {
    const schema = freshSchema('ssl');
    schemas.push(schema);
    return carbon(['balance', '--json'], { home: newHome(), env: { CARBON_DATABASE_URL: proxy.url(`schema=${schema.schema}&${query}`) } });
  };

  test('require, verify-ca with its root certificate, allow and prefer connect to an SSL-only server, encrypted, printing only the data', async () => {
    for (const query of ['sslmode=require', `sslmode=verify-ca&sslrootcert=${TLS_CERT}`, 'sslmode=allow', 'sslmode=prefer']) {
      const before = { ...sslOnly.sessions };
      const r = await balance(sslOnly, query);
      expect({ query, code: r.exitCode, stderr: r.stderr }).toEqual({ query, code: 0, stderr: '' });
      expect(JSON.parse(r.stdout)).toMatchObject({ available_cents: 100_000 });
      expect(sslOnly.sessions.encrypted, query).toBeGreaterThan(before.encrypted);
      expect(sslOnly.sessions.plain, query).toBe(before.plain);
    }
  });

  test('prefer and allow connect without SSL to a server that has it off, as psql does; disable never asks for it', async () => {
    for (const query of ['sslmode=prefer', 'sslmode=allow', 'sslmode=disable']) {
      const r = await balance(noSsl, query);
      expect({ query, code: r.exitCode, stderr: r.stderr }).toEqual({ query, code: 0, stderr: '' });
      expect(JSON.parse(r.stdout)).toMatchObject({ available_cents: 100_000 });
    }
    expect(noSsl.sessions.encrypted).toBe(0);
  });

  test('a certificate that cannot be verified: one line naming the database and what to do, exit 1, no password', async () => {
    const cases: Array<[string, RegExp]> = [
      // Self-signed: Node's trusted roots do not have it.
      ['sslmode=verify-full', /certificate .*could not be verified \(self-signed certificate\)/],
      // Signed by the root named, but for another host than 127.0.0.1.
      [`sslmode=verify-full&sslrootcert=${TLS_CERT}`, /certificate .*could not be verified \(.*does not match.*\)/],
    ];
    for (const [query, says] of cases) {
      const url = sslOnly.url(`sslmode=x`).replace(/\/\/[^@]*@/, '//carbon:hunter2@');
      const r = await carbon(['balance'], { home: newHome(), env: { CARBON_DATABASE_URL: url.replace('sslmode=x', query) } });
      expect([query, r.exitCode, r.stdout]).toEqual([query, 1, '']);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: PostgreSQL at postgres:\/\/carbon:\*\*\*@127\.0\.0\.1:\d+\//);
      expect(r.stderr).toMatch(says);
      expect(r.stderr).toContain('sslrootcert');
      expect(r.stderr).not.toContain('hunter2');
    }
  });
});

describe('an SSL setting carbon cannot use: one line, before any connection, no password', () => {
  // Mistyped (a value that is none of its values, a pair that does not go together): a malformed
  // setting, exit 2, as any (README, "Exit codes"); a file that cannot be read is found when
  // connecting, exit 1.
  const cases: Array<[string, Record<string, string>, number, RegExp]> = [
    [
      'sslmode=maybe',
      {},
      2,
      /^error: The database URL is not usable: sslmode "maybe" is not one of disable, allow, prefer, require, verify-ca, verify-full, no-verify\./,
    ],
    ['sslmode=verify-ca', {}, 2, /sslmode "verify-ca" needs sslrootcert=<file>/],
    ['sslmode=require&sslnegotiation=sideways', {}, 2, /sslnegotiation "sideways" is not postgres or direct/],
    // Without an sslmode too (before: the driver's "Unexpected error", exit 1).
    ['sslnegotiation=sideways', {}, 2, /: sslnegotiation "sideways" is not postgres or direct\./],
    ['', { PGSSLMODE: 'bogus' }, 2, /: PGSSLMODE "bogus" is not one of disable, /],
    ['sslmode=require&sslrootcert=/nonexistent/root.crt', {}, 1, /sslrootcert \/nonexistent\/root\.crt cannot be read \(ENOENT\)/],
  ];
  for (const [query, env, code, says] of cases) {
    test(`${query}${Object.keys(env).join('')}: exit ${code}`, async () => {
      const r = await carbon(['balance'], {
        home: newHome(),
        env: { CARBON_DATABASE_URL: `postgres://carbon:hunter2@127.0.0.1:1/carbon?${query}`, ...env },
      });
      expect([r.exitCode, r.stdout]).toEqual([code, '']);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(says);
      expect(r.stderr).not.toMatch(/ECONNREFUSED|hunter2/);
    });
  }

  test('a "/" in the password is said, with how to write it', async () => {
    const r = await carbon(['balance'], { home: newHome(), env: { CARBON_DATABASE_URL: 'postgres://carbon:hun/ter2@127.0.0.1:1/carbon' } });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain('(a "/" in the user name or password must be written %2F)');
    expect(r.stderr).not.toContain('ter2');
  });

  // An "@" in the password before its "/": the URL reads as a host made of the password's middle,
  // and the rest of it, with an "@", as the path. Said the same way, with none of the password.
  test('an "@" and then a "/" in the password: refused before connecting, the password never shown', async () => {
    const url = 'postgres://carbon:Tr0ub4dor@x/horse-battery-staple@127.0.0.1:1/carbon';
    for (const [args, env] of [
      [['balance'], { CARBON_DATABASE_URL: url }],
      [['balance', '--json'], { CARBON_DATABASE_URL: url }],
      [['balance', '--database', url], {}],
    ] as const) {
      const r = await carbon([...args], { home: newHome(), env });
      expect([r.exitCode, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain('in the user name or password must be written %2F');
      expect(r.stderr).not.toMatch(/Tr0ub4dor|horse|battery|staple/);
    }
  });
});
