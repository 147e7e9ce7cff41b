import { writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { homes, ok, type Served, serve, spawnCarbon } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { freezingProxy } from '../support/freezing-proxy.js';
import { limit } from '../support/load.js';
import { rawExchange } from '../support/raw-http.js';

/**
 * `carbon serve` (the built binary) while its PostgreSQL does not answer: a TCP proxy between them
 * stops passing anything on, as a partition or a stopped server does (connections accepted, no
 * answer), with the deadlines' defaults unless a test says otherwise. The same with the cluster's
 * processes stopped (SIGSTOP), under load: test/reliability/postgres-faults.test.ts.
 */

const newHome = homes();
const run = postgresAvailable() ? describe : describe.skip;

run('carbon serve while PostgreSQL does not answer', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const done of cleanup.reverse()) await done();
  });

  /** A server on a fresh schema, reached through a proxy the test freezes and thaws. */
  const stallable = async (env: Record<string, string> = {}) => {
    const schema: TestSchema = freshSchema('stall');
    cleanup.push(() => schema.drop());
    const proxy = await freezingProxy(new URL(schema.url));
    cleanup.push(() => proxy.close());
    const server: Served = await serve(newHome(), ['--show-keys'], { CARBON_DATABASE_URL: proxy.url, ...env });
    cleanup.push(() => server.kill());
    return { schema, proxy, server };
  };

  /** GET /healthz: its status, body, Retry-After and how long it took (ms). */
  const probe = async (server: Served) => {
    const sent = performance.now();
    const res = await fetch(`${server.origin}/healthz`, { signal: AbortSignal.timeout(limit(30_000)) });
    const body = (await res.json()) as unknown;
    return { status: res.status, body, retryAfter: res.headers.get('retry-after'), took: performance.now() - sent };
  };

  test(
    '/healthz answers 503 within a second (a probe with a 1 s timeout gets an answer), and 200 again once the database answers, with no restart',
    async () => {
      const { proxy, server } = await stallable();
      expect(await probe(server)).toMatchObject({ status: 200, body: { status: 'ok', store: 'postgres' } });
      proxy.freeze();
      try {
        // A probe at a time, as a kubelet sends them, then several at once (balancers of each instance).
        const probes = [await probe(server), await probe(server), ...(await Promise.all([1, 2, 3].map(() => probe(server))))];
        for (const p of probes) {
          expect(p).toMatchObject({ status: 503, body: { status: 'unavailable', store: 'postgres' }, retryAfter: '1' });
          // Before: 4.5 to 5 s, the statement and connect deadlines, so the probe timed out instead.
          // The server answers at 800 ms; a machine whose cores are all taken (CI beside the suite's
          // other worker) adds its lag, seen up to 1.44 s: the bound tells the two apart, not the lag.
          expect(p.took, 'the 503 came well before the deadlines').toBeLessThan(limit(2_000));
        }
      } finally {
        proxy.thaw();
      }
      // The check under way when the database went on answers: the next probe says 200 at once.
      const back = await probe(server);
      expect(back).toMatchObject({ status: 200, body: { status: 'ok', store: 'postgres' } });
      expect(back.took).toBeLessThan(limit(2_000));
      expect(server.child.exitCode).toBeNull();
      expect(server.stderr()).not.toMatch(/ 500 /);
    },
    limit(60_000),
  );

  /** Deadlines short enough for a test, long enough for a busy machine when nothing is stalled. */
  const SHORT = { CARBON_PG_STATEMENT_TIMEOUT_MS: String(limit(500)), CARBON_PG_CONNECT_TIMEOUT_MS: String(limit(1000)) };

  /**
   * A request the server refuses before the service (Idempotency-Key twice) and keeps in the
   * journal without asking the ledger anything: answered at once while the database is stalled.
   */
  const refused = async (server: Served) => {
    const port = Number(new URL(server.origin).port);
    const r = await rawExchange(
      port,
      'POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    );
    expect(r.status).toBe(400);
    return r.headers['request-id']!;
  };
  /** A request that needs the ledger: 503 once the deadlines have passed; its Request-Id. */
  const unavailable = async (server: Served) => {
    const res = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
    expect(res.status).toBe(503);
    return res.headers.get('request-id')!;
  };
  test(
    'paths whose answers are always pages (a certificate URL, the developer page) answer the 503 as a page whatever Accept says; the API and /_sandbox keep JSON',
    async () => {
      const { proxy, server } = await stallable(SHORT);
      // Signed in to the developer page (its one-time link) while the database answers.
      const login = await fetch(server.ready.developer_page_url, { redirect: 'manual' });
      const session = { cookie: login.headers.getSetCookie()[0]!.split(';')[0]! };
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const res = await fetch(`${server.origin}${path}`, { headers, signal: AbortSignal.timeout(limit(30_000)) });
        return {
          path,
          status: res.status,
          type: res.headers.get('content-type'),
          retryAfter: res.headers.get('retry-after'),
          text: await res.text(),
        };
      };
      const certificate = '/certificates/cert_000000000000000000000000';
      // Up: the certificate URL is HTML (its 404) to any client.
      expect(await get(certificate)).toMatchObject({ status: 404, type: 'text/html; charset=utf-8' });
      proxy.freeze();
      try {
        const key = { authorization: `Bearer ${server.ready.test_key}` };
        const [pages, json] = await Promise.all([
          Promise.all([
            get(certificate), // fetch's Accept: */*, as curl's
            get(certificate, { accept: 'application/json' }),
            get(certificate, { accept: 'text/html' }),
            get('/offsets/off_x', session),
            get('/requests', session),
          ]),
          Promise.all([get('/api/v1/balance', key), get('/_sandbox/requests', key)]),
        ]);
        for (const page of pages) {
          // Before: JSON for any client whose Accept did not name HTML.
          expect(page, page.path).toMatchObject({ status: 503, type: 'text/html; charset=utf-8', retryAfter: '1' });
          expect(page.text).toContain('The service cannot reach its ledger right now.');
        }
        for (const api of json) {
          expect(api, api.path).toMatchObject({ status: 503, type: 'application/json', retryAfter: '1' });
          expect(JSON.parse(api.text).error.code).toBe('service_unavailable');
        }
      } finally {
        proxy.thaw();
      }
    },
    limit(60_000),
  );

  const dropLines = (server: Served) =>
    server
      .stderr()
      .split('\n')
      .filter((line) => line.includes('request journal dropped'));

  test(
    'requests answered while the database stalled are in the journal once it answers again, its 503s too; nothing is said to be lost',
    async () => {
      const { schema, proxy, server } = await stallable(SHORT);
      proxy.freeze();
      const ids: string[] = [];
      try {
        for (let i = 0; i < 5; i++) ids.push(await refused(server));
        // Sent after the refusals: once it has met the deadlines, so has the journal's first try at them.
        ids.push(await unavailable(server));
        ids.push(await unavailable(server));
      } finally {
        proxy.thaw();
      }
      const db = new pg.Client({ connectionString: schema.url.replace(/\?.*$/, '') });
      await db.connect();
      try {
        const written = async () =>
          (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema.schema}".journal WHERE request_id = ANY($1)`, [ids]))
            .rows[0]!.n;
        // Before: the batch whose model time could not be read was lost, counted nowhere, said nowhere.
        const end = performance.now() + limit(10_000);
        while ((await written()) < ids.length && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(await written()).toBe(ids.length);
        // The 503s as the app met them: the path, the status and the error, the mode its key names.
        const met = await db.query(
          `SELECT path, status::int, error_code, livemode FROM "${schema.schema}".journal WHERE request_id = ANY($1)`,
          [ids.slice(5)],
        );
        expect(met.rows).toEqual(Array(2).fill({ path: '/api/v1/balance', status: 503, error_code: 'service_unavailable', livemode: 0 }));
      } finally {
        await db.end();
      }
      expect(dropLines(server)).toEqual([]);
    },
    limit(60_000),
  );

  /** A fresh schema with its ledger made (a first `carbon balance` straight to it), and the home that made it. */
  const ledgerMade = async (prefix: string) => {
    const schema: TestSchema = freshSchema(prefix);
    cleanup.push(() => schema.drop());
    const home = newHome();
    await ok(['balance'], { home, env: { CARBON_DATABASE_URL: schema.url } });
    return { schema, home };
  };

  test(
    'a batch the database stalls under: its error line, then the exit within about a second, not after the journal and the pool each wait a deadline',
    async () => {
      const { schema, home } = await ledgerMade('stallcli');
      const proxy = await freezingProxy(new URL(schema.url));
      cleanup.push(() => proxy.close());
      const csv = join(home, 'rows.csv');
      writeFileSync(csv, `kg,reference\n${Array.from({ length: 200 }, (_, i) => `${1 + (i % 9)},stall-${i}`).join('\n')}\n`);
      // Statements give up after 0.5 s; a connection after 4 s (the wait the end no longer makes).
      const env = { CARBON_DATABASE_URL: proxy.url, CARBON_PG_STATEMENT_TIMEOUT_MS: '500', CARBON_PG_CONNECT_TIMEOUT_MS: '4000' };
      const child = spawnCarbon(home, ['buy', '--from-csv', csv, '--json'], env);
      let stdout = '';
      let stderr = '';
      let errorAt = 0;
      child.stdout!.on('data', (d: Buffer) => {
        stdout += d;
        // A row is bought: the database stops answering from here.
        if (stdout.includes('\n')) proxy.freeze();
      });
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d;
        if (errorAt === 0 && stderr.includes('batch_incomplete')) errorAt = performance.now();
      });
      try {
        const done = await child;
        const tail = performance.now() - errorAt;
        expect(done.exitCode, stderr).toBe(10);
        expect(errorAt).toBeGreaterThan(0);
        // Before: 4 s and more (the journal's write on a new connection, then the pool's end).
        expect(tail, 'from the error line to the exit').toBeLessThan(limit(2_500));
      } finally {
        proxy.thaw();
      }
    },
    limit(60_000),
  );

  test(
    'a buy whose purchase the database stalls under (its quote in the journal): the error line, then the exit within about a second',
    async () => {
      const { schema, home } = await ledgerMade('stallbuy');
      // A proxy that stops passing anything on once a purchase's transaction locks the account.
      const target = new URL(schema.url);
      let frozen = false;
      const sockets = new Set<Socket>();
      const proxy = createServer((client) => {
        const server = connect(Number(target.port || 5432), target.hostname);
        sockets.add(client).add(server);
        client.on('data', (d: Buffer) => {
          if (d.toString('latin1').includes('LOCK TABLE account')) frozen = true;
          if (!frozen) server.write(d);
        });
        server.on('data', (d: Buffer) => {
          if (!frozen) client.write(d);
        });
        for (const s of [client, server]) s.on('error', () => {});
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      cleanup.push(async () => {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => proxy.close(resolve));
      });
      const through = new URL(schema.url);
      through.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const env = { CARBON_DATABASE_URL: through.toString(), CARBON_PG_STATEMENT_TIMEOUT_MS: '500', CARBON_PG_CONNECT_TIMEOUT_MS: '4000' };
      const child = spawnCarbon(home, ['buy', '--kg', '1', '--max-cents', '100000'], env);
      let stderr = '';
      let errorAt = 0;
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d;
        if (errorAt === 0 && stderr.includes('may or may not have been made')) errorAt = performance.now();
      });
      const done = await child;
      expect(frozen, 'the purchase reached the database').toBe(true);
      expect(done.exitCode, stderr).toBe(1);
      expect(errorAt).toBeGreaterThan(0);
      // Before: 7 s (the quote's journal entry written on a new connection, then the pool's end).
      expect(performance.now() - errorAt, 'from the error line to the exit').toBeLessThan(limit(2_500));
    },
    limit(60_000),
  );

  test(
    'entries the ledger could not take when the server stops during the stall: one line says how many, and that carbon logs will not show them',
    async () => {
      const { proxy, server } = await stallable(SHORT);
      proxy.freeze();
      try {
        for (let i = 0; i < 5; i++) await refused(server);
        await unavailable(server);
        server.child.kill('SIGTERM');
        expect((await server.child).exitCode).toBe(0);
      } finally {
        proxy.thaw();
      }
      // One line for the six, the 503 among them (not one an entry or a try), with when they were answered; before, nothing.
      expect(dropLines(server)).toEqual([
        expect.stringMatching(
          /^\d{4}-\d\d-\d\dT[\d:.]+Z the request journal dropped 6 entries the ledger did not take \(requests answered from \d{4}-\d\d-\d\dT[\d:.]+Z to \d{4}-\d\d-\d\dT[\d:.]+Z\): carbon logs will not show them$/,
        ),
      ]);
      expect(server.stderr()).not.toContain(new URL(TEST_DATABASE_URL!).password || '\u0000');
    },
    limit(60_000),
  );

  test(
    "the developer page a form's unsure redirect leads to, while the database still does not answer: its 503 says the form may not have been done",
    async () => {
      const { proxy, server } = await stallable(SHORT);
      const login = await fetch(server.ready.developer_page_url, { redirect: 'manual' });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const page = async (path: string) => {
        const res = await fetch(`${server.origin}${path}`, {
          headers: { cookie, accept: 'text/html' },
          signal: AbortSignal.timeout(limit(30_000)),
        });
        return { status: res.status, text: await res.text() };
      };
      // Where a top-up the ledger did not answer is sent (test/server/page-form-unanswered.test.ts).
      const unsure = '/?mode=test&unsure=topup#notice';
      proxy.freeze();
      try {
        const shown = await page(unsure);
        expect(shown.status).toBe(503);
        // Before: "Nothing was changed by this request." alone, read as of the top-up just sent.
        expect(shown.text).toContain(
          'The ledger did not answer the form you sent: it may not have been done, or, if only its answer was lost, it was. Check this page before doing it again.',
        );
        expect(shown.text).toContain('Showing this page changed nothing.');
        expect(shown.text).not.toContain('Nothing was changed');
        // A page with no form before it says what it said; so do pages no form leads to, whatever their address carries.
        expect((await page('/?mode=test')).text).toContain('Nothing was changed by this request.');
        for (const other of ['/offsets/off_none?unsure=topup', '/certificates/cert_0123456789abcdef01234567?unsure=topup']) {
          const shownThere = await page(other);
          expect([other, shownThere.status, shownThere.text]).toEqual([
            other,
            503,
            expect.stringContaining('Nothing was changed by this request.'),
          ]);
          expect(shownThere.text).not.toContain('did not answer the form');
        }
      } finally {
        proxy.thaw();
      }
      const back = await page(unsure);
      expect([back.status, back.text]).toEqual([200, expect.stringContaining('The ledger did not answer that form in time')]);
    },
    limit(60_000),
  );

  test(
    'a local carbon logs --follow rides out a database that stops answering: one warning, then on from where it was once it answers',
    async () => {
      const schema: TestSchema = freshSchema('follow');
      cleanup.push(() => schema.drop());
      const proxy = await freezingProxy(new URL(schema.url));
      cleanup.push(() => proxy.close());
      const home = newHome();
      await ok(['sandbox', 'status'], { home, env: { CARBON_DATABASE_URL: schema.url } });
      const follower = spawnCarbon(home, ['logs', '--follow'], { CARBON_DATABASE_URL: proxy.url, ...SHORT });
      cleanup.push(async () => follower.kill('SIGKILL'));
      let out = '';
      let err = '';
      follower.stdout!.setEncoding('utf8').on('data', (d: string) => void (out += d));
      follower.stderr!.setEncoding('utf8').on('data', (d: string) => void (err += d));
      const until = async (what: string, done: () => boolean, ms = 30_000) => {
        for (const end = performance.now() + limit(ms); !done(); await new Promise((r) => setTimeout(r, 20)))
          if (performance.now() > end || follower.exitCode !== null) throw new Error(`no ${what}; stderr: ${err}`);
      };
      await until('start', () => err.includes('Following the requests'));
      proxy.freeze();
      // Before: exit 1 on the first read that failed, the follower gone with the database's moment.
      await until('warning', () => err.includes('Trying again every 2 s.'));
      proxy.thaw();
      // Said once the ledger answers (a try every 2 s), before any entry comes; before, only once
      // a read ended: at the next entry, or when its 20 s wait for one ran out.
      await until('"Reached again"', () => err.includes('Reached again: following on.'), 12_000);
      expect(out).toBe('');
      await ok(['buy', '--kg', '3', '--reference', 'after-the-stall'], { home, env: { CARBON_DATABASE_URL: schema.url } });
      await until('entry', () => /\bPOST\b.*\/api\/v1\/offsets/.test(out));
      expect(err.match(/Trying again/g)).toHaveLength(1);
      follower.kill('SIGTERM');
      expect((await follower).exitCode).toBe(130);
      expect(err).not.toContain(new URL(TEST_DATABASE_URL!).password || '\u0000');
    },
    limit(90_000),
  );
});
