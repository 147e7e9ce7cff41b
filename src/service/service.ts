import { API_PREFIX, type ApiRequest, type ApiResponse, type Balance, type Impact, type Mode, type Offset, type OffsetList, type Quote } from '../api/types.js';
import { ApiError } from './errors.js';
import { hashKey, keyMode, requestId, sameHash } from './keys.js';
import { type AccountRow, type KeyRow, Ledger, type OffsetRow, storageError } from './ledger.js';
import { price } from './pricing.js';
import { RateLimiter } from './rate-limit.js';
import { checkIdempotencyKey, parseListQuery, parsePurchaseBody, rejectQuery } from './validation.js';

export interface ServiceOptions {
  /** Wall-clock milliseconds; the account's sandbox clock offset is added on top. */
  clock?: () => number;
  /** Origin that certificate URLs point at (the server that serves /certificates/…). */
  publicBaseUrl?: string;
}

export const DEFAULT_PUBLIC_BASE_URL = 'http://127.0.0.1:4010';

interface Caller {
  key: KeyRow;
  mode: Mode;
  account: AccountRow;
  now: number;
}

const CURRENCY = 'usd';
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * The offsets service, in-process: takes the API's request and returns the API's response.
 * Auth, validation, idempotency, rate limiting and the error envelope live here and only here,
 * so the local engine and `carbon serve` run the same code path.
 */
export class OffsetsService {
  private readonly clock: () => number;
  private readonly limiter = new RateLimiter();
  /**
   * Authorization headers that named a key of the ledger → the key's mode and SHA-256 digest.
   * Keyed by the header as sent, so a later request with the same header skips parsing and
   * hashing; what the key may do is still read from the ledger on every request.
   */
  private readonly bearers = new Map<string, { mode: Mode; hash: Buffer; id: string }>();
  readonly publicBaseUrl: string;

  constructor(
    readonly ledger: Ledger,
    options: ServiceOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.publicBaseUrl = (options.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL).replace(/\/+$/, '');
  }

  /** Model time: the wall clock plus the sandbox clock's offset. */
  now(account: AccountRow = this.ledger.account()): number {
    return this.clock() + account.clock_offset_ms;
  }

  handle(request: ApiRequest): ApiResponse {
    const id = requestId();
    try {
      const response = this.route(request);
      response.headers['request-id'] = id;
      return response;
    } catch (err) {
      if (!(err instanceof ApiError)) throw storageError(err, this.ledger.path);
      return {
        status: err.status,
        headers: { ...JSON_HEADERS, ...err.headers, 'request-id': id },
        body: { error: err.toBody() },
      };
    }
  }

  private route(req: ApiRequest): ApiResponse {
    const path = req.path.startsWith(`${API_PREFIX}/`) ? req.path.slice(API_PREFIX.length) : null;
    // HEAD is GET without the body (node:http drops it), as HTTP expects wherever GET works.
    const asked = req.method.toUpperCase();
    const method = asked === 'HEAD' ? 'GET' : asked;
    const allow = (methods: string): ApiError =>
      new ApiError('method_not_allowed', `${asked} is not allowed on ${req.path}; use ${methods}.`, {}, { allow: methods });

    if (path === '/offsets') {
      if (method === 'POST') return this.createOffset(req);
      if (method === 'GET') return this.listOffsets(req);
      throw allow('GET, POST');
    }
    if (path === '/quotes') {
      if (method === 'POST') return this.createQuote(req);
      throw allow('POST');
    }
    if (path === '/balance' || path === '/impact') {
      if (method !== 'GET') throw allow('GET');
      return path === '/balance' ? this.getBalance(req) : this.getImpact(req);
    }
    const single = path === null ? null : /^\/offsets\/([^/]+)$/.exec(path);
    if (single) {
      if (method !== 'GET') throw allow('GET');
      return this.getOffset(req, single[1]!);
    }
    throw new ApiError('route_missing', `Unrecognized request URL (${method} ${req.path}). The API lives under ${API_PREFIX}.`);
  }

  /** 401 for a missing, malformed, unknown or revoked key; 403 for an inactive account; then the rate limit. */
  private authenticate(req: ApiRequest): Caller {
    const header = req.headers.authorization;
    let bearer = header === undefined ? undefined : this.bearers.get(header);
    const seen = bearer !== undefined;
    if (bearer === undefined) {
      if (header === undefined || header.trim() === '') {
        throw new ApiError('api_key_missing', 'No API key provided. Send it as `Authorization: Bearer <API_KEY>`.');
      }
      const match = /^Bearer +(\S+) *$/i.exec(header);
      const secret = match?.[1];
      const mode = secret === undefined ? null : keyMode(secret);
      if (secret === undefined || mode === null) {
        throw new ApiError('api_key_invalid', 'Invalid API key: expected `Authorization: Bearer ck_test_…` or `ck_live_…`.');
      }
      const hash = hashKey(secret);
      bearer = { mode, hash, id: hash.toString('base64') };
    }
    // The key itself is looked up every time (a revocation is seen at once); only the parsing
    // and the SHA-256 of a header already seen are saved.
    const key = this.ledger.keyByHash(bearer.hash, bearer.id);
    if (!key || !sameHash(key.hash, bearer.hash)) throw new ApiError('api_key_invalid', 'Invalid API key provided.');
    if (!seen && header !== undefined) {
      // Only headers that named a key of the ledger, and only so many (a reset leaves dead ones).
      if (this.bearers.size >= 64) this.bearers.clear();
      this.bearers.set(header, bearer);
    }
    const mode = bearer.mode;
    if (key.revoked_ms !== null) throw new ApiError('api_key_revoked', 'This API key has been revoked.');
    const account = this.ledger.account();
    if (account.status !== 'active') {
      throw new ApiError(
        'api_access_inactive',
        account.status === 'suspended' ? 'API access is inactive: the account is suspended.' : 'API access is inactive: the account is not yet approved.',
      );
    }
    const now = this.now(account);
    const wait = this.limiter.take(key.id, now, account.rate_limit_requests, account.rate_limit_window_ms);
    if (wait !== null) {
      throw new ApiError('rate_limited', `Too many requests. Retry after ${wait} second${wait === 1 ? '' : 's'}.`, {}, { 'retry-after': String(wait) });
    }
    return { key, mode, account, now };
  }

  private createOffset(req: ApiRequest): ApiResponse<Offset> {
    const caller = this.authenticate(req);
    if (caller.key.permission !== 'purchase') {
      throw new ApiError('insufficient_permissions', 'This API key is read-only; buying offsets needs a key with purchase access.');
    }
    rejectQuery(req.query);
    const idempotencyKey = checkIdempotencyKey(req.headers['idempotency-key'], true);
    const request = parsePurchaseBody(req.body);
    // purchase() applies the placements due by now itself, in its own transaction.
    const { offset, replayed } = this.ledger.purchase({ mode: caller.mode, request, idempotencyKey, now: caller.now });
    const headers: Record<string, string> = jsonHeaders();
    if (replayed) headers['idempotent-replayed'] = 'true';
    return { status: 201, headers, body: this.toOffset(offset) };
  }

  private createQuote(req: ApiRequest): ApiResponse<Quote> {
    const { mode, account } = this.authenticate(req);
    rejectQuery(req.query);
    checkIdempotencyKey(req.headers['idempotency-key'], false);
    const request = parsePurchaseBody(req.body);
    const { kg, amount_cents: amount } = price(request, account.rate);
    const available = this.ledger.balance(mode);
    return ok({
      object: 'quote',
      livemode: mode === 'live',
      kg,
      amount_cents: amount,
      currency: CURRENCY,
      rate_millicents_per_kg: account.rate,
      available_cents: available,
      sufficient_balance: available >= amount,
      requires_review: amount > account.review_limit_cents,
    });
  }

  private listOffsets(req: ApiRequest): ApiResponse<OffsetList> {
    const { mode, now } = this.authenticate(req);
    const query = parseListQuery(req.query);
    let beforeSeq = Number.MAX_SAFE_INTEGER;
    if (query.starting_after !== null) {
      const cursor = this.ledger.offset(mode, query.starting_after);
      if (!cursor) {
        throw new ApiError('resource_missing', `No such offset: '${query.starting_after}' (starting_after).`, { param: 'starting_after' });
      }
      beforeSeq = cursor.seq;
    }
    this.ledger.settleDue(now);
    const rows = this.ledger.page(mode, query.limit + 1, beforeSeq, query.reference);
    const hasMore = rows.length > query.limit;
    if (hasMore) rows.pop();
    return ok({ object: 'list', data: rows.map((r) => this.toOffset(r)), has_more: hasMore });
  }

  /** `segment` is the raw path segment; one that is not valid percent-encoding names no offset. */
  private getOffset(req: ApiRequest, segment: string): ApiResponse<Offset> {
    const { mode, now } = this.authenticate(req);
    rejectQuery(req.query);
    this.ledger.settleDue(now);
    const id = decodePathSegment(segment);
    const row = id === null ? undefined : this.ledger.offset(mode, id);
    if (!row) throw new ApiError('resource_missing', `No such offset: '${id ?? segment}'.`, { param: 'id' });
    return ok(this.toOffset(row));
  }

  private getBalance(req: ApiRequest): ApiResponse<Balance> {
    const { mode, account } = this.authenticate(req);
    rejectQuery(req.query);
    return ok({
      object: 'balance',
      livemode: mode === 'live',
      available_cents: this.ledger.balance(mode),
      currency: CURRENCY,
      rate_millicents_per_kg: account.rate,
    });
  }

  private getImpact(req: ApiRequest): ApiResponse<Impact> {
    const { mode, now } = this.authenticate(req);
    rejectQuery(req.query);
    this.ledger.settleDue(now);
    return ok({ object: 'impact', livemode: mode === 'live', ...this.ledger.impact(mode) });
  }

  /** The spec's Offset for a ledger row, with certificate URLs on this service's public base URL. */
  toOffset(row: OffsetRow): Offset {
    return renderOffset(row, this.publicBaseUrl);
  }
}

/** The spec's Offset for a ledger row. */
export function renderOffset(row: OffsetRow, publicBaseUrl: string): Offset {
  return {
    object: 'offset',
    id: row.id,
    livemode: row.livemode === 1,
    status: row.status,
    kg: row.kg,
    amount_cents: row.amount_cents,
    currency: CURRENCY,
    rate_millicents_per_kg: row.rate,
    requested: { kg: row.req_kg, amount_cents: row.req_amount_cents },
    reference: row.reference,
    certificate_url: row.certificate_id === null ? null : `${publicBaseUrl}/certificates/${row.certificate_id}`,
    created: new Date(row.created_ms).toISOString(),
    placed: row.placed_ms === null ? null : new Date(row.placed_ms).toISOString(),
  };
}

/** A path segment decoded, or null when it is not valid percent-encoding (`%ZZ`). */
function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * A response's own headers object, written out: a copy made with `{ ...JSON_HEADERS }` gets a
 * map that V8 cannot extend along a cached transition, so adding the Request-Id to it took the
 * runtime's slow path on every request (~0.6 µs).
 */
function jsonHeaders(): Record<string, string> {
  return { 'content-type': 'application/json' };
}

function ok<T>(body: T): ApiResponse<T> {
  return { status: 200, headers: jsonHeaders(), body };
}
