import { randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import type { RequestEntry } from '../../src/api/journal.js';
import { ledgerPath } from '../support/children.js';
import { carbon, carbonTty, homes, json, ok, plain, sandboxKeys, serve, spawnCarbon, TTY } from '../support/cli.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL } from '../support/database.js';
import { limit } from '../support/load.js';

/**
 * `carbon logs`: the request journal through the built binary, on the local ledger and against
 * a carbon serve (and several on one PostgreSQL ledger); its three outputs, its filters, `show`,
 * `--follow` across processes, and the live API refused.
 */

const newHome = homes();
const ndjson = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RequestEntry);

describe('on the local model', () => {
  test("a command ends without waiting on another process's long write: it answers, exits 0, and its entry is dropped", async () => {
    const home = newHome();
    await ok(['balance'], { home });
    // A write that waited as writes do would wait a minute (before: every read here took the busy timeout).
    const env = { CARBON_BUSY_TIMEOUT_MS: '60000' };
    const other = new DatabaseSync(ledgerPath(home));
    other.exec('BEGIN IMMEDIATE');
    try {
      // Both bundles: the quick start's (balance, impact) and the whole CLI's (list).
      for (const args of [['balance'], ['impact'], ['list']]) {
        const r = await ok([...args, '--json'], { home, env });
        expect(JSON.parse(r.stdout)).toMatchObject({ object: args[0] === 'list' ? 'list' : args[0] });
        expect(r.stderr).toBe('');
      }
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(ndjson((await ok(['logs', '--json'], { home })).stdout).map((e) => e.path)).toEqual(['/api/v1/balance']);
  });

  test('lists what the commands asked and got, newest first: NDJSON, tab-separated rows, a table; filters; show', async () => {
    const home = newHome();
    const bought = await json<{ id: string }>(['buy', '--kg', '5', '--reference', 'ops-1'], { home });
    await ok(['balance'], { home });
    const missing = await carbon(['show', 'off_nothere'], { home });
    expect(missing.exitCode).toBe(5);

    const entries = ndjson((await ok(['logs', '--json'], { home })).stdout);
    expect(entries.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      'GET /api/v1/offsets/off_nothere 404',
      'GET /api/v1/balance 200',
      'POST /api/v1/offsets 201',
    ]);
    const [notFound, , purchase] = entries as [RequestEntry, RequestEntry, RequestEntry];
    expect(purchase).toMatchObject({ offset: bought.id, livemode: false, replayed: false, status: 201 });
    expect(purchase.id).toMatch(/^req_[A-Za-z0-9]{14}$/);
    expect(purchase.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(purchase.request_body)).toMatchObject({ kg: 5, reference: 'ops-1' });
    expect(notFound.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    // The sandbox's keys never appear; their ids do.
    const keys = await json<Array<{ secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const all = (await ok(['logs', '--json'], { home })).stdout;
    for (const k of keys) expect(all).not.toContain(k.secret);
    expect(purchase.key_id).toMatch(/^key_/);

    // In a pipe: one tab-separated row an entry.
    const rows = (await ok(['logs'], { home })).stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(3); // reading the journal is no request of the API
    expect(rows.at(-1)!.split('\t').slice(2, 5)).toEqual(['201', 'POST', '/api/v1/offsets']);

    expect(ndjson((await ok(['logs', '--status', '4xx', '--json'], { home })).stdout).map((e) => e.status)).toEqual([404]);
    expect(ndjson((await ok(['logs', '--method', 'post', '--json'], { home })).stdout)).toHaveLength(1);
    expect(ndjson((await ok(['logs', '--path', '/api/v1/bal', '--json'], { home })).stdout)).toHaveLength(1);
    expect(ndjson((await ok(['logs', '--code', 'resource_missing', '--json'], { home })).stdout)).toHaveLength(1);
    expect(ndjson((await ok(['logs', '--live', '--json'], { home })).stdout)).toHaveLength(0);
    expect(ndjson((await ok(['logs', '--limit', '1', '--json'], { home })).stdout)).toHaveLength(1);
    expect(ndjson((await ok(['logs', '--since', '1h', '--json'], { home })).stdout)).toHaveLength(3);
    expect(ndjson((await ok(['logs', '--since', '2000-01-01', '--status', '201', '--json'], { home })).stdout)).toHaveLength(1);
    expect(ndjson((await ok(['logs', '--request-id', purchase.id, '--json'], { home })).stdout)).toEqual([
      ndjson(all).find((e) => e.id === purchase.id),
    ]);

    // One entry whole: both bodies.
    const shown = await json<RequestEntry>(['logs', 'show', purchase.id], { home });
    expect(shown.id).toBe(purchase.id);
    const text = (await ok(['logs', 'show', purchase.id], { home })).stdout;
    expect(text).toContain(`id\t${purchase.id}\n`);
    expect(text).toContain(`offset\t${bought.id}\n`);
    expect(text).toMatch(/\nresponse_body\t\{"object":"offset"/);

    const card = await carbonTty(['logs', 'show', purchase.id], { home, env: TTY });
    expect(plain(card.output)).toContain('Request body');
    expect(plain(card.output)).toContain('"reference": "ops-1"');
    const table = plain((await carbonTty(['logs'], { home, env: TTY, columns: 140 })).output);
    expect(table).toMatch(/TIME +STATUS +METHOD +PATH +RESULT +MS +REQUEST ID +INSTANCE/);
    expect(table).toContain(bought.id);
    // On a common 100-column terminal, the request's own columns stay whole: INSTANCE and TIME
    // are left out before a path or an error code is cut.
    const narrow = plain((await carbonTty(['logs'], { home, env: TTY, columns: 100 })).output);
    expect(narrow).toMatch(/^STATUS +METHOD +PATH +RESULT +MS +REQUEST ID$/m);
    expect(narrow).toMatch(/ 404 +GET +\/api\/v1\/offsets\/off_nothere +resource_missing +[\d.]+ +req_/);
    // At 120 too: the purchase's path and its offset whole; TIME and INSTANCE give way instead.
    const wider = plain((await carbonTty(['logs'], { home, env: TTY, columns: 120 })).output);
    expect(wider).toMatch(/^STATUS +METHOD +PATH +RESULT +MS +REQUEST ID$/m);
    expect(wider).toMatch(new RegExp(` 201 +POST +/api/v1/offsets +${bought.id} +[\\d.]+ +req_`));
    // On a phone's 40 columns the path goes before the request id would be cut: every id whole.
    const phone = plain((await carbonTty(['logs'], { home, env: TTY, columns: 40 })).output);
    expect(phone).toMatch(/^STATUS +METHOD +REQUEST ID$/m);
    for (const e of ndjson(all)) expect(phone).toMatch(new RegExp(` ${e.status} +${e.method} +${e.id}$`, 'm'));
  });

  test("the answers carbon sandbox faults gave are in the journal: --status 5xx finds a rehearsal's 500 and 503", async () => {
    const home = newHome();
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', '500,503', '--seed', '1', '--retry-after', '0'], { home });
    const failed = await carbon(['balance', '--max-retries', '1', '--json'], { home });
    expect(failed.exitCode).toBe(1);
    await ok(['sandbox', 'faults', 'off'], { home });
    const entries = ndjson((await ok(['logs', '--status', '5xx', '--json'], { home })).stdout);
    expect(entries).toHaveLength(2); // the first try and its retry
    for (const e of entries) {
      expect(e).toMatchObject({ method: 'GET', path: '/api/v1/balance', livemode: false, error: { type: 'api_error' } });
      expect(e.key_id).toMatch(/^key_/);
      expect(e.error?.message).toContain('a fault injected by carbon sandbox faults');
    }
  });

  test('bad filters and unknown entries: one line and the documented exit code, nothing else', async () => {
    const home = newHome();
    for (const args of [
      ['--status', '7xx'],
      ['--limit', '0'],
      ['--since', 'last-week'],
      ['--path', 'offsets'],
      ['--method', 'G/ET'],
      ['--code', ''],
      ['--request-id', ''],
    ]) {
      const r = await carbon(['logs', ...args], { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: --[a-z-]+ [^\n]+\n$/);
    }
    const r = await carbon(['logs', 'show', 'req_nothere'], { home });
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('No request "req_nothere"');
    // A Request-Id of bytes carbon serve could not read as HTTP is in its log, never in the journal: said.
    expect(r.stderr).toContain('not what carbon serve could not read as HTTP (its 400 malformed_request or 431, which are in its own log)');
  });

  test('a journal bound that is no whole number: one line, exit 2, nothing bought or recorded', async () => {
    const home = newHome();
    for (const [name, value, max] of [
      ['CARBON_JOURNAL_KEEP', 'abc', 10_000_000],
      ['CARBON_JOURNAL_MAX_AGE_DAYS', '-1', 3650],
    ] as const) {
      for (const args of [['buy', '--kg', '5'], ['balance'], ['serve', '--port', '0']]) {
        const r = await carbon(args, { home, env: { [name]: value } });
        expect([args.join(' '), r.exitCode, r.stdout]).toEqual([args.join(' '), 2, '']);
        expect(r.stderr).toBe(`error: ${name} must be a whole number up to ${max}, not "${value}".\n`);
      }
    }
    expect(await json(['balance'], { home })).toMatchObject({ available_cents: 100_000 });
    expect(ndjson((await ok(['logs', '--json'], { home })).stdout).map((e) => e.path)).toEqual(['/api/v1/balance']);
  });

  test('CARBON_JOURNAL neither on nor off (a typo, "disabled"): one line, exit 2, not read as on', async () => {
    const home = newHome();
    for (const args of [['buy', '--kg', '5'], ['balance'], ['serve', '--port', '0']]) {
      const r = await carbon(args, { home, env: { CARBON_JOURNAL: 'disabled' } });
      expect([args.join(' '), r.exitCode, r.stdout]).toEqual([args.join(' '), 2, '']);
      expect(r.stderr).toBe('error: CARBON_JOURNAL must be off (or 0, false, no) or on, not "disabled".\n');
    }
    await ok(['balance'], { home, env: { CARBON_JOURNAL: 'OFF' } });
    await ok(['balance'], { home, env: { CARBON_JOURNAL: 'on' } });
    expect(ndjson((await ok(['logs', '--json'], { home })).stdout)).toHaveLength(1);
    expect(await json(['balance'], { home, env: { CARBON_JOURNAL: 'off' } })).toMatchObject({ available_cents: 100_000 });
  });

  test("CARBON_JOURNAL=off is said where an empty journal would puzzle: carbon logs on a terminal, and carbon serve's banner", async () => {
    const home = newHome();
    await ok(['balance'], { home, env: { CARBON_JOURNAL: 'off' } });
    const shown = await carbonTty(['logs'], { home, env: { ...TTY, CARBON_JOURNAL: 'off' } });
    expect([shown.exitCode, plain(shown.output).trim()]).toEqual([
      0,
      `No requests in the journal of ${ledgerPath(home)} yet (CARBON_JOURNAL=off is set here: commands run with it record nothing; a carbon serve records what it answers unless it runs with it too).`,
    ]);
    const server = await serve(home, [], { CARBON_JOURNAL: 'off' });
    expect(server.stderr()).toContain('journal        off (CARBON_JOURNAL=off): carbon logs shows none of what this instance answers');
    await server.stop();
  });
});

describe('against carbon serve', () => {
  test('reads the served journal with a key of the sandbox, and the instance that answered is named', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const key = server.ready.test_key!;
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
    const bought = await json<{ id: string }>(['buy', '--kg', '3'], { home, env });
    const entries = ndjson((await ok(['logs', '--json'], { home, env })).stdout);
    expect(entries[0]).toMatchObject({ offset: bought.id, instance: server.ready.instance });
    expect(server.stderr()).toContain(`instance       ${server.ready.instance}`);
    const shown = await json<RequestEntry>(['logs', 'show', entries[0]!.id], { home, env });
    expect(shown.response_body).toContain(bought.id);
    // --verbose (and CARBON_DEBUG=http): a line a request, as for every other command (before: none for these reads).
    const origin = server.url.replace(/\/api\/v1$/, '');
    for (const [args, extra] of [
      [['logs', '--limit', '1', '--verbose'], {}],
      [['logs', 'show', entries[0]!.id], { CARBON_DEBUG: 'http' }],
    ] as const) {
      const said = (await ok([...args], { home, env: { ...env, ...extra } })).stderr.split('\n').filter(Boolean);
      expect(said.length, args.join(' ')).toBeGreaterThan(0);
      for (const line of said)
        expect(line).toMatch(new RegExp(`^http: GET ${origin}/_sandbox/requests\\S* 200 \\d+\\.\\dms req_\\w{14} attempt 1$`));
      expect(said.join('\n')).not.toContain(key);
    }
    const unknown = await carbon(['logs', 'show', 'req_nothere'], { home, env });
    expect(unknown.exitCode).toBe(5);
    const refused = await carbon(['logs'], { home, env: { ...env, CARBON_API_KEY: `ck_test_${'x'.repeat(32)}` } });
    expect(refused.exitCode).toBe(4);
    await server.stop();
  });

  test("show on a terminal: what a caller sent cannot drive the terminal (a body's or a parameter's escape sequences are shown, not obeyed)", async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const headers = { authorization: `Bearer ${server.ready.test_key}` };
    // A body that is no JSON, holding a title change (OSC), a colour (CSI), a bell and a bare
    // carriage return (which would write over the line); a JSON body with a C1 CSI (U+009B); and
    // a query parameter named by an OSC sequence, which the 422 names in its param.
    const raw = 'abc\u001b]0;PWNED\u0007\u001b[31mRED\u001b[0m\rXYZ';
    const sent = [
      await fetch(`${server.url}/offsets`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'esc-1' }, body: raw }),
      await fetch(`${server.url}/offsets`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'esc-2', 'content-type': 'application/json' },
        body: JSON.stringify({ kg: 1, reference: 'a\u009b31mb' }),
      }),
      await fetch(`${server.url}/offsets?%1b%5d0%3bX%07=1`, { headers }),
    ];
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    for (const res of sent) {
      const card = (await carbonTty(['logs', 'show', res.headers.get('request-id')!], { home, env: { ...TTY, ...env } })).output;
      // Only the card's own styling (SGR: ESC [ … m) reaches the terminal: no OSC, no bell, no C1, no bare CR.
      const foreign = card.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r\n/g, '\n');
      expect(foreign, res.url).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    const body = plain((await carbonTty(['logs', 'show', sent[0]!.headers.get('request-id')!], { home, env: { ...TTY, ...env } })).output);
    // Shown, as --json writes them, so the developer sees what was sent.
    expect(body).toContain('abc\\u001b]0;PWNED\\u0007\\u001b[31mRED\\u001b[0m\\rXYZ');
    // In a pipe too, on the body's one line (before: each control character a space, what was sent lost).
    const piped = (await ok(['logs', 'show', sent[0]!.headers.get('request-id')!], { home, env })).stdout;
    expect(piped.split('\n').filter((line) => line.startsWith('request_body\t'))).toEqual([
      'request_body\tabc\\u001b]0;PWNED\\u0007\\u001b[31mRED\\u001b[0m\\rXYZ',
    ]);
    await server.stop();
  });

  test('entries dropped while another process held the write lock: carbon serve says so in its log soon after, with no request after it', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys'], { CARBON_BUSY_TIMEOUT_MS: String(limit(300)) });
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    const dropped = () =>
      server
        .stderr()
        .split('\n')
        .filter((line) => line.includes('request journal dropped'));
    const other = new DatabaseSync(ledgerPath(home));
    other.exec('BEGIN IMMEDIATE');
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${env.CARBON_API_KEY}` } });
        expect(res.status).toBe(200);
      }
      // carbon logs has the server write what waits before it reads: the lock held past the busy
      // timeout, the three are dropped, and it lists the rest.
      expect(ndjson((await ok(['logs', '--json'], { home, env })).stdout).map((e) => e.path)).not.toContain('/api/v1/balance');
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    // No request after the lock is free. Before, the line waited for the next request or the stop.
    const end = performance.now() + limit(10_000);
    while (dropped().length === 0 && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(dropped()).toEqual([
      expect.stringMatching(
        /^\d{4}-\d\d-\d\dT[\d:.]+Z the request journal dropped 3 entries the ledger did not take \(requests answered from .+Z to .+Z\): carbon logs will not show them$/,
      ),
    ]);
    expect(server.child.exitCode).toBeNull();
    await server.stop();
    expect(dropped()).toHaveLength(1);
  });

  test('--live and --test filter the journal whatever the key: a test CARBON_API_KEY reads the live entries, served and local', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    await ok(['balance'], { home, env });
    await ok(['balance', '--live'], { home, env: { ...env, CARBON_API_KEY: server.ready.live_key! } });
    for (const where of [env, { ...env, CARBON_BASE_URL: '' }]) {
      const live = ndjson((await ok(['logs', '--live', '--json'], { home, env: where })).stdout);
      expect(live.map((e) => [e.path, e.livemode])).toEqual([['/api/v1/balance', true]]);
      const test = ndjson((await ok(['logs', '--test', '--json'], { home, env: where })).stdout);
      expect(test.map((e) => [e.path, e.livemode])).toEqual([['/api/v1/balance', false]]);
    }
    // Elsewhere a key of the other mode is still refused: --live spends with a live key only.
    expect((await carbon(['balance', '--live'], { home, env })).exitCode).toBe(2);
    await server.stop();
  });

  test('refuses the live API (anything that is not a carbon sandbox) with one line that says why', async () => {
    const home = newHome();
    const api = createServer((_, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"type":"invalid_request_error","code":"route_missing","message":"Unrecognized request URL"}}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
      const r = await carbon(['logs'], { home, env: { CARBON_BASE_URL: url, CARBON_API_KEY: `ck_live_${'a'.repeat(32)}` } });
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/is not a carbon sandbox: the live API keeps no journal carbon can read/);
      expect(r.stderr).not.toContain('a'.repeat(32));
    } finally {
      api.close();
    }
  });

  test.each([
    [403, 'insufficient_permissions', 4],
    [429, 'rate_limited', 7],
    [400, 'parameter_invalid', 2],
    [503, 'service_unavailable', 1],
  ])('a sandbox answering %i (%s) exits %i, as every command does for that status', async (status, code, exit) => {
    const home = newHome();
    const api = createServer((_, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', code, message: `Refused: ${code}.` } }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
      const r = await carbon(['logs', '--max-retries', '0'], {
        home,
        env: { CARBON_BASE_URL: url, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` },
      });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([exit, '', `error: Refused: ${code}.\n`]);
    } finally {
      api.close();
    }
  });

  test('no server at the address: one line that says the connection was refused, exit 1', async () => {
    const home = newHome();
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise((resolve) => gone.close(resolve));
    const r = await carbon(['logs'], { home, env: { CARBON_BASE_URL: `${origin}/api/v1`, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` } });
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([
      1,
      '',
      `error: Could not reach ${origin}: connection refused (is the server running?).\n`,
    ]);
  });
});

/** Lines of a running `carbon logs --follow` until `done` says it has them all. */
function follow(home: string, args: string[], env: Record<string, string> = {}) {
  const child = spawnCarbon(home, ['logs', '--follow', ...args], env);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const until = (what: () => boolean, label: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${label}\nstdout: ${out}\nstderr: ${err}`)), 20_000);
      const check = () => {
        if (what()) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      check();
    });
  return {
    child,
    out: () => out,
    err: () => err,
    ready: () => until(() => err.includes('Following the requests of'), 'start'),
    seen: (ids: string[]) => until(() => ids.every((id) => out.includes(id)), `lines for ${ids.join(', ')}`),
  };
}

/** Ctrl-C, or a service manager's SIGTERM: exit 130, and the last line says which stopped it. */
const stopsOn = async (tail: ReturnType<typeof follow>, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT') => {
  tail.child.kill(signal);
  const done = await tail.child;
  expect(done.exitCode).toBe(130);
  const last = tail.err().trimEnd().split('\n').at(-1)!;
  // With --json, the line is the error envelope, its message the same sentence.
  const said = last.startsWith('{') ? (JSON.parse(last) as { error: { message: string } }).error.message : last;
  expect(said).toBe(`Stopped following (${signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM'}).`);
};

describe('carbon logs --follow', () => {
  test('stopped before a server that never answers has answered its first read: exit 130, and the last line says which signal', async () => {
    const asked: unknown[] = [];
    const stuck = createServer((req) => void asked.push(req));
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    const env = {
      CARBON_BASE_URL: `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/api/v1`,
      CARBON_API_KEY: `ck_test_${'a'.repeat(32)}`,
    };
    try {
      // Before: SIGTERM killed it (exit 143, no line), and Ctrl-C exited 130 with no line.
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        const tail = follow(newHome(), [], env);
        const before = asked.length;
        while (asked.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
        await stopsOn(tail, signal);
      }
    } finally {
      stuck.closeAllConnections();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });

  test('on the local ledger: prints what another process (a carbon serve, a command) answers, as it comes, until Ctrl-C', async () => {
    const home = newHome();
    await ok(['balance'], { home }); // provisions the ledger, and is a request already there
    const server = await serve(home, ['--show-keys']);
    const tail = follow(home, []);
    await tail.ready();
    const res = await fetch(`${server.url}/impact`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
    const served = res.headers.get('request-id')!;
    const local = await ok(['quote', '--kg', '2', '--verbose'], {
      home,
      env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! },
    });
    const quoted = /(req_[A-Za-z0-9]{14})/.exec(local.stderr)![1]!;
    await tail.seen([served, quoted]);
    // Only what came after it started: the first balance is not printed.
    expect(tail.out().trimEnd().split('\n')).toHaveLength(2);
    await stopsOn(tail);
    await server.stop();
  });

  test('--limit 0 with --follow: none of the entries before it, only those after (as tail -n 0 -f)', async () => {
    const home = newHome();
    await ok(['balance'], { home });
    const tail = follow(home, ['--limit', '0']);
    await tail.ready();
    const quoted = /(req_[A-Za-z0-9]{14})/.exec((await ok(['quote', '--kg', '2', '--verbose'], { home })).stderr)![1]!;
    await tail.seen([quoted]);
    expect(tail.out().trimEnd().split('\n')).toEqual([expect.stringContaining(quoted)]);
    await stopsOn(tail);
  });

  test('across a sandbox reset: every request after it is printed (the entries after it number on past those seen)', async () => {
    const home = newHome();
    // Three before, two after: the two number on from the third, however late the follower looks.
    for (let i = 0; i < 3; i++) await ok(['balance'], { home });
    const tail = follow(home, []);
    await tail.ready();
    await ok(['sandbox', 'reset', '--yes'], { home });
    const ids: string[] = [];
    for (const args of [['impact'], ['quote', '--kg', '2']]) {
      ids.push(/(req_[A-Za-z0-9]{14})/.exec((await ok([...args, '--verbose'], { home })).stderr)![1]!);
    }
    await tail.seen(ids);
    expect(tail.out().trimEnd().split('\n')).toHaveLength(2);
    // Emptied, not pruned: nothing was missed.
    expect(tail.err(), tail.err()).not.toContain('missed');
    await stopsOn(tail);
  });

  test("across a snapshot loaded by another process: nothing of the snapshot's past, only the requests after the load", async () => {
    // Six in A saved with the journal; one in B, then the follower; A's loaded in B while it follows.
    const [a, b] = [newHome(), newHome()];
    for (let i = 0; i < 6; i++) await ok(['balance'], { home: a });
    const file = join(a, 'a.ndjson');
    await ok(['sandbox', 'snapshot', 'save', '--with-journal', file], { home: a });
    await ok(['impact'], { home: b });
    const tail = follow(b, []);
    await tail.ready();
    await ok(['sandbox', 'snapshot', 'load', file], { home: b });
    // B now holds A's keys, whose texts only A knows.
    const env = { CARBON_API_KEY: (await sandboxKeys(a)).test };
    const next = /(req_[A-Za-z0-9]{14})/.exec((await ok(['quote', '--kg', '2', '--verbose'], { home: b, env })).stderr)![1]!;
    await tail.seen([next]);
    // Before, A's entries with seqs above B's one (2 to 6) were printed first, as if new.
    expect(tail.out().trimEnd().split('\n')).toEqual([expect.stringContaining(next)]);
    // The snapshot's past, skipped on purpose, is not missed.
    expect(tail.err()).not.toContain('missed');
    await stopsOn(tail);
    // carbon logs still lists the snapshot's entries, as its history, below the new one.
    const listed = ndjson((await ok(['logs', '--json'], { home: b })).stdout);
    const saved = ndjson((await ok(['logs', '--json'], { home: a })).stdout);
    expect(listed.map((e) => e.id)).toEqual([next, ...saved.map((e) => e.id)]);
  });

  test('through carbon serve: after a load in another process, only the requests after it', async () => {
    // B starts as a copy of A (its keys), so one key reads B's served journal before the load and after.
    const [a, b] = [newHome(), newHome()];
    const plainFile = join(a, 'plain.ndjson');
    await ok(['sandbox', 'snapshot', 'save', plainFile], { home: a });
    await ok(['sandbox', 'snapshot', 'load', plainFile], { home: b });
    const key = (await sandboxKeys(a)).test;
    for (let i = 0; i < 6; i++) await ok(['balance'], { home: a });
    const file = join(a, 'a.ndjson');
    await ok(['sandbox', 'snapshot', 'save', '--with-journal', file], { home: a });
    await ok(['impact'], { home: b, env: { CARBON_API_KEY: key } });
    const server = await serve(b, [], { CARBON_API_KEY: key });
    const tail = follow(newHome(), ['--json'], { CARBON_BASE_URL: server.url, CARBON_API_KEY: key });
    // With --json, stderr stays quiet: wait for the first request the follower made.
    await new Promise<void>((resolve) => {
      const check = () => (server.stderr().includes('/_sandbox/requests') ? resolve() : setTimeout(check, 20));
      check();
    });
    await ok(['sandbox', 'snapshot', 'load', file], { home: b });
    const res = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
    const id = res.headers.get('request-id')!;
    await tail.seen([id]);
    expect(ndjson(tail.out()).map((e) => e.id)).toEqual([id]);
    await stopsOn(tail);
    await server.stop();
  });

  /**
   * Six requests answered by a carbon serve keeping two entries while the test holds the ledger's
   * write lock: written in one batch when it is let go, pruned to the newest two in the same
   * transaction, so no follower, however quick, can read the first four.
   */
  const burst = async (home: string, paths: string[], running?: Awaited<ReturnType<typeof serve>>) => {
    const server = running ?? (await serve(home, ['--show-keys'], { CARBON_JOURNAL_KEEP: '2' }));
    const other = new DatabaseSync(ledgerPath(home));
    other.exec('BEGIN IMMEDIATE');
    const ids: string[] = [];
    try {
      for (const path of paths) {
        const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
        expect(res.status).toBe(200);
        ids.push(res.headers.get('request-id')!);
      }
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    return { server, ids };
  };
  const missedLines = (err: string) => err.split('\n').filter((l) => l.includes('missed'));

  test('entries pruned (CARBON_JOURNAL_KEEP) before it read them: one line on stderr says how many and why, stdout stays one entry a line, and it goes on', async () => {
    const home = newHome();
    await ok(['balance'], { home });
    const first = ndjson((await ok(['logs', '--json'], { home })).stdout)[0]!.id;
    // --limit 1: the balance first, so the follower is reading before the six come.
    const tail = follow(home, ['--json', '--limit', '1']);
    await tail.seen([first]);
    const { server, ids } = await burst(home, Array(6).fill('/balance'));
    await tail.seen(ids.slice(4));
    expect(missedLines(tail.err())).toEqual([
      'warning: missed 4 entries: gone from the journal before carbon logs read them (it keeps only the newest CARBON_JOURNAL_KEEP entries; a reset or a loaded snapshot empties it).',
    ]);
    const res = await fetch(`${server.url}/impact`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
    const next = res.headers.get('request-id')!;
    await tail.seen([next]);
    expect(ndjson(tail.out()).map((e) => e.id)).toEqual([first, ...ids.slice(4), next]);
    expect(missedLines(tail.err())).toHaveLength(1);
    await stopsOn(tail);
    await server.stop();
  });

  test('started on an emptied journal (a reset), locally or through carbon serve: entries pruned before it read them are said too', async () => {
    const home = newHome();
    for (let i = 0; i < 3; i++) await ok(['balance'], { home });
    await ok(['sandbox', 'reset', '--yes'], { home });
    // Before: it started from 0 on an empty journal, and took whatever came first for the start, in silence.
    const local = follow(home, []);
    await local.ready();
    const { server, ids } = await burst(home, Array(6).fill('/balance'));
    await local.seen(ids.slice(4));
    expect(missedLines(local.err())).toEqual([
      'warning: missed 4 entries: gone from the journal before carbon logs read them (it keeps only the newest CARBON_JOURNAL_KEEP entries; a reset or a loaded snapshot empties it).',
    ]);
    await stopsOn(local);
    // Through carbon serve (GET /_sandbox/requests says newest_seq), after another reset. Another
    // instance on the ledger answers the six: the one followed has none of its own to write before
    // it reads, which would wait for the lock the burst holds, and its answers with it (a write
    // on SQLite waits on the thread that answers), until the busy timeout dropped the entry.
    await ok(['sandbox', 'reset', '--yes'], { home });
    await server.stop();
    const again = await serve(home, ['--show-keys']);
    const remote = follow(newHome(), [], { CARBON_BASE_URL: again.url, CARBON_API_KEY: again.ready.test_key! });
    await remote.ready();
    const second = await burst(home, Array(6).fill('/balance'));
    await remote.seen(second.ids.slice(4));
    expect(missedLines(remote.err())).toEqual([
      'warning: missed 4 entries: gone from the journal before carbon logs read them (it keeps only the newest CARBON_JOURNAL_KEEP entries; a reset or a loaded snapshot empties it).',
    ]);
    await stopsOn(remote);
    await second.server.stop();
    await again.stop();
  });

  test('with a filter: the entries it skipped are not missed; those pruned unread are, matching or not', async () => {
    const home = newHome();
    await ok(['balance'], { home });
    const first = ndjson((await ok(['logs', '--json'], { home })).stdout)[0]!.id;
    const tail = follow(home, ['--path', '/api/v1/balance', '--limit', '1']);
    await tail.seen([first]);
    // Four impacts and a balance, then (kept: the newest two) an impact and a balance.
    const { server, ids } = await burst(home, ['/impact', '/impact', '/impact', '/impact', '/impact', '/balance']);
    await tail.seen([ids[5]!]);
    expect(missedLines(tail.err())).toEqual([
      'warning: missed 4 entries (matching the filter or not): gone from the journal before carbon logs read them (it keeps only the newest CARBON_JOURNAL_KEEP entries; a reset or a loaded snapshot empties it).',
    ]);
    await server.stop();
    // Read, not printed, not missed: the impacts the filter skips (kept: the default keep) say nothing.
    for (const args of [['impact'], ['impact'], ['balance']]) {
      ids.push(/(req_[A-Za-z0-9]{14})/.exec((await ok([...args, '--verbose'], { home })).stderr)![1]!);
    }
    await tail.seen([ids.at(-1)!]);
    expect(missedLines(tail.err()), tail.err()).toHaveLength(1);
    expect(
      plain(tail.out())
        .split('\n')
        .filter((l) => l.includes('/api/v1/impact')),
    ).toEqual([]);
    await stopsOn(tail);
  });

  test('--limit N: the newest N that match are printed first, oldest first, then what comes (tail -n N -f)', async () => {
    const home = newHome();
    for (const args of [['balance'], ['balance'], ['impact'], ['balance']]) await ok(args, { home });
    const [newest, second] = ndjson((await ok(['logs', '--json', '--path', '/api/v1/balance'], { home })).stdout);
    const tail = follow(home, ['--limit', '2', '--path', '/api/v1/balance', '--json']);
    await tail.seen([second!.id, newest!.id]);
    await ok(['impact'], { home }); // filtered out
    const next = /(req_[A-Za-z0-9]{14})/.exec((await ok(['balance', '--verbose'], { home })).stderr)![1]!;
    await tail.seen([next]);
    expect(ndjson(tail.out()).map((e) => e.id)).toEqual([second!.id, newest!.id, next]);
    await stopsOn(tail);
  });

  test('SIGTERM stops it as Ctrl-C does (exit 130), and its last line says SIGTERM', async () => {
    const home = newHome();
    await ok(['balance'], { home });
    const tail = follow(home, []);
    await tail.ready();
    await stopsOn(tail, 'SIGTERM');
  });

  test('against carbon serve: waits on the server for new entries', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    const tail = follow(home, ['--json'], env);
    // With --json, stderr stays quiet: wait for the first request the follower made.
    await new Promise<void>((resolve) => {
      const check = () => (server.stderr().includes('/_sandbox/requests') ? resolve() : setTimeout(check, 20));
      check();
    });
    const res = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${server.ready.test_key}` } });
    const id = res.headers.get('request-id')!;
    await tail.seen([id]);
    expect(ndjson(tail.out()).map((e) => e.id)).toEqual([id]);
    await stopsOn(tail);
    await server.stop();
  });
  test('against carbon serve, across a restart of the server: one warning, asked again, then what comes after', async () => {
    const home = newHome();
    const first = await serve(home, ['--show-keys']);
    const key = first.ready.test_key!;
    const port = new URL(first.url).port;
    const tail = follow(newHome(), [], { CARBON_BASE_URL: first.url, CARBON_API_KEY: key, CARBON_MAX_RETRIES: '0' });
    await tail.ready();
    await first.stop();
    // Until the warning, or the follower's end (exit 1 before it asked again).
    while (!tail.err().includes('Trying again every 2 s.') && tail.child.exitCode === null)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(tail.err()).toContain('Trying again every 2 s.');
    const second = await serve(home, ['--port', port]);
    try {
      const res = await fetch(`${second.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
      const id = res.headers.get('request-id')!;
      await tail.seen([id]);
      // Said on stderr once the read that answered is done (the test's limit bounds the wait).
      while (!tail.err().includes('Reached again: following on.')) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(tail.err().match(/Trying again/g)).toHaveLength(1);
      await stopsOn(tail);
    } finally {
      await second.stop();
    }
  });

  test('against carbon serve, across a sandbox reset: the reset replaces the key it follows with, so it ends at once, exit 4, saying so', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const tail = follow(newHome(), [], { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! });
    await tail.ready();
    await ok(['sandbox', 'reset', '--yes'], { home });
    const done = await tail.child;
    expect(done.exitCode).toBe(4);
    expect(tail.err().trimEnd().split('\n').at(-1)).toBe(
      'error: Invalid API key provided: the journal is read with a key of this sandbox. The sandbox no longer takes the key it was followed with (revoked, or replaced by `carbon sandbox reset`): follow again with a current key (`carbon sandbox keys --reveal`).',
    );
    await server.stop();
  });
});

describe.runIf(postgresAvailable())('on one PostgreSQL ledger', () => {
  const schemas: Array<{ drop(): Promise<void> }> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  test('every instance sees one journal: two carbon serve, each entry naming the one that answered', async () => {
    const schema = freshSchema('logs');
    schemas.push(schema);
    const env = { CARBON_DATABASE_URL: schema.url };
    const [a, b] = [await serve(newHome(), ['--show-keys'], env), await serve(newHome(), ['--show-keys'], env)];
    const key = a.ready.test_key!;
    const viaA = (await fetch(`${a.url}/balance`, { headers: { authorization: `Bearer ${key}` } })).headers.get('request-id')!;
    const viaB = (await fetch(`${b.url}/impact`, { headers: { authorization: `Bearer ${key}` } })).headers.get('request-id')!;
    // Each instance writes its own: a stop writes what is left.
    await b.stop();
    const listed = ndjson((await ok(['logs', '--json'], { home: newHome(), env: { CARBON_BASE_URL: a.url, CARBON_API_KEY: key } })).stdout);
    const instances = new Map(listed.map((e) => [e.id, e.instance]));
    const instanceOf = (s: typeof a) => s.ready.instance;
    expect(instances.get(viaA)).toBe(instanceOf(a));
    expect(instances.get(viaB)).toBe(instanceOf(b));
    expect(instanceOf(a)).not.toBe(instanceOf(b));
    // The local engine on the same ledger reads the same journal.
    const local = ndjson((await ok(['logs', '--json'], { home: newHome(), env })).stdout).map((e) => e.id);
    expect(local).toEqual(expect.arrayContaining([viaA, viaB]));
    await a.stop();
  });
});

describe.runIf(postgresAvailable())('carbon logs --follow on one PostgreSQL ledger', () => {
  test("an instance's batch slow to commit is printed, before the entries another instance wrote meanwhile: none skipped", async () => {
    const schema = freshSchema('logs');
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      const env = { CARBON_DATABASE_URL: schema.url };
      const [a, b] = [await serve(newHome(), ['--show-keys'], env), await serve(newHome(), ['--show-keys'], env)];
      const key = a.ready.test_key!;
      // A's batch for GET /impact takes its seq, then waits (a trigger on a lock this test holds),
      // as a batch does that is slow to commit (a large one, a busy server): B's batch, written
      // meanwhile, numbers after it.
      const lock = randomInt(1, 2 ** 31 - 1);
      await db.query(`CREATE FUNCTION "${schema.schema}".held() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.path = '/api/v1/impact' THEN PERFORM pg_advisory_xact_lock_shared(${lock}); END IF; RETURN NEW; END $$`);
      await db.query(
        `CREATE TRIGGER held BEFORE INSERT ON "${schema.schema}".journal FOR EACH ROW EXECUTE FUNCTION "${schema.schema}".held()`,
      );
      await db.query('SELECT pg_advisory_lock($1)', [lock]);
      const tail = follow(newHome(), [], env);
      await tail.ready();
      const waiting = async (what: string) =>
        Number((await db.query(`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND ${what}`)).rows[0].n) > 0;
      const until = async (what: () => Promise<boolean>) => {
        while (!(await what())) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      const get = async (server: typeof a, path: string) =>
        (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).headers.get('request-id')!;
      const slow = await get(a, '/impact');
      await until(() => waiting(`locktype = 'advisory' AND objid = ${lock}`));
      const quick = await get(b, '/balance');
      // B's journal read writes B's batch first, waiting as a flush does (a timed batch does not
      // wait for the lock: it is tried again with the next). It is either written (and may be
      // printed) or waits for A's: then A's goes on.
      const read = fetch(`${b.origin}/_sandbox/requests?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      await until(async () => tail.out().includes(quick) || (await waiting(`relation = '"${schema.schema}".journal'::regclass`)));
      await db.query('SELECT pg_advisory_unlock($1)', [lock]);
      await tail.seen([slow, quick]);
      expect((await read).status).toBe(200);
      expect(tail.out().match(/req_[A-Za-z0-9]{14}/g)).toEqual([slow, quick]);
      await stopsOn(tail);
      await Promise.all([a.stop(), b.stop()]);
    } finally {
      await db.end();
      await schema.drop();
    }
  });
});
