import { beforeAll, describe, expect, test } from 'vitest';
import { serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * The developer page's GET-only paths asked with another method (a script's POST, a curl -X PUT):
 * 405 with `Allow: GET`, as the API's own GET-only paths answer, but in the page's form (HTML,
 * with the sandbox band and the page's headers), not the API's JSON 404 for a path it does not know.
 */

const served = serveInProcess('carbon-page-methods-');
let cookie: string;
let key: string;

beforeAll(async () => {
  const server = served.server;
  key = (await server.sandbox.defaultKey('test'))!;
  cookie = await sessionCookie(server);
});

const METHODS = ['POST', 'PUT', 'DELETE', 'PATCH'];
/** Each GET-only path of the page: the Requests view, one request, the dashboard (for a browser), one offset. */
const PATHS = ['/requests', '/requests/req_abc', '/', '/offsets/off_abc'];

async function ask(method: string, path: string, signedIn: boolean) {
  const res = await fetch(`${served.server.origin}${path}`, {
    method,
    redirect: 'manual',
    headers: { accept: 'text/html', ...(signedIn ? { cookie } : {}) },
  });
  return { res, body: await res.text() };
}

/** Asks as `ask` does, and holds what every page 405 says: the status, Allow, and HTML. */
async function refused(method: string, path: string, signedIn: boolean, allow: 'GET' | 'POST') {
  const asked = await ask(method, path, signedIn);
  const { res } = asked;
  expect([signedIn, res.status, res.headers.get('allow'), res.headers.get('content-type')]).toEqual([
    signedIn,
    405,
    allow === 'GET' ? 'GET, HEAD' : allow,
    'text/html; charset=utf-8',
  ]);
  return asked;
}

describe("the developer page's GET-only paths: a method they do not have", () => {
  test.each(METHODS.flatMap((method) => PATHS.map((path) => [method, path])))(
    '%s %s is 405 with Allow: GET, in HTML, signed in or not',
    async (method, path) => {
      // The API's answer for the same mistake, whose Allow and words the page's follows (POST /balance: GET only).
      const api = (await (await fetch(`${served.server.url}/balance`, { method: 'POST' })).json()) as { error: { message: string } };
      expect(api.error.message).toBe(`POST is not allowed on /api/v1/balance; use GET.`);
      for (const signedIn of [true, false]) {
        const { res, body } = await refused(method, path, signedIn, 'GET');
        expect(res.headers.get('request-id')).toMatch(/^req_/);
        expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(body).toContain(`${method} is not allowed on ${path}; use GET.`);
        expect(body).toContain('<p class="sandbox-band" role="note">');
        expect(body).toMatch(/<title>carbon sandbox[^<]*<\/title>/);
        // Signed in, the page's own header (the way back, sign out), not the sign-in page; signed out, how to sign in.
        if (signedIn) {
          expect(body).toContain('<a href="/">← Developer page</a>');
          expect(body).not.toContain('carbon sandbox login');
        } else {
          expect(body).toContain('carbon sandbox login');
          expect(body).not.toContain('action="/logout"');
        }
      }
    },
  );

  test('a key in the path is not said in full', async () => {
    const { res, body } = await ask('DELETE', `/requests/${key}`, true);
    expect(res.status).toBe(405);
    expect(body).not.toContain(key);
    expect(body).toContain(`…${key.slice(-4)}`);
  });

  test('GET and HEAD are still answered', async () => {
    for (const path of ['/requests', '/', '/requests/req_abc', '/offsets/off_abc']) {
      for (const method of ['GET', 'HEAD']) {
        const { res } = await ask(method, path, true);
        expect([method, path, res.status]).toEqual([method, path, path.endsWith('_abc') ? 404 : 200]);
      }
    }
  });

  // A form's paths take POST (a GET, a link opened, is the page's 404: there is no page there).
  test.each(['PUT', 'DELETE', 'PATCH'].flatMap((method) => ['/logout', '/actions/topup'].map((path) => [method, path])))(
    '%s %s is 405 with Allow: POST, in HTML, signed in or not',
    async (method, path) => {
      for (const signedIn of [true, false]) {
        const { body } = await refused(method, path, signedIn, 'POST');
        expect(body).toContain(`${method} is not allowed on ${path}; use POST.`);
        expect(body).toContain(signedIn ? '<a href="/">← Developer page</a>' : 'carbon sandbox login');
      }
      const get = await ask('GET', path, true);
      expect([get.res.status, get.res.headers.get('allow')]).toEqual([404, null]);
    },
  );

  test('a form still posts to its action and to /logout (not GET-only paths)', async () => {
    const { res } = await ask('POST', '/logout', false);
    expect(res.status).toBe(401);
    const action = await fetch(`${served.server.origin}/actions/rate`, { method: 'POST', redirect: 'manual', headers: { cookie } });
    expect(action.status).toBe(403); // no CSRF token: refused as a form, not as a method
  });
});

describe("the server's other GET-only paths: a method they do not have", () => {
  // The certificate, the health check, the JSON index and the page's files: 405 in the API's envelope
  // with Allow: GET, where they answered the API's 404 (or, the page's files, 200 to any method).
  test.each(
    METHODS.flatMap((method) =>
      ['/certificates/cert_abc', '/healthz', '/readyz', '/livez', '/', '/favicon.ico', '/_page/app.css', '/_page/app.js'].map((path) => [
        method,
        path,
      ]),
    ),
  )("%s %s is the API's 405 with Allow: GET", async (method, path) => {
    const res = await fetch(`${served.server.origin}${path}`, { method, headers: { accept: 'application/json' } });
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect([res.status, res.headers.get('allow'), res.headers.get('content-type')]).toEqual([405, 'GET, HEAD', 'application/json']);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
    expect(body.error.message).toBe(`${method} is not allowed on ${path}; use GET.`);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
  });

  test.each(['/healthz', '/readyz', '/livez', '/', '/favicon.ico', '/_page/app.css', '/_page/app.js'])(
    'GET and HEAD %s still answer 200',
    async (path) => {
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(`${served.server.origin}${path}`, { method, headers: { accept: 'application/json' } });
        await res.arrayBuffer();
        expect([method, res.status]).toEqual([method, 200]);
      }
    },
  );
});
