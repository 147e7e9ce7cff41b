import type { ApiErrorBody, ApiResponse, ErrorType } from '../api/types.js';
import { redactSecrets } from './keys.js';

/**
 * Every code the model answers with, its HTTP status and its `type`. The spec leaves the
 * type↔code mapping and the 400/401 codes "not shown"; this table is our decision, written
 * down in docs/service-model.md, and the only place it lives.
 */
export const ERROR_CODES = {
  // 400
  invalid_json: { status: 400, type: 'invalid_request_error' },
  idempotency_key_missing: { status: 400, type: 'invalid_request_error' },
  idempotency_key_invalid: { status: 400, type: 'invalid_request_error' },
  // 401
  api_key_missing: { status: 401, type: 'authentication_error' },
  api_key_invalid: { status: 401, type: 'authentication_error' },
  api_key_revoked: { status: 401, type: 'authentication_error' },
  // 402
  insufficient_balance: { status: 402, type: 'invalid_request_error' },
  // 403
  api_access_inactive: { status: 403, type: 'permission_error' },
  insufficient_permissions: { status: 403, type: 'permission_error' },
  // 404, 405
  resource_missing: { status: 404, type: 'invalid_request_error' },
  route_missing: { status: 404, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  // 409
  idempotency_key_reused: { status: 409, type: 'invalid_request_error' },
  // Served only: what the HTTP adapter answers before a request reaches the model.
  malformed_request: { status: 400, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  body_too_large: { status: 413, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  // 422
  validation_error: { status: 422, type: 'invalid_request_error' },
  amount_too_small: { status: 422, type: 'invalid_request_error' },
  /** The sandbox's own: the price is above the request's Carbon-Max-Amount-Cents (validation.ts, checkMaxAmount). */
  amount_above_max: { status: 422, type: 'invalid_request_error' },
  // 429
  rate_limited: { status: 429, type: 'rate_limit_error' },
  // 5xx
  internal_error: { status: 500, type: 'api_error' },
  service_unavailable: { status: 503, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A failure the service answers with the error envelope. Thrown inside the model, caught by handle(). */
export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { param?: string; balance_cents?: number; required_cents?: number } = {},
    headers: Record<string, string> = {},
  ) {
    // An error echoes the caller's input (a path, a parameter's name, an id): a key in it is masked.
    super(redactSecrets(message));
    const param = extra.param === undefined ? undefined : redactSecrets(extra.param);
    if (param !== extra.param) this.extra = { ...extra, param };
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
    // A 401 names the scheme it wants (RFC 9110 §11.6.1; RFC 6750's Bearer).
    this.headers = this.status === 401 ? { 'www-authenticate': 'Bearer realm="carbon"', ...headers } : headers;
  }

  toBody(): ApiErrorBody {
    return { type: this.type, code: this.code, message: this.message, ...this.extra };
  }
}

/** The service's answer for a refusal: the error envelope, with the error's own headers and the Request-Id. */
export function errorResponse(err: ApiError, id: string): ApiResponse {
  return {
    status: err.status,
    headers: { 'content-type': 'application/json', ...err.headers, 'request-id': id },
    body: { error: err.toBody() },
  };
}

export function validationError(param: string, message: string): ApiError {
  return new ApiError('validation_error', message, { param });
}

/** The most characters of a client's own text (an id, a parameter's name) an error repeats. */
const ECHO_MAX = 80;

/**
 * A client's own text as an error repeats it: a key in it masked first, then cut to ECHO_MAX
 * characters with "…" (an id of 8,000 characters is not sent back whole, in the answer or the log).
 */
export function echoed(text: string): string {
  const masked = redactSecrets(text);
  if (masked.length <= ECHO_MAX) return masked;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(masked[ECHO_MAX - 1]!) ? ECHO_MAX - 1 : ECHO_MAX;
  return `${masked.slice(0, end)}…`;
}

/** A query parameter or body field the endpoint does not take (422): its name, as echoed, or that it had none (`?=x`). */
export function unknownParameter(name: string): ApiError {
  if (name === '') return validationError('', 'Received a parameter with no name.');
  return validationError(echoed(name), `Received unknown parameter: ${echoed(name)}.`);
}

/**
 * A method the path does not have: 405 with the methods it does have in `Allow` (the API's, and the
 * server's own JSON paths), HEAD among them wherever GET is (it is answered there, RFC 9110 §9.3.2).
 */
export function methodNotAllowed(method: string, path: string, allow: string): ApiError {
  const header = allow.replace(/\bGET\b/, 'GET, HEAD');
  return new ApiError('method_not_allowed', `${method.toUpperCase()} is not allowed on ${path}; use ${allow}.`, {}, { allow: header });
}
