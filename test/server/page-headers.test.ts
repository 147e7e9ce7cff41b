import { beforeAll, describe, expect, test } from 'vitest';
import { serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * The developer page's header, page by page as served to a signed-in browser: the same links
 * everywhere (the way back to the developer page, Requests) and the sign-out button, whichever
 * page it is (the dashboard, an offset, a request, a page that is not there, a refused method).
 */

const served = serveInProcess('carbon-page-headers-');
let cookie: string;
let offset: string;
let request: string;

beforeAll(async () => {
  const { server } = served;
  const key = (await server.sandbox.defaultKey('test'))!;
  const made = await fetch(`${server.url}/offsets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'headers-1' },
    body: '{"kg": 5}',
  });
  expect(made.status).toBe(201);
  offset = ((await made.json()) as { id: string }).id;
  request = made.headers.get('request-id')!;
  await server.sandbox.journal.flush();
  cookie = await sessionCookie(server);
});

const headerOf = (html: string) => /<header>[\s\S]*?<\/header>/.exec(html)?.[0] ?? '';

describe("the developer page's header, signed in", () => {
  test('every page has the Requests link and Sign out in its header; every page but the dashboard the way back to it', async () => {
    const pages: Array<[string, string, number]> = [
      ['GET', '/', 200],
      ['GET', `/offsets/${offset}`, 200],
      ['GET', '/offsets/off_nothing', 404],
      ['GET', '/requests', 200],
      ['GET', `/requests/${request}`, 200],
      ['GET', '/requests/req_nothing', 404],
      ['GET', '/nowhere', 404],
      ['PUT', `/offsets/${offset}`, 405],
    ];
    for (const [method, path, status] of pages) {
      const res = await fetch(`${served.server.origin}${path}`, { method, redirect: 'manual', headers: { accept: 'text/html', cookie } });
      expect(res.status, path).toBe(status);
      const header = headerOf(await res.text());
      expect(header, `${method} ${path}`).toContain('<a href="/requests">Requests</a>');
      expect(header, `${method} ${path}`).toContain('<form method="post" action="/logout">');
      if (path !== '/')
        expect(header, `${method} ${path}`).toMatch(/<nav aria-label="Pages"><a href="\/(\?mode=test)?">← Developer page<\/a>/);
    }
  });

  test("an offset's header leads back to its own mode's view", async () => {
    const res = await fetch(`${served.server.origin}/offsets/${offset}`, { headers: { accept: 'text/html', cookie } });
    expect(headerOf(await res.text())).toContain('<a href="/?mode=test">← Developer page</a>');
  });
});

describe('signing out', () => {
  test('the page after says the owner signed out and how to sign in again, with the sandbox band', async () => {
    const { server } = served;
    const token = await server.sandbox.pages.newLoginToken(Date.now());
    const login = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
    const own = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
    const page = await (await fetch(`${server.origin}/`, { headers: { accept: 'text/html', cookie: own } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const out = await fetch(`${server.origin}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { accept: 'text/html', cookie: own, origin: server.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/carbon_session=;/);
    const after = await fetch(new URL(out.headers.get('location')!, server.origin), { headers: { accept: 'text/html' } });
    const body = await after.text();
    expect(body).toContain('<p class="sandbox-band" role="note">');
    expect(body).toContain('<title>carbon sandbox: signed out</title>');
    expect(body).toContain('You signed out.');
    expect(body).toMatch(/<code>carbon sandbox login<\/code> prints a new/);
    expect(body).not.toContain('belongs to the account owner');
    expect(body).not.toContain('Test balance');
    // The cookie as it was before opens nothing, and the page without a session still says whose it is.
    const again = await (await fetch(`${server.origin}/`, { headers: { accept: 'text/html', cookie: own } })).text();
    expect(again).toContain('belongs to the account owner');
  });
});
