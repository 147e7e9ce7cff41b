import { LIMITS, type PurchaseParams } from '../api/types.js';
import { ApiError, unknownParameter, validationError } from './errors.js';
import { parseJsonBody } from './json.js';
import { grouped } from './units.js';

/** The validated body of POST /offsets and POST /quotes. */
export interface PurchaseRequest {
  kg?: number;
  amount_cents?: number;
  reference: string | null;
}

const PURCHASE_FIELDS = new Set(['kg', 'amount_cents', 'reference']);

function isWholeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** Characters as a person counts them: code points, so an emoji is one. */
function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** An unpaired UTF-16 surrogate: JSON's `"\ud800"` makes one, but no text can hold it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `value` is text: no lone surrogate (bytes that are not UTF-8 in an address are read as one: server/http.ts). */
export const isUnicodeText = (value: string): boolean => !LONE_SURROGATE.test(value);

/** Refused naming `param`: a lone surrogate (or bytes that are not UTF-8, which the server marks so) would come back altered. */
function mustBeUnicode(value: string, param: string): void {
  if (!isUnicodeText(value))
    throw validationError(param, `${param} must be valid Unicode text (it holds an unpaired surrogate, or bytes that are not UTF-8).`);
}

/** Text a store is asked about (a filter's value): valid Unicode without NUL, which PostgreSQL's text cannot hold. */
export function mustBeText(value: string, param: string): string {
  mustBeUnicode(value, param);
  if (value.includes('\u0000')) throw validationError(param, `${param} must not contain the NUL character (U+0000).`);
  return value;
}

function checkReference(value: unknown, param: string): string {
  if (typeof value !== 'string') throw validationError(param, `${param} must be a string.`);
  // Returned exactly as sent, or refused: NUL cannot be stored by every store (PostgreSQL text has no NUL), so no store takes it.
  mustBeUnicode(value, param);
  if (value.includes('\u0000')) throw validationError(param, `${param} must not contain the NUL character (U+0000).`);
  const n = charLength(value);
  if (n < 1 || n > LIMITS.referenceMax) {
    throw validationError(param, `${param} must be 1 to ${LIMITS.referenceMax} characters long.`);
  }
  return value;
}

/** Whether `value` is a reference a purchase takes (a snapshot's offsets are checked so: service/snapshots.ts). */
export function isReference(value: string): boolean {
  try {
    return checkReference(value, 'reference') === value;
  } catch {
    return false;
  }
}

function checkInteger(value: unknown, param: string, min: number, max: number): number {
  if (!isWholeNumber(value) || value < min || value > max) {
    throw validationError(param, `${param} must be a whole number from ${grouped(min)} to ${grouped(max)}.`);
  }
  return value;
}

/**
 * Parses and validates a purchase or quote body. Unparseable JSON is a 400; anything wrong
 * inside a well-formed body is a 422 naming the field. `null` counts as absent, matching the
 * way `requested` reports the field that was not used.
 */
export function parsePurchaseBody(raw: string): PurchaseRequest {
  const parsed = parseJsonBody(raw);
  if (!parsed.ok) throw new ApiError('invalid_json', `Invalid request body: ${parsed.reason}.`);
  const body = parsed.value;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('invalid_json', 'Invalid request body: expected a JSON object.');
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!PURCHASE_FIELDS.has(name)) throw unknownParameter(name);
  }
  return validatePurchase(fields as PurchaseParams & Record<string, unknown>);
}

function validatePurchase(fields: Record<string, unknown>): PurchaseRequest {
  const hasKg = fields.kg !== undefined && fields.kg !== null;
  const hasAmount = fields.amount_cents !== undefined && fields.amount_cents !== null;
  if (hasKg && hasAmount) {
    throw validationError('amount_cents', 'Give exactly one of kg or amount_cents, not both.');
  }
  if (!hasKg && !hasAmount) {
    throw validationError('kg', 'Give exactly one of kg or amount_cents.');
  }
  const reference = fields.reference === undefined || fields.reference === null ? null : checkReference(fields.reference, 'reference');
  return hasKg
    ? { kg: checkInteger(fields.kg, 'kg', LIMITS.kgMin, LIMITS.kgMax), reference }
    : { amount_cents: checkInteger(fields.amount_cents, 'amount_cents', LIMITS.amountCentsMin, LIMITS.amountCentsMax), reference };
}

const LIST_PARAMS = new Set(['limit', 'starting_after', 'reference']);

export interface ValidListQuery {
  limit: number;
  starting_after: string | null;
  reference: string | null;
}

/** Validates GET /offsets query parameters (strings, as a URL carries them). */
export function parseListQuery(query: Record<string, string | string[] | undefined>): ValidListQuery {
  const single: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (!LIST_PARAMS.has(name)) throw unknownParameter(name);
    if (Array.isArray(value)) throw validationError(name, `${name} may be given only once.`);
    single[name] = value;
  }
  let limit: number = LIMITS.listLimitDefault;
  if (single.limit !== undefined) {
    // Digits only, leading zeros and all (`00005` is 5): the number is judged, not its length.
    const n = /^\d+$/.test(single.limit) ? Number(single.limit) : NaN;
    limit = checkInteger(n, 'limit', LIMITS.listLimitMin, LIMITS.listLimitMax);
  }
  const startingAfter = single.starting_after;
  if (startingAfter !== undefined && (startingAfter.length === 0 || startingAfter.length > 255)) {
    throw validationError('starting_after', 'starting_after must be an offset ID.');
  }
  // A NUL too, as `reference` refuses it: no id holds one, and PostgreSQL's text cannot.
  if (startingAfter !== undefined) mustBeText(startingAfter, 'starting_after');
  return {
    limit,
    starting_after: startingAfter ?? null,
    reference: single.reference === undefined ? null : checkReference(single.reference, 'reference'),
  };
}

/**
 * POST /offsets and /quotes take no query parameters: any one given is an unknown parameter, a
 * 422 naming it, exactly as an unknown body field is (both list 422). GET /balance, /impact and
 * /offsets/{id} list no 422, so there unknown parameters are ignored (routes.ts says which).
 */
export function rejectQuery(query: Record<string, string | string[] | undefined>): void {
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) throw unknownParameter(name);
  }
}

/**
 * `Carbon-Max-Amount-Cents` (the sandbox's own, on POST /offsets): the most the purchase may cost,
 * checked inside its transaction at the rate that holds then, so a rate changed after a quote
 * cannot make it cost more (`carbon buy --max-cents`). A whole number of cents; absent, no cap.
 */
export function checkMaxAmount(value: string | undefined): number | null {
  if (value === undefined) return null;
  // Node joins a header sent twice with `, `: two ceilings are none the caller meant.
  if (value.includes(','))
    throw validationError('Carbon-Max-Amount-Cents', 'Carbon-Max-Amount-Cents was sent more than once; send it once.');
  if (!/^\d{1,15}$/.test(value)) {
    throw validationError('Carbon-Max-Amount-Cents', 'Carbon-Max-Amount-Cents must be a whole number of cents.');
  }
  return Number(value);
}

/**
 * Idempotency-Key: any text of 1 to 255 characters (Unicode code points, as for `reference`),
 * sent over HTTP as UTF-8. Refused (400), the same on both engines, is what a header cannot carry
 * intact: control characters, white space at either end (HTTP strips it), an unpaired surrogate,
 * and bytes that are not UTF-8 (the HTTP adapter hands those on as an unpaired surrogate).
 */
export function checkIdempotencyKey(value: string | undefined, required: boolean): string | null {
  if (value === undefined) {
    if (required) throw new ApiError('idempotency_key_missing', 'An Idempotency-Key header is required for this request.');
    return null;
  }
  const n = charLength(value);
  if (n < 1 || n > LIMITS.idempotencyKeyMax || /[\x00-\x1f\x7f]/.test(value) || /^\s|\s$/.test(value) || LONE_SURROGATE.test(value)) {
    throw new ApiError(
      'idempotency_key_invalid',
      `The Idempotency-Key header must be 1 to ${LIMITS.idempotencyKeyMax} characters of UTF-8 text, without control characters or white space at either end.`,
    );
  }
  return value;
}
