import { API_PREFIX, type ApiRequest, type ApiResponse } from '../api/types.js';
import { ApiError, errorResponse, methodNotAllowed } from './errors.js';
import { requestId } from './keys.js';
import { matchRoute, type Operation, ROUTES, type Route } from './routes.js';
import { checkIdempotencyKey, parseListQuery, parsePurchaseBody, rejectQuery } from './validation.js';

/**
 * What the service checks of a request without its ledger: the route it names, its shape, and
 * its content as validation.ts reads it. `OffsetsService.handle()` makes these checks, in this
 * order, around the ones that need the ledger (the key, the account's standing, the rate limit,
 * the permission); `refusalWithoutLedger` makes them alone, for the local engine before its
 * ledger exists.
 */

/** The route a request names, or the 404 / 405 the service answers before it looks at the key. */
export function routeOf(req: ApiRequest): { route: Route; id: string | null } {
  const match = matchRoute(req.method, req.path);
  if (match.kind === 'missing') {
    // What is there, as Stripe's 404 points at its docs: the API's operations, by name.
    const operations = ROUTES.map((r) => `${r.method} ${r.path}`).join(', ');
    throw new ApiError(
      'route_missing',
      `Unrecognized request URL (${req.method.toUpperCase()} ${req.path}). The API's operations, under ${API_PREFIX}: ${operations}.`,
    );
  }
  if (match.kind === 'wrong_method') throw methodNotAllowed(req.method, req.path, match.allow);
  return { route: match.route, id: match.id };
}

/** What every operation checks of the request itself, once the caller is let in, before reading the ledger. */
export function checkRequestShape(route: Route, req: ApiRequest): void {
  if (route.query === null && route.unknownQuery === 'refuse') rejectQuery(req.query);
  if (route.idempotency !== 'none') checkIdempotencyKey(req.headers['idempotency-key'], route.idempotency === 'required');
}

/** The content each operation's handler reads first, checked as the handler checks it (the same functions). */
const CONTENT: Partial<Record<Operation, (req: ApiRequest) => unknown>> = {
  createOffset: (req) => parsePurchaseBody(req.body),
  createQuote: (req) => parsePurchaseBody(req.body),
  listOffsets: (req) => parseListQuery(req.query),
};

/**
 * The answer the service gives `req` whatever its ledger holds, to a caller it lets in with
 * purchase access (a fresh sandbox's own key): a path it does not have (404, 405), or a request
 * validation.ts refuses (400, 422). Undefined when the answer needs the ledger. The local engine
 * asks it before a ledger exists, so a malformed request creates none; nothing is journaled, as
 * there is no journal yet.
 */
export function refusalWithoutLedger(req: ApiRequest): ApiResponse | undefined {
  try {
    const { route } = routeOf(req);
    checkRequestShape(route, req);
    CONTENT[route.operation]?.(req);
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return errorResponse(err, requestId());
  }
}
