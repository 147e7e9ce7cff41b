import { describe, expect, test } from 'vitest';
import { refusedPage, unavailablePage } from '../../src/server/pages/unavailable.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * Everything the sandbox issues says it is a sandbox, down to a browser tab's title: every page
 * of the developer page, as served, has a <title> that starts "carbon sandbox" (the certificate's
 * says SANDBOX: test/pages/sandbox-papers.test.ts).
 */

const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];

describe("the developer page's titles", () => {
  const served = serveInProcess('carbon-titles-');

  test('each page, signed in or not, found or not, is titled “carbon sandbox…”', async () => {
    const { server } = served;
    const key = (await server.sandbox.defaultKey('test'))!;
    const made = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'titles-1' },
      body: '{"kg": 5}',
    });
    expect(made.status).toBe(201);
    const offset = ((await made.json()) as { id: string }).id;
    const requestId = made.headers.get('request-id')!;

    const get = async (path: string, cookie = '') => {
      const res = await fetch(`${server.origin}${path}`, { redirect: 'manual', headers: { accept: 'text/html', cookie } });
      return { status: res.status, title: titleOf(await res.text()) };
    };
    const signedOut = await get('/');
    expect(signedOut.status).toBe(401);
    const login = await fetch(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`, {
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];

    const titles: Record<string, string | undefined> = { 'signed out': signedOut.title };
    for (const [path, status] of [
      ['/', 200],
      ['/?mode=live', 200],
      [`/offsets/${offset}`, 200],
      ['/offsets/off_nothing', 404],
      ['/requests', 200],
      [`/requests/${requestId}`, 200],
      ['/requests/req_nothing', 404],
      ['/nowhere', 404],
    ] as const) {
      const page = await get(path, cookie);
      expect(page.status, path).toBe(status);
      titles[path] = page.title;
    }
    titles.unavailable = titleOf(unavailablePage('The service cannot reach its ledger right now.', 'req_x'));
    titles.refused = titleOf(refusedPage('The request body is larger than 65536 bytes.', 'req_x', true));

    const unmarked = Object.entries(titles).filter(([, title]) => !title?.startsWith('carbon sandbox'));
    expect(unmarked, JSON.stringify(titles)).toEqual([]);
    // The page's own words follow: an offset's and a request's titles name them.
    expect(titles[`/offsets/${offset}`]).toBe(`carbon sandbox: offset ${offset}`);
    expect(titles[`/requests/${requestId}`]).toBe(`carbon sandbox: request ${requestId}`);
  });
});
