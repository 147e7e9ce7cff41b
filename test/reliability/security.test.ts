/**
 * Security: carbon tried as an attacker would try it (issue 26), one case a test, grouped here so
 * the next round adds to one place. docs/security.md says what each protects.
 *
 * - page sessions end: sign-out and `sandbox reset` end them on every instance sharing the store;
 *   a reset ends the login links not yet used too;
 * - one key per "Create key", shown once, never in a URL; a reload makes no other;
 * - `?done=constructor` and friends are only unknown notices;
 * - no full API key in an answer's message or `param`, nor in the access log, percent-encoded or not;
 * - `sandbox-keys.json` is tightened back to 0600; a ledger deleted under a server gets one clear line;
 * - a database password on the command line draws a warning that does not repeat it;
 * - repeated Authorization or Idempotency-Key headers are refused;
 * - HEAD /login does not use up the one-time token.
 *
 * The page and session cases run on SQLite and, when there is one, PostgreSQL, each with two
 * server instances on one store.
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import type { StoreTarget } from '../../src/store/open.js';
import { cleanupHomes, http, ledgerPath, requireBuilt, runCli, STACK_FRAME, tempHome } from '../support/children.js';
import { hasChromium, launchIn, withChromium } from '../support/chromium.js';
import { serve } from '../support/cli.js';
import { freshSchema, postgresAvailable, type TestSchema } from '../support/database.js';
import { limit } from '../support/load.js';
import { rawExchange } from '../support/raw-http.js';
import { openSandbox } from '../support/world.js';

beforeAll(requireBuilt);
afterAll(cleanupHomes);

/** Two servers on one store, their access logs, and what to remove afterwards. */
interface Pair {
  a: RunningServer;
  b: RunningServer;
  home: string;
  target: StoreTarget;
  env: Record<string, string>;
  log: string[];
  close(): Promise<void>;
}

async function pair(store: 'sqlite' | 'postgres'): Promise<Pair> {
  const home = tempHome('carbon-sec-');
  const dataDir = join(home, 'data');
  let schema: TestSchema | undefined;
  let target: StoreTarget = { kind: 'sqlite', dir: dataDir };
  if (store === 'postgres') {
    schema = freshSchema('sec');
    target = { kind: 'postgres', url: schema.url };
  }
  const log: string[] = [];
  const start = () => startServer({ host: '127.0.0.1', port: 0, dataDir, store: target, log: (l) => log.push(l) });
  const a = await start();
  const b = await start();
  return {
    a,
    b,
    home,
    target,
    log,
    env: schema === undefined ? {} : { CARBON_DATABASE_URL: schema.url },
    async close() {
      await Promise.all([a.close(), b.close()]);
      await schema?.drop();
    },
  };
}

const STORES = postgresAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/** Signs in through `server` with a fresh login link; the cookie as a Cookie header sends it. */
async function signIn(server: RunningServer): Promise<string> {
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const res = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  expect(res.status).toBe(303);
  return /carbon_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
}

async function getPage(server: RunningServer, cookie: string, path = '/', method = 'GET') {
  const res = await fetch(`${server.origin}${path}`, { method, redirect: 'manual', headers: { accept: 'text/html', cookie } });
  return { status: res.status, location: res.headers.get('location'), setCookie: res.headers.get('set-cookie'), text: await res.text() };
}

/** Posts a page form as the browser would: this origin, the session's CSRF token (read from its page, or given). */
async function postForm(server: RunningServer, cookie: string, path: string, fields: Record<string, string> = {}, csrf?: string) {
  const token = csrf ?? csrfOf((await getPage(server, cookie)).text);
  const res = await fetch(`${server.origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin, cookie },
    body: new URLSearchParams({ csrf: token, back: 'test', ...fields }).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), setCookie: res.headers.get('set-cookie'), text: await res.text() };
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const newSecretOf = (html: string) => /id="new-secret"[^>]*value="([^"]+)"/.exec(html)?.[1];

describe.each(STORES)('page sessions and one-time links (%s, two instances on one store)', (store) => {
  let p: Pair;
  beforeAll(async () => {
    p = await pair(store);
  }, limit(30_000));
  afterAll(async () => p?.close());

  test('signing out ends the session on every instance: a cookie copied before opens and changes nothing after', async () => {
    const cookie = await signIn(p.a);
    const copy = cookie;
    expect((await getPage(p.b, copy)).status).toBe(200);
    const csrf = csrfOf((await getPage(p.a, cookie)).text);

    const out = await postForm(p.a, cookie, '/logout', {}, csrf);
    expect(out.status).toBe(303);
    expect(out.setCookie).toContain('Max-Age=0');

    expect((await getPage(p.a, copy)).status).toBe(401);
    expect((await getPage(p.b, copy)).status).toBe(401);
    const before = (await p.a.sandbox.status()).balances.test;
    expect((await postForm(p.b, copy, '/actions/topup', { mode: 'test', amount: '1000' }, csrf)).status).toBe(401);
    expect((await postForm(p.a, copy, '/actions/reset', {}, csrf)).status).toBe(401);
    expect((await p.a.sandbox.status()).balances.test).toBe(before);
  });

  test('`carbon sandbox reset` ends every session on every instance', async () => {
    const one = await signIn(p.a);
    const two = await signIn(p.b);
    expect((await getPage(p.b, one)).status).toBe(200);
    const r = await runCli(p.home, ['sandbox', 'reset', '--yes'], { env: p.env });
    expect([r.code, r.stderr]).toEqual([0, expect.not.stringMatching(/error/)]);
    for (const cookie of [one, two]) {
      expect((await getPage(p.a, cookie)).status).toBe(401);
      expect((await getPage(p.b, cookie)).status).toBe(401);
    }
    // Signing in again works as before.
    expect((await getPage(p.b, await signIn(p.a))).status).toBe(200);
  });

  test('a login link made before `carbon sandbox reset` and not used signs in nowhere after it (a reset from the page too); one made after does', async () => {
    const printed = await runCli(p.home, ['sandbox', 'login', '--print'], { env: p.env });
    expect(printed.code).toBe(0);
    const token = new URL(printed.stdout.trim()).searchParams.get('token')!;
    const viaPage = await p.a.sandbox.pages.newLoginToken(Date.now());
    const link = (s: RunningServer, t: string) => `${s.origin}/login?token=${t}`;
    expect((await fetch(link(p.b, token), { method: 'HEAD', redirect: 'manual' })).status).toBe(303);
    const r = await runCli(p.home, ['sandbox', 'reset', '--yes'], { env: p.env });
    expect([r.code, r.stdout + r.stderr]).toEqual([0, expect.not.stringContaining(token)]);
    for (const s of [p.a, p.b]) {
      expect((await fetch(link(s, token), { method: 'HEAD', redirect: 'manual' })).status).toBe(401);
      const res = await fetch(link(s, token), { redirect: 'manual' });
      const text = await res.text();
      expect([res.status, res.headers.get('set-cookie')]).toEqual([401, null]);
      expect(text).toContain('the sandbox was reset since');
      expect(text).not.toContain(token);
    }
    // A reset from the page ends the links made before it too.
    const fresh = await runCli(p.home, ['sandbox', 'login', '--print'], { env: p.env });
    const after = new URL(fresh.stdout.trim()).searchParams.get('token')!;
    expect((await postForm(p.b, await signIn(p.b), '/actions/reset')).status).toBe(303);
    expect((await fetch(link(p.a, after), { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(link(p.a, viaPage), { redirect: 'manual' })).status).toBe(401);
    // A link made after the reset signs in on either instance.
    const cookie = await signIn(p.a);
    expect((await getPage(p.b, cookie)).status).toBe(200);
  });

  test('a reset from the page ends every other session and the old cookie; the owner who reset is signed in anew', async () => {
    const owner = await signIn(p.a);
    const other = await signIn(p.b);
    const res = await postForm(p.a, owner, '/actions/reset');
    expect(res.status).toBe(303);
    const fresh = /carbon_session=[^;]+/.exec(res.setCookie ?? '')![0];
    expect(fresh).not.toBe(owner);
    const after = await getPage(p.b, fresh, res.location!);
    expect(after.status).toBe(200);
    expect(after.text).toContain('starts over');
    for (const cookie of [owner, other]) {
      expect((await getPage(p.a, cookie)).status).toBe(401);
      expect((await getPage(p.b, cookie)).status).toBe(401);
    }
  });

  test('HEAD /login looks at the one-time token without using it up', async () => {
    const token = await p.a.sandbox.pages.newLoginToken(Date.now());
    const link = (s: RunningServer) => `${s.origin}/login?token=${token}`;
    for (const s of [p.a, p.b]) {
      const head = await fetch(link(s), { method: 'HEAD', redirect: 'manual' });
      expect(head.status).toBe(303);
      expect(head.headers.get('set-cookie')).toBeNull();
    }
    const first = await fetch(link(p.b), { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/^carbon_session=/);
    expect((await fetch(link(p.a), { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(link(p.a), { method: 'HEAD', redirect: 'manual' })).status).toBe(401);
  });

  test('"Create key" answers with a redirect; the page after it shows the secret once, on any instance; a reload makes no other key', async () => {
    const cookie = await signIn(p.a);
    const before = (await p.a.sandbox.keys()).length;
    const made = await postForm(p.a, cookie, '/actions/key-create', { mode: 'live', permission: 'purchase' });
    expect(made.status).toBe(303);
    expect(made.location).toBe('/?mode=test#notice');
    expect((await p.a.sandbox.keys()).length).toBe(before + 1);

    // A HEAD changes nothing: the secret still waits for the page.
    expect((await getPage(p.b, cookie, made.location!, 'HEAD')).status).toBe(200);
    const shown = await getPage(p.b, cookie, made.location!);
    const secret = newSecretOf(shown.text);
    expect(secret).toMatch(/^ck_live_[A-Za-z0-9]{32}$/);
    const created = (await p.a.sandbox.keys()).at(-1)!;
    expect(await p.a.sandbox.secret(created.id)).toBe(secret);
    expect(shown.text).toContain(`Created live key ${created.id}.`);

    // The reload: the same GET again. No secret, no new key.
    const reload = await getPage(p.a, cookie, made.location!);
    expect(reload.status).toBe(200);
    expect(reload.text).not.toContain(secret!);
    expect(newSecretOf(reload.text)).toBeUndefined();
    expect((await p.a.sandbox.keys()).length).toBe(before + 1);

    // Another session never sees it.
    const again = await postForm(p.a, cookie, '/actions/key-create', { mode: 'test', permission: 'read_only' });
    const other = await signIn(p.b);
    expect(newSecretOf((await getPage(p.b, other, again.location!)).text)).toBeUndefined();
  });

  test('a form whose csrf or back field is sent twice is refused (400) and changes nothing, whichever value comes first', async () => {
    const cookie = await signIn(p.a);
    const csrf = csrfOf((await getPage(p.a, cookie)).text);
    const balance = async () => (await p.a.sandbox.status()).balances.test;
    const before = await balance();
    for (const body of [
      `csrf=${csrf}&csrf=x&back=test&mode=test&amount=250`,
      `csrf=x&csrf=${csrf}&back=test&mode=test&amount=250`,
      `csrf=${csrf}&back=test&back=live&mode=test&amount=250`,
    ]) {
      const res = await fetch(`${p.a.origin}/actions/topup`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: p.a.origin, cookie },
        body,
      });
      const field = body.includes('back=live') ? 'back' : 'csrf';
      expect([body, res.status, (await res.text()).includes(`The form sent ${field} more than once. Nothing changed.`)]).toEqual([
        body,
        400,
        true,
      ]);
    }
    expect(await balance()).toBe(before);
    // Sent once, the same form tops up.
    expect((await postForm(p.a, cookie, '/actions/topup', { mode: 'test', amount: '250' }, csrf)).status).toBe(303);
    expect(await balance()).toBe(before + 25_000);
  });

  test("another site's form, sent without the session's cookie (SameSite=Strict keeps it), is said to be cross-site, not a session that ended", async () => {
    const balance = async () => (await p.a.sandbox.status()).balances.test;
    const before = await balance();
    const post = (headers: Record<string, string>) =>
      fetch(`${p.a.origin}/actions/topup`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: 'csrf=x&back=test&mode=test&amount=250',
      }).then(async (res) => [res.status, await res.text()] as const);
    const [status, text] = await post({ origin: 'http://evil.example' });
    // Before: 401 "You are signed out: the session of that page ended", to a user still signed in.
    expect([status, text.includes('That form did not come from this page (a cross-site request?). Nothing changed.')]).toEqual([403, true]);
    // From this page's own origin, or naming none, without a session: the session ended.
    for (const headers of [{ origin: p.a.origin }, {}] as Record<string, string>[]) {
      const [own, said] = await post(headers);
      expect([own, said.includes('You are signed out: the session of that page ended. Nothing changed.')]).toEqual([401, true]);
    }
    expect(await balance()).toBe(before);
  });

  test("a signed-in owner's form from another address than the page's says so, naming the page's address, with the page's header (sign out works)", async () => {
    const before = (await p.a.sandbox.status()).balances.test;
    const cookie = await signIn(p.a);
    const res = await fetch(`${p.a.origin}/actions/topup`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://127.0.0.2:1', cookie },
      body: 'csrf=x&back=test&mode=test&amount=250',
    });
    const text = await res.text();
    // Before: the signed-out sign-in page, with no way back and no word of the address.
    expect([res.status, text.includes(`That form came from another address than this page&#39;s, ${p.a.origin}`)]).toEqual([403, true]);
    expect(text).toContain('action="/logout"');
    expect((await p.a.sandbox.status()).balances.test).toBe(before);
  });

  test('?done= names only its own notices: constructor, __proto__, toString and hasOwnProperty are unknown, not a 500', async () => {
    const cookie = await signIn(p.a);
    for (const done of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await getPage(p.a, cookie, `/?done=${done}`);
      expect([done, res.status]).toEqual([done, 200]);
      expect(res.text).not.toContain('class="notice');
    }
    expect((await getPage(p.a, cookie, '/?done=topup')).text).toContain('Topped up.');
  });
});

/** The page behind a TLS proxy: `carbon serve --public-url https://sandbox.example.test`, on `home`'s ledger. */
const serveBehindTls = (home: string) =>
  startServer({ host: '127.0.0.1', port: 0, dataDir: join(home, 'data'), publicUrl: 'https://sandbox.example.test' });

describe('the session cookie', () => {
  test('HttpOnly and SameSite=Strict always; Secure when the page is reached over HTTPS (--public-url https://…)', async () => {
    const home = tempHome('carbon-sec-');
    const plain = await startServer({ host: '127.0.0.1', port: 0, dataDir: join(home, 'data') });
    const behindTls = await serveBehindTls(home);
    try {
      const cookieOf = async (s: RunningServer) =>
        (await fetch(`${s.origin}/login?token=${await s.sandbox.pages.newLoginToken(Date.now())}`, { redirect: 'manual' })).headers.get(
          'set-cookie',
        ) ?? '';
      const clear = await cookieOf(plain);
      expect(clear).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
      expect(await cookieOf(behindTls)).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    } finally {
      await Promise.all([plain.close(), behindTls.close()]);
    }
  });

  test('a form behind TLS (--public-url https://…) is taken from its https origin only, not from http:// of the same name', async () => {
    const home = tempHome('carbon-sec-');
    const server = await serveBehindTls(home);
    try {
      const cookie = await signIn(server);
      const csrf = csrfOf((await getPage(server, cookie)).text);
      const post = (origin: string) =>
        new Promise<number>((resolve, reject) => {
          const body = `csrf=${csrf}&back=test&mode=test&amount=250`;
          const req = request(
            {
              host: '127.0.0.1',
              port: server.port,
              method: 'POST',
              path: '/actions/topup',
              headers: {
                host: 'sandbox.example.test',
                origin,
                cookie,
                'content-type': 'application/x-www-form-urlencoded',
                'content-length': body.length,
              },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      const before = (await server.sandbox.status()).balances.test;
      expect(await post('http://sandbox.example.test')).toBe(403);
      expect((await server.sandbox.status()).balances.test).toBe(before);
      expect(await post('https://sandbox.example.test')).toBe(303);
      expect((await server.sandbox.status()).balances.test).toBe(before + 25_000);
    } finally {
      await server.close();
    }
  });
});

describe('key creation in Chromium: a reload leaves one new key', () => {
  const run = withChromium(test, 'Key creation browser test');
  let p: Pair;
  let browser: Browser;
  let home: string;
  beforeAll(async () => {
    p = await pair('sqlite');
    if (!hasChromium) return;
    home = mkdtempSync(join(tmpdir(), 'carbon-sec-chromium-'));
    browser = await launchIn(home);
  }, limit(60_000));
  afterAll(async () => {
    await browser?.close();
    await p?.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  run('create, then reload twice: one key more, its secret shown once and never in the address', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(p.a.developerPageUrl);
    const before = (await p.a.sandbox.keys()).length;
    await page.selectOption('#key-mode', 'test');
    await page.selectOption('#key-access', 'purchase');
    await Promise.all([page.waitForURL(`${p.a.origin}/?mode=test#notice`), page.click('form[action="/actions/key-create"] button')]);
    const secret = await page.inputValue('#new-secret');
    expect(secret).toMatch(/^ck_test_[A-Za-z0-9]{32}$/);
    expect(page.url()).not.toContain(secret);
    for (let i = 0; i < 2; i++) {
      const res = await page.reload();
      expect(res!.status()).toBe(200);
      expect(await page.content()).not.toContain(secret);
    }
    expect(await page.locator('#new-secret').count()).toBe(0);
    expect((await p.a.sandbox.keys()).length).toBe(before + 1);
  });
});

describe('no full API key in an answer or the access log', () => {
  let p: Pair;
  beforeAll(async () => {
    p = await pair('sqlite');
  });
  afterAll(async () => p?.close());

  // Shaped like a key of this service (not one of the ledger's): what a pasting mistake sends.
  const KEY = `ck_test_${'Zq9'.repeat(10)}Ab`;
  const SECRET_PART = KEY.slice('ck_test_'.length);
  const MASKED = `ck_test_…${KEY.slice(-4)}`;

  /** The access log's line for a request, once its response is over. */
  async function logLine(requestId: string): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const line = p.log.find((l) => l.includes(requestId));
      if (line !== undefined) return line;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`no access log line for ${requestId}`);
  }

  const cases: Array<[string, string, string, number, string]> = [
    ['a key in an unknown path (404 route_missing)', 'GET', `/api/v1/x/${KEY}`, 404, 'route_missing'],
    ["a key as a query parameter's name (422, param)", 'GET', `/api/v1/offsets?${KEY}=1`, 422, 'validation_error'],
    ['a percent-encoded key in the path', 'GET', `/api/v1/x/ck%5ftest%5f${SECRET_PART}`, 404, 'route_missing'],
    ['a doubly percent-encoded key in the path', 'GET', `/api/v1/offsets/ck%255Ftest%255F${SECRET_PART}`, 404, 'resource_missing'],
  ];
  test.each(cases)('%s: masked in the message, the param and the log', async (_, method, path, status, code) => {
    const key = await p.a.sandbox.defaultKey('test');
    const res = await http(`${p.a.origin}${path}`, { method, key: key! });
    expect(res.status).toBe(status);
    const error = (res.json as { error: { code: string; message: string; param?: string } }).error;
    expect(error.code).toBe(code);
    expect(res.text).not.toContain(SECRET_PART);
    expect(`${error.message} ${error.param ?? ''}`).toContain(MASKED);
    const line = await logLine(res.headers['request-id']!);
    expect(line).not.toContain(SECRET_PART);
    expect(line).not.toMatch(/%5f/i);
  });

  // Issue 34, item 9: every spelling of a key the service would accept, and its bare secret part.
  const spellings: Array<[string, string, number, string]> = [
    ['ck_%00test_ in an unknown path', `/api/v1/x/ck_%00test_${SECRET_PART}`, 404, 'route_missing'],
    ['ck-test- as an offset id', `/api/v1/offsets/ck-test-${SECRET_PART}`, 404, 'resource_missing'],
    ['CK_TEST_ as an offset id', `/api/v1/offsets/CK_TEST_${SECRET_PART}`, 404, 'resource_missing'],
    ['the bare secret as an offset id', `/api/v1/offsets/${SECRET_PART}`, 404, 'resource_missing'],
    ["the bare secret as a query parameter's name", `/api/v1/offsets?${SECRET_PART}=1`, 422, 'validation_error'],
    ['the bare secret as ?reference=', `/api/v1/offsets?reference=${SECRET_PART}`, 200, ''],
    ['ck-test- as ?starting_after=', `/api/v1/offsets?starting_after=ck-test-${SECRET_PART}`, 0, ''],
  ];
  test.each(spellings)('%s: the secret is in neither the answer nor the log', async (_, path, status, code) => {
    const key = await p.a.sandbox.defaultKey('test');
    const res = await http(`${p.a.origin}${path}`, { key: key! });
    if (status !== 0) expect(res.status).toBe(status);
    if (code !== '') expect((res.json as { error: { code: string } }).error.code).toBe(code);
    expect(res.text).not.toContain(SECRET_PART.slice(0, 28));
    if (res.status >= 400) expect(res.text).toContain(`…${KEY.slice(-4)}`);
    const line = await logLine(res.headers['request-id']!);
    expect(line).not.toContain(SECRET_PART.slice(0, 28));
    // The log shows the path without its query string; a path's key is shown masked.
    if (!path.includes('?')) expect(line).toContain(`...${KEY.slice(-4)}`);
  });

  test("a key as a body field's name: masked in param and message", async () => {
    const key = await p.a.sandbox.defaultKey('test');
    const res = await http(`${p.a.url}/offsets`, { method: 'POST', key: key!, idem: 'sec-body', body: JSON.stringify({ [KEY]: 1 }) });
    expect(res.status).toBe(422);
    expect(res.text).not.toContain(SECRET_PART);
    expect((res.json as { error: { param: string } }).error.param).toBe(MASKED);
  });

  test('an offset page on the developer page named by a key does not echo it', async () => {
    const cookie = await signIn(p.a);
    const res = await getPage(p.a, cookie, `/offsets/ck%5Ftest%5F${SECRET_PART}`);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(SECRET_PART);
  });
});

describe('repeated Authorization or Idempotency-Key headers are refused', () => {
  let p: Pair;
  beforeAll(async () => {
    p = await pair('sqlite');
  });
  afterAll(async () => p?.close());

  /** node:http sends an array value as one header line per element. */
  function send(
    headers: Record<string, string | string[]>,
    body?: string,
  ): Promise<{ status: number; json: { error?: { code: string; message: string } } }> {
    return new Promise((resolve, reject) => {
      const req = request(
        `${p.a.url}/offsets`,
        { method: body === undefined ? 'GET' : 'POST', headers: { 'content-type': 'application/json', ...headers } },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (text += d))
            .on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  test('two Authorization headers: 400 in the envelope, whichever comes first', async () => {
    const purchase = (await p.a.sandbox.defaultKey('test'))!;
    const readOnly = (await p.a.sandbox.defaultKey('read_only'))!;
    for (const pairOf of [
      [purchase, readOnly],
      [readOnly, purchase],
      [purchase, purchase],
    ]) {
      const res = await send({ authorization: pairOf.map((k) => `Bearer ${k}`) });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: 'malformed_request', message: expect.stringContaining('Authorization') });
    }
    expect((await send({ authorization: `Bearer ${purchase}` })).status).toBe(200);
    // Written in any case, on the wire byte for byte.
    const port = Number(new URL(p.a.url).port);
    const raw = await rawExchange(
      port,
      `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAUTHORIZATION: Bearer ${readOnly}\r\nauthorization: Bearer ${purchase}\r\nConnection: close\r\n\r\n`,
    );
    expect(raw.status).toBe(400);
    expect(JSON.parse(raw.body)).toMatchObject({ error: { code: 'malformed_request' } });
  });

  test('two Idempotency-Key headers: 400, and nothing is bought', async () => {
    const key = (await p.a.sandbox.defaultKey('test'))!;
    const before = await p.a.sandbox.status();
    const res = await send({ authorization: `Bearer ${key}`, 'idempotency-key': ['dupA', 'dupB'] }, '{"kg":5}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'malformed_request', message: expect.stringContaining('Idempotency-Key') });
    expect((await p.a.sandbox.status()).balances).toEqual(before.balances);
    expect((await send({ authorization: `Bearer ${key}`, 'idempotency-key': 'dupA, dupB' }, '{"kg":5}')).status).toBe(201);
  });
});

describe('files and the command line', () => {
  test('sandbox-keys.json left 0644 (a restore) is tightened back to 0600 when the ledger is opened', async () => {
    const dir = join(tempHome('carbon-sec-'), 'data');
    await (await openSandbox(dir)).close();
    const file = join(dir, 'sandbox-keys.json');
    chmodSync(file, 0o644);
    await (await openSandbox(dir)).close();
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
  });

  test('a ledger deleted under a running server: a command on that home says so in one line, and what to do', async () => {
    const home = tempHome('carbon-sec-');
    const server = await serve(home);
    try {
      const key = JSON.parse((await runCli(home, ['sandbox', 'keys', '--reveal', '--json'])).stdout) as Array<{
        default: string | null;
        secret: string;
      }>;
      const secret = key.find((k) => k.default === 'test')!.secret;
      for (let i = 0; i < 3; i++)
        expect((await http(`${server.url}/offsets`, { key: secret, idem: `del-${i}`, body: '{"kg":5}' })).status).toBe(201);
      rmSync(ledgerPath(home));
      for (const args of [['balance'], ['list'], ['buy', '--kg', '1'], ['list', '--json']]) {
        const r = await runCli(home, args);
        expect(r.code).toBe(1);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/was deleted or replaced while another process \(such as carbon serve\) still had it open/);
        // The text says what to do; --json gives the envelope (code storage_error).
        expect(lines[0]).toMatch(args.includes('--json') ? /"code":"storage_error"/ : /Stop that process, then run the command again/);
        expect(r.stderr).not.toMatch(/SQLITE_IOERR|disk I\/O error/);
        expect(r.stderr).not.toMatch(STACK_FRAME);
      }
    } finally {
      await server.stop();
    }
    // Once the server is gone, the command works again (on a new ledger).
    expect((await runCli(home, ['balance'])).code).toBe(0);
  });

  test('--database with a password warns that ps shows it, and the warning masks the password', async () => {
    const home = tempHome('carbon-sec-');
    const PASSWORD = 'Sup3rSecretPw';
    const typed = await runCli(home, ['balance', '--database', `postgres://carbon:${PASSWORD}@127.0.0.1:1/carbon`]);
    expect(typed.stderr).toMatch(
      /warning: the database password in --database postgres:\/\/carbon:\*\*\*@127\.0\.0\.1:1\/carbon can be read by other users \(ps\)/,
    );
    expect(typed.stderr).toMatch(/CARBON_DATABASE_URL/);
    expect(typed.stderr).toMatch(/PGPASSFILE/);
    expect(`${typed.stdout}${typed.stderr}`).not.toContain(PASSWORD);
    // A password in a query parameter is one too.
    const param = await runCli(home, ['balance', '--database', `postgres://carbon@127.0.0.1:1/carbon?password=${PASSWORD}`]);
    expect(param.stderr).toMatch(/warning: the database password/);
    expect(`${param.stdout}${param.stderr}`).not.toContain(PASSWORD);
    // No password typed: no warning; the environment variable: no warning.
    const bare = await runCli(home, ['balance', '--database', 'postgres://carbon@127.0.0.1:1/carbon']);
    const env = await runCli(home, ['balance'], { env: { CARBON_DATABASE_URL: `postgres://carbon:${PASSWORD}@127.0.0.1:1/carbon` } });
    for (const r of [bare, env]) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).not.toMatch(/warning/);
      expect(r.stderr).not.toContain(PASSWORD);
    }
  });
});
