import { API_PREFIX } from '../api/types.js';

/**
 * The API's endpoints as data: one entry per operation (spec part 4). Routing, 404 and 405, the
 * server's index, the OpenAPI check and `carbon api`'s completions all read this table, so a new
 * endpoint is one entry here and one handler in service.ts.
 */

export type Operation = 'createOffset' | 'listOffsets' | 'getOffset' | 'createQuote' | 'getBalance' | 'getImpact';

export interface Route {
  method: 'GET' | 'POST';
  /** Under /api/v1; `{id}` is one path segment. */
  path: string;
  operation: Operation;
  /** `purchase` needs a key with purchase access (spec part 5). */
  permission: 'read' | 'purchase';
  /** Query parameters the operation reads; null: it takes none. */
  query: readonly string[] | null;
  /**
   * An unknown query parameter: refused with 422 where the spec lists 422 for the endpoint,
   * ignored where it does not (GET /balance, /impact, /offsets/{id}).
   */
  unknownQuery: 'refuse' | 'ignore';
  /** The JSON body it reads: a purchase (exactly one of kg or amount_cents, optional reference), or none. */
  body: 'purchase' | null;
  /** The Idempotency-Key header: required, checked when sent, or not read. */
  idempotency: 'required' | 'optional' | 'none';
}

export const ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/offsets',
    operation: 'createOffset',
    permission: 'purchase',
    query: null,
    unknownQuery: 'refuse',
    body: 'purchase',
    idempotency: 'required',
  },
  {
    method: 'GET',
    path: '/offsets',
    operation: 'listOffsets',
    permission: 'read',
    query: ['limit', 'starting_after', 'reference'],
    unknownQuery: 'refuse',
    body: null,
    idempotency: 'none',
  },
  {
    method: 'GET',
    path: '/offsets/{id}',
    operation: 'getOffset',
    permission: 'read',
    query: null,
    unknownQuery: 'ignore',
    body: null,
    idempotency: 'none',
  },
  {
    method: 'POST',
    path: '/quotes',
    operation: 'createQuote',
    permission: 'read',
    query: null,
    unknownQuery: 'refuse',
    body: 'purchase',
    idempotency: 'optional',
  },
  {
    method: 'GET',
    path: '/balance',
    operation: 'getBalance',
    permission: 'read',
    query: null,
    unknownQuery: 'ignore',
    body: null,
    idempotency: 'none',
  },
  {
    method: 'GET',
    path: '/impact',
    operation: 'getImpact',
    permission: 'read',
    query: null,
    unknownQuery: 'ignore',
    body: null,
    idempotency: 'none',
  },
];

export type RouteMatch = { kind: 'found'; route: Route; id: string | null } | { kind: 'wrong_method'; allow: string } | { kind: 'missing' };

/** Path shapes, each with the routes that share it. */
const SHAPES = (() => {
  const shapes = new Map<string, Route[]>();
  for (const r of ROUTES) shapes.set(r.path, [...(shapes.get(r.path) ?? []), r]);
  return [...shapes.entries()].map(([path, routes]) => ({
    pattern: new RegExp(`^${path.replace('{id}', '([^/]+)')}$`),
    routes,
    allow: routes
      .map((r) => r.method)
      .sort()
      .join(', '),
  }));
})();

/** The route for a method and a full path (`/api/v1/...`); HEAD is GET without the body. */
export function matchRoute(method: string, fullPath: string): RouteMatch {
  if (!fullPath.startsWith(`${API_PREFIX}/`)) return { kind: 'missing' };
  const path = fullPath.slice(API_PREFIX.length);
  const upper = method.toUpperCase();
  const wanted = upper === 'HEAD' ? 'GET' : upper;
  for (const shape of SHAPES) {
    const m = shape.pattern.exec(path);
    if (m === null) continue;
    const route = shape.routes.find((r) => r.method === wanted);
    return route === undefined ? { kind: 'wrong_method', allow: shape.allow } : { kind: 'found', route, id: m[1] ?? null };
  }
  return { kind: 'missing' };
}

/** `POST /api/v1/offsets`, … for indexes and help texts. */
export function routeList(): string[] {
  return ROUTES.map((r) => `${r.method} ${API_PREFIX}${r.path}`);
}
