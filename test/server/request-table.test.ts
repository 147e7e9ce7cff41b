import { describe, expect, it } from 'vitest';
import { wantsPage } from '../../src/server/reply.js';
import { answersPage, type Incoming, match, REQUESTS } from '../../src/server/requests.js';
import { routeList } from '../../src/service/routes.js';

/** The request table: every URL the server answers is one entry, matched in the table's order. */

const request = (method: string, path: string, accept?: string): Incoming => {
  const headers = accept === undefined ? {} : { accept };
  return { method, upper: method, path, query: {}, headers, body: '', params: [] } as unknown as Incoming;
};
const entry = (method: string, path: string, accept?: string) => {
  const r = request(method, path, accept);
  const found = match(r);
  return { path: found.path, method: found.method, params: r.params };
};

describe('the request table', () => {
  it('lists the API from the service route table first, and ends with the catch-all for the envelope', () => {
    const api = REQUESTS.slice(0, routeList().length).map((e) => `${e.method} ${e.path}`);
    expect(api).toEqual(routeList());
    expect(REQUESTS.at(-1)!.path).toBe('*');
  });

  it.each([
    ['GET', '/api/v1/balance', undefined, 'GET /api/v1/balance'],
    ['HEAD', '/api/v1/offsets/off_1', undefined, 'GET /api/v1/offsets/{id}'],
    ['POST', '/api/v1/offsets', undefined, 'POST /api/v1/offsets'],
    ['HEAD', '/api/v1/quotes', undefined, 'ANY *'],
    ['DELETE', '/api/v1/balance', undefined, 'ANY *'],
    ['GET', '/', 'text/html,application/xhtml+xml', 'GET /'],
    ['GET', '/', 'application/json', 'GET /'],
    ['POST', '/', 'text/html', 'ANY /'],
    ['POST', '/', 'application/json', 'ANY /'],
    ['PUT', '/login', undefined, 'ANY /login'],
    ['GET', '/actions/topup', undefined, 'GET /actions/{name*}'],
    ['POST', '/actions/topup', undefined, 'POST /actions/{name*}'],
    ['PUT', '/actions/topup', undefined, 'ANY /actions/{name*}'],
    ['DELETE', '/logout', undefined, 'ANY /logout'],
    ['GET', '/offsets/off_1', undefined, 'GET /offsets/{id}'],
    ['POST', '/offsets/off_1', undefined, 'ANY /offsets/{id}'],
    ['HEAD', '/requests', undefined, 'GET /requests'],
    ['PUT', '/requests', undefined, 'ANY /requests'],
    ['DELETE', '/requests/req_1', undefined, 'ANY /requests/{request_id}'],
    ['GET', '/offsets/a/b', undefined, 'ANY *'],
    ['HEAD', '/certificates/cert_1', undefined, 'GET /certificates/{certificate_id}'],
    ['POST', '/certificates/cert_1', undefined, 'ANY /certificates/{certificate_id}'],
    ['GET', '/healthz', undefined, 'GET /healthz'],
    ['POST', '/healthz', undefined, 'ANY /healthz'],
    ['GET', '/readyz', undefined, 'GET /readyz'],
    ['PUT', '/readyz', undefined, 'ANY /readyz'],
    ['HEAD', '/livez', undefined, 'GET /livez'],
    ['DELETE', '/livez', undefined, 'ANY /livez'],
    ['DELETE', '/favicon.ico', undefined, 'ANY /favicon.ico'],
    ['GET', '/_page/app.css', undefined, 'GET /_page/app.css'],
    ['POST', '/_page/app.css', undefined, 'ANY /_page/app.css'],
    ['HEAD', '/favicon.ico', undefined, 'GET /favicon.ico'],
    ['GET', '/_page/other', undefined, 'GET /_page/{rest*}'],
    ['POST', '/_page/other', undefined, 'ANY *'],
    ['GET', '/nowhere', undefined, 'ANY *'],
    ['GET', '/nowhere', 'text/html', 'GET /{rest*}'],
    ['GET', '/api/v1/nowhere', 'text/html', 'ANY *'],
    ['GET', '/_sandbox/nowhere', 'text/html', 'ANY *'],
  ])('%s %s (Accept: %s) is answered by %s', (method, path, accept, want) => {
    const found = entry(method, path, accept);
    expect(`${found.method} ${found.path}`).toBe(want);
  });

  it('the developer page answers / only for a browser; the JSON index for everything else', () => {
    const html = match(request('GET', '/', 'text/html'));
    const json = match(request('GET', '/', '*/*'));
    expect(html).not.toBe(json);
    expect(html.when).toBeDefined();
    expect(json.listed).toBeUndefined();
  });

  // A failure the service could not answer (the ledger unreachable) is a page's 503 where wantsPage
  // says so, else the API's JSON: the form the path's own answers take. A browser's GET of a path no
  // entry took is the page's 404 by the same test.
  it.each([
    ['/', true],
    ['/requests', true],
    ['/offsets/off_1', true],
    ['/nowhere', true],
    ['/api/v1', true],
    ['/api/v1x', true],
    ['/api/v1/balance', false],
    ['/api/v1/nowhere', false],
    ['/_sandbox/requests', false],
    ['/_sandbox/nowhere', false],
  ])("a browser's failure at %s is a page: %s", (path, page) => {
    expect(wantsPage(request('GET', path, 'text/html'))).toBe(page);
    expect(wantsPage(request('GET', path, 'application/json'))).toBe(false);
    if (path !== '/' && !['/requests', '/offsets/off_1'].includes(path)) {
      expect(entry('GET', path, 'text/html').path === '/{rest*}').toBe(page);
    }
  });

  // A path whose answers are always pages (a certificate's 200 and 404, the developer page's 401s)
  // tells its failures as a page too, whatever Accept says: curl and link checkers send none.
  it.each([
    ['GET', '/certificates/cert_1', true],
    ['HEAD', '/certificates/cert_1', true],
    ['GET', '/login', true],
    ['GET', '/offsets/off_1', true],
    ['DELETE', '/offsets/off_1', true],
    ['GET', '/requests', true],
    ['GET', '/requests/req_1', true],
    ['POST', '/actions/topup', true],
    ['POST', '/logout', true],
    ['GET', '/_page/other', true],
    ['GET', '/', false],
    ['GET', '/nowhere', false],
    ['GET', '/api/v1/balance', false],
    ['GET', '/api/v1/nowhere', false],
    ['GET', '/_sandbox/requests', false],
    ['GET', '/healthz', false],
    ['GET', '/favicon.ico', false],
    ['POST', '/certificates/cert_1', false],
  ])('%s %s answers its failures as a page whatever Accept says: %s', (method, path, page) => {
    for (const accept of [undefined, '*/*', 'application/json']) expect(answersPage(request(method, path, accept))).toBe(page);
    expect(answersPage(request(method, path, 'text/html'))).toBe(page || wantsPage(request(method, path, 'text/html')));
  });

  it('hands the captured segments to the handler, raw', () => {
    expect(entry('GET', '/certificates/cert_%41').params).toEqual(['cert_%41']);
    expect(entry('POST', '/actions/a/b').params).toEqual(['a/b']);
  });
});
