import { beforeAll, describe, expect, test } from 'vitest';
import { serveInProcess } from '../support/in-process-server.js';

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
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const res = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  cookie = /carbon_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
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
