import type { ApiErrorBody, ApiResponse, ErrorEnvelope, ErrorType, Offset } from '../api/types.js';

/** Every error the client throws. */
export class CarbonError extends Error {
  override name = 'CarbonError';
  /**
   * On an error `buy()` ended with: the purchase's Idempotency-Key (the one given, or the one it
   * made). Where the purchase may have been made (no answer, a 5xx), pass it again to retry safely.
   */
  idempotencyKey: string | undefined;
}

/**
 * The API answered with the error envelope. Carries the envelope's fields and the HTTP
 * status, so a caller can branch on `code` and a CLI can map `status` to an exit code.
 */
export class CarbonApiError extends CarbonError {
  override name = 'CarbonApiError';
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | undefined;
  readonly balanceCents: number | undefined;
  readonly requiredCents: number | undefined;
  readonly requestId: string | undefined;
  /** Seconds from `Retry-After`, on a 429. */
  readonly retryAfter: number | undefined;
  /**
   * True when an attempt of the same request, this one or one before it, got no answer or a 5xx:
   * it may have acted (a purchase made) though this answer says nothing was done.
   */
  earlierMaybeSent = false;

  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
    this.type = body.type;
    this.code = body.code;
    this.param = body.param;
    this.balanceCents = body.balance_cents;
    this.requiredCents = body.required_cents;
    this.requestId = headers['request-id'];
    this.retryAfter = retryAfterSeconds(headers['retry-after']);
  }

  /** The envelope as the API sent it. */
  toJSON(): ErrorEnvelope {
    return { error: this.body };
  }
}

/**
 * `Retry-After` in seconds: the API's whole seconds, or an HTTP date (RFC 9110 §10.2.3, which a
 * proxy may send) counted from now, a past one as 0. Anything else is none (backoff alone), so a
 * date decades away ends the retries as `3600` does, rather than being retried on backoff.
 */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  // A date names its day or month: `-5` or `1.5`, which Date.parse would take for years or days, is none.
  const at = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The API's 404 for an offset id, made without asking: for an id no offset can have ('', '.', '..'). */
export function missingOffset(id: string): CarbonApiError {
  return new CarbonApiError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such offset: '${id}'.`,
    param: 'id',
  });
}

/** The request never got an answer: refused, reset, timed out, or the server is unreachable. */
export class CarbonConnectionError extends CarbonError {
  override name = 'CarbonConnectionError';
  constructor(
    message: string,
    override readonly cause?: unknown,
    /**
     * True when no attempt of the request can have reached the server: every one failed before
     * a byte was sent (the connection refused, the host not found). Then a purchase certainly
     * did not happen.
     */
    public neverSent = false,
  ) {
    super(message);
  }
}

/**
 * An answer came, but not one the API gives there: not JSON, or not the object it answers (a base
 * URL that names another service, a proxy's page). Trying again does not change it.
 */
export class CarbonAnswerError extends CarbonConnectionError {
  override name = 'CarbonAnswerError';
  /**
   * `status`: what the answer said, where the transport read it (undefined: a shape checked after).
   * `refused`: the answer says nothing was done (a 404 or 405), and no attempt before it may have
   * reached a server: a purchase was certainly not made.
   */
  constructor(
    message: string,
    readonly status?: number,
    readonly refused = false,
  ) {
    super(message);
  }
}

/** `waitUntilSettled` gave up while the offset was still processing. */
export class WaitTimeoutError extends CarbonError {
  override name = 'WaitTimeoutError';
  constructor(readonly offset: Offset) {
    super(`Offset ${offset.id} is still ${offset.status} after the wait timed out.`);
  }
}

/** The client was set up wrongly (no key, a key sent where it should not go). */
export class CarbonConfigError extends CarbonError {
  override name = 'CarbonConfigError';
}

/** The code of the error an answer of 400 or more without the API's envelope is. */
export const UNEXPECTED = 'unexpected_response';

/** The error an answer of 400 or more is: its envelope's, or, where it has none, one that says so. */
export function apiErrorOf(response: ApiResponse): CarbonApiError {
  const envelope = response.body as Partial<ErrorEnvelope> | undefined;
  const body = envelope?.error;
  if (body && typeof body.code === 'string' && typeof body.message === 'string')
    return new CarbonApiError(response.status, body, response.headers);
  return new CarbonApiError(
    response.status,
    { type: 'api_error', code: UNEXPECTED, message: `The server answered ${response.status} without an error envelope.` },
    response.headers,
  );
}

/**
 * A 404 or 405 without the API's envelope (its own come in it): no such path, or not this method,
 * from another server at the base URL, not an offset that does not exist. `earlierMaybeSent`: an
 * attempt before it may have reached a server, so it cannot say that nothing was done.
 */
export function otherServer(status: number, method: string, path: string, earlierMaybeSent: boolean): CarbonAnswerError {
  const what = `${method} ${path.startsWith('/offsets/') ? '/offsets/{id}' : path}`;
  return new CarbonAnswerError(
    `The server answered ${what} with ${status} without the API's error envelope; is the base URL right?`,
    status,
    !earlierMaybeSent,
  );
}

/** A value a caller gave, as a message shows it: text quoted (so "3" is not read as the number 3), anything else as it prints. */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value !== null && typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

/**
 * An Idempotency-Key a caller gave, or undefined: a JavaScript caller's object or number would go
 * out as "[object Object]" or digits, and one key serve two purchases; refused before anything is sent.
 */
export function givenKey(value: unknown): string | undefined {
  // Text of any length is the API's to judge (its 400 names the header), as the CLI's --idempotency-key is.
  if (value === undefined || typeof value === 'string') return value;
  throw new CarbonConfigError(`idempotencyKey must be a string, not ${shownValue(value)}; nothing was sent.`);
}
