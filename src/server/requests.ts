import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiRequest } from '../api/types.js';
import { API_PREFIX } from '../api/types.js';
import type { Health } from '../engine/open.js';
import type { FaultConfig } from '../service/faults.js';
import { requestId } from '../service/keys.js';
import { ROUTES } from '../service/routes.js';
import type { Sandbox } from '../service/sandbox.js';
import type { OffsetsService } from '../service/service.js';
import { api, certificate, health, live } from './endpoints.js';
import type { ServerFaults } from './faults.js';
import { request, requests, wrongMethod } from './journal-endpoints.js';
import { asset, favicon } from './pages/developer/assets.js';
import { requestShown, requestsList } from './pages/developer/requests-routes.js';
import { login, signedIn, wrongPageMethod } from './pages/developer/routes.js';
import { fromBrowser, type Reply, type ReplyWriter, wantsPage } from './reply.js';

/**
 * The request table: every URL `carbon serve` answers, one entry each, in the order they are
 * matched. A new endpoint or page is one entry here and its handler. The API's endpoints come
 * from the service's route table (src/service/routes.ts); a browser's GET of any other path outside
 * the API is the developer page's 404; the last entry hands everything else to the service too,
 * which answers 404, or 405 with Allow, in the API's envelope.
 */

/** A request as the handlers see it: read whole, its path split, and the segments the entry captured. */
export interface Incoming extends ApiRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The method in capitals. */
  upper: string;
  /** The path segments the entry's `{name}` parts captured, in order (raw, still percent-encoded). */
  params: string[];
  /** The fault setting of this request's batch (`carbon sandbox faults`). */
  faults: Promise<FaultConfig | null>;
}

const NO_PARAMS: string[] = [];
const NO_HEADERS: Incoming['headers'] = {};
const NO_FAULTS: Promise<FaultConfig | null> = Promise.resolve(null);

/** One shape for every request (all fields set at once), filled in as it is answered. */
export function incoming(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  query: Incoming['query'],
  rawQuery: string,
  body: string,
): Incoming {
  return { method, path, query, rawQuery, headers: NO_HEADERS, body, req, res, upper: '', params: NO_PARAMS, faults: NO_FAULTS };
}

/** What the handlers share: the engine, where the server is, and how it is doing. */
export interface Served {
  sandbox: Sandbox;
  service: OffsetsService;
  faults: ServerFaults;
  writer: ReplyWriter;
  /** The developer page's origin: --public-url, or http://host:port. */
  pageOrigin: string;
  /** The API's base address, for the index. */
  apiUrl: string;
  /** Whether the ledger answers, or why not (for /healthz and /readyz), and which store it is. */
  health(): Promise<Health>;
  storeKind: string;
}

/** A handler's answer; null when there is nothing to send (a fault cut the connection). */
type Handler = (request: Incoming, served: Served) => Reply | null | Promise<Reply | null>;

export interface Entry {
  /** GET also answers HEAD; ANY answers every method (the handler says which it takes). */
  method: 'GET' | 'POST' | 'ANY';
  /** Exact, or with `{name}` for one segment, `{name*}` for the rest of the path; `*` is every path. */
  path: string;
  /** A further condition (the developer page at `/` is for browsers only). */
  when?: (request: Incoming) => boolean;
  /** Shown in the JSON index at `/`. */
  listed?: boolean;
  /** Its answers are HTML pages whatever Accept says (a certificate, the developer page's paths): its failures too. */
  page?: true;
  handle: Handler;
}

export const REQUESTS: readonly Entry[] = [
  ...ROUTES.map((r): Entry => ({ method: r.method, path: `${API_PREFIX}${r.path}`, listed: true, handle: api })),
  { method: 'GET', path: '/', when: fromBrowser, page: true, handle: signedIn },
  { method: 'ANY', path: '/login', page: true, handle: login },
  // A form's paths: POST; a GET (a link opened) is the page's 404, there being no page there.
  { method: 'POST', path: '/logout', page: true, handle: signedIn },
  { method: 'POST', path: '/actions/{name*}', page: true, handle: signedIn },
  { method: 'GET', path: '/logout', page: true, handle: signedIn },
  { method: 'GET', path: '/actions/{name*}', page: true, handle: signedIn },
  { method: 'ANY', path: '/logout', page: true, handle: wrongPageMethod('POST') },
  { method: 'ANY', path: '/actions/{name*}', page: true, handle: wrongPageMethod('POST') },
  { method: 'GET', path: '/offsets/{id}', page: true, handle: signedIn },
  { method: 'GET', path: '/requests', page: true, handle: requestsList },
  { method: 'GET', path: '/requests/{request_id}', page: true, handle: requestShown },
  // The page's GET-only paths with another method: the page's 405 (a browser's `/` only: the JSON index is the API's).
  { method: 'ANY', path: '/', when: fromBrowser, page: true, handle: wrongPageMethod('GET') },
  { method: 'ANY', path: '/offsets/{id}', page: true, handle: wrongPageMethod('GET') },
  { method: 'ANY', path: '/requests', page: true, handle: wrongPageMethod('GET') },
  { method: 'ANY', path: '/requests/{request_id}', page: true, handle: wrongPageMethod('GET') },
  { method: 'GET', path: '/certificates/{certificate_id}', listed: true, page: true, handle: certificate },
  // The probes: /livez the process answers (liveness), /readyz and /healthz the ledger too (readiness, balancers).
  { method: 'GET', path: '/healthz', listed: true, handle: health },
  { method: 'GET', path: '/readyz', listed: true, handle: health },
  { method: 'GET', path: '/livez', listed: true, handle: live },
  { method: 'ANY', path: '/certificates/{certificate_id}', handle: wrongMethod },
  { method: 'ANY', path: '/healthz', handle: wrongMethod },
  { method: 'ANY', path: '/readyz', handle: wrongMethod },
  { method: 'ANY', path: '/livez', handle: wrongMethod },
  { method: 'GET', path: '/_sandbox/requests', listed: true, handle: requests },
  { method: 'GET', path: '/_sandbox/requests/{request_id}', listed: true, handle: request },
  { method: 'ANY', path: '/_sandbox/requests', handle: wrongMethod },
  { method: 'ANY', path: '/_sandbox/requests/{request_id}', handle: wrongMethod },
  { method: 'GET', path: '/', handle: index },
  { method: 'GET', path: '/favicon.ico', handle: favicon },
  { method: 'GET', path: '/_page/app.css', handle: asset },
  { method: 'GET', path: '/_page/app.js', handle: asset },
  // The rest of the server's GET-only paths, with another method: the API's 405.
  { method: 'ANY', path: '/', handle: wrongMethod },
  { method: 'ANY', path: '/favicon.ico', handle: wrongMethod },
  { method: 'ANY', path: '/_page/app.css', handle: wrongMethod },
  { method: 'ANY', path: '/_page/app.js', handle: wrongMethod },
  { method: 'GET', path: '/_page/{rest*}', page: true, handle: signedIn },
  { method: 'GET', path: '/{rest*}', when: wantsPage, page: true, handle: signedIn },
  { method: 'ANY', path: '*', handle: api },
];

/** GET /: what this server is, and the endpoints the table lists. */
function index(_: Incoming, served: Served): Reply {
  return {
    status: 200,
    headers: { 'request-id': requestId() },
    body: {
      object: 'api',
      name: 'carbon offsets sandbox',
      version: 'v1',
      base_url: served.apiUrl,
      documentation: 'openapi.yaml in the carbon repository describes every operation.',
      endpoints: REQUESTS.filter((e) => e.listed === true).map((e) => `${e.method} ${e.path}`),
    },
  };
}

interface Compiled {
  entry: Entry;
  exact: string | null;
  pattern: RegExp | null;
}

const COMPILED: Compiled[] = REQUESTS.map((entry) => {
  const { path } = entry;
  if (path === '*') return { entry, exact: null, pattern: null };
  if (!path.includes('{')) return { entry, exact: path, pattern: null };
  const source = path.replace(/\{[a-z_]+\*\}/g, '(.*)').replace(/\{[a-z_]+\}/g, '([^/]+)');
  return { entry, exact: null, pattern: new RegExp(`^${source}$`) };
});

/**
 * Whether a failure the service could not answer (the ledger unreachable) is told `request` as a
 * page (reply.ts, failureReply): where the path's answers are pages whatever Accept says (a
 * certificate URL a link checker or curl opens), or a browser asks for a page; else the API's JSON.
 */
export function answersPage(request: Incoming): boolean {
  return wantsPage(request) || match(request).page === true;
}

/** The first entry that answers `request`; its captured segments are put in `request.params`. */
export function match(request: Incoming): Entry {
  const { upper, path } = request;
  for (const c of COMPILED) {
    const m = c.entry.method;
    if (m !== 'ANY' && m !== upper && !(m === 'GET' && upper === 'HEAD')) continue;
    if (c.exact !== null) {
      if (c.exact !== path) continue;
    } else if (c.pattern !== null) {
      const found = c.pattern.exec(path);
      if (found === null) continue;
      request.params = found.slice(1);
    }
    if (c.entry.when !== undefined && !c.entry.when(request)) continue;
    return c.entry;
  }
  return REQUESTS[REQUESTS.length - 1]!;
}
