import type { ApiRequest, ApiResponse, Balance, Impact, Mode, Offset, OffsetList, Quote } from '../api/types.js';
import { isoTime } from '../platform/iso-time.js';
import { type AccountRecord, JOURNAL_EMPTIED_META, type KeyRecord, type LedgerStore, type OffsetRecord } from '../store/port.js';
import { checkPermission, checkStanding, parseBearer, rateLimited, traceCaller } from './access.js';
import { ApiError, echoed, errorResponse } from './errors.js';
import { Journal } from './journal.js';
import type { Trace } from './journal-note.js';
import { requestId } from './keys.js';
import { effective, effectiveImpact, isDue, modelTime, mustHaveAccount, settleDue } from './lifecycle.js';
import { listPage } from './listing.js';
import { price } from './pricing.js';
import { type PurchaseOutcome, PurchaseQueue } from './purchase-batch.js';
import { checkRequestShape, routeOf } from './request-checks.js';
import type { Operation } from './routes.js';
import { checkIdempotencyKey, checkMaxAmount, parseListQuery, parsePurchaseBody } from './validation.js';

export interface ServiceOptions {
  /** Wall-clock milliseconds; the account's sandbox clock offset is added on top. */
  clock?: () => number;
  /** Origin that certificate URLs point at (the server that serves /certificates/…). */
  publicBaseUrl?: string;
  /** Where answered requests are noted (the sandbox's; none: nothing is). */
  journal?: Journal;
}

export const DEFAULT_PUBLIC_BASE_URL = 'http://127.0.0.1:4010';
const CURRENCY = 'usd';

interface Caller {
  key: KeyRecord;
  /** The key's SHA-256, for the check a write makes again inside its transaction. */
  hash: Uint8Array;
  mode: Mode;
  /** The mode's balance, read with the key: only for the operations that answer it (else null). */
  available: number | null;
  account: AccountRecord;
  now: number;
  trace: Trace;
}

type Handler = (service: OffsetsService, req: ApiRequest, caller: Caller, id: string | null) => Promise<ApiResponse>;

/**
 * The offsets service: takes the API's request and returns the API's response, over any store.
 * Auth, validation, idempotency, rate limiting and the error envelope live here and only here,
 * so the local engine and `carbon serve` (on SQLite or PostgreSQL) run the same code path. The
 * decisions themselves are plain functions (access.ts, purchase.ts, lifecycle.ts, pricing.ts,
 * validation.ts); this class reads what they need and has the store write what they decide.
 */
export class OffsetsService {
  private readonly clock: () => number;
  readonly publicBaseUrl: string;
  private readonly purchases: PurchaseQueue;
  readonly journal: Journal;

  constructor(
    /** The ledger, for this module's handlers; nothing above the service reads it. */
    readonly store: LedgerStore,
    options: ServiceOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.publicBaseUrl = (options.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL).replace(/\/+$/, '');
    this.purchases = new PurchaseQueue(store, (account) => this.now(account));
    this.journal = options.journal ?? new Journal(store, { enabled: false, keep: 0, maxAgeMs: 0, instance: '' }, this.clock);
  }

  /** Model time: the wall clock plus the sandbox clock's offset. */
  now(account: AccountRecord): number {
    return modelTime(this.clock, account);
  }

  /** The account; a store with none (emptied by hand) is a storage fault the person can mend. */
  async account(): Promise<AccountRecord> {
    return mustHaveAccount(await this.store.account(), this.store.label);
  }

  /**
   * The offset a certificate id names, as it stands now (certificate URLs on this service's base
   * URL), or undefined; whether it is public (placed, live) is the caller's to decide.
   */
  async offsetByCertificate(certificateId: string): Promise<Offset | undefined> {
    const row = await this.store.offsetByCertificate(certificateId);
    return row === undefined ? undefined : this.toOffset(row, this.now(await this.account()));
  }

  /**
   * Answers one request. Storage faults (LedgerError) are thrown for the transport to map. `trace`
   * is given when the request started earlier (a fault's injected latency): the journal's duration
   * is then what the caller waited.
   */
  async handle(request: ApiRequest, trace = this.journal.trace()): Promise<ApiResponse> {
    const id = requestId();
    let response: ApiResponse;
    try {
      response = await this.route(request, trace);
      response.headers['request-id'] = id;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      response = errorResponse(err, id);
      // Refused before the key was read (404, 405): the journal still says whose request it was.
      if (trace.mode === null && this.journal.settings.enabled) await traceCaller(this.store, request, trace);
    }
    this.journal.record(id, request, response, trace);
    return response;
  }

  private async route(req: ApiRequest, trace: Trace): Promise<ApiResponse> {
    const { route, id } = routeOf(req);
    const caller = await this.authenticate(req, route.operation === 'getBalance' || route.operation === 'createQuote', trace);
    checkPermission(caller.key, route.permission);
    checkRequestShape(route, req);
    return HANDLERS[route.operation](this, req, caller, id);
  }

  /** 401 for a missing, malformed, unknown or revoked key; 403 for an inactive account; then the rate limit. */
  private async authenticate(req: ApiRequest, withBalance: boolean, trace: Trace): Promise<Caller> {
    const { secret, mode } = parseBearer(req.headers.authorization);
    trace.mode = mode;
    // The key is looked up every time (a revocation is seen at once): the store keeps what it
    // read, and hashes a key only the first time it sees it. The key, the account and (for the
    // operations that answer it) the mode's balance are asked for together: a store that checks
    // its cache once a turn (PostgreSQL: one round trip) checks it once for all of them. With them,
    // the journal's emptied mark: the entry of an answer read from the sandbox before a reset is
    // not written after it (journal-types.ts, writtenSince).
    const [key, stored, available, emptied] = await Promise.all([
      this.store.keyBySecret(secret),
      this.store.account(),
      withBalance ? this.store.balance(mode) : null,
      this.store.meta(JOURNAL_EMPTIED_META),
    ]);
    trace.emptied = Number(emptied ?? 0);
    if (key === undefined) throw new ApiError('api_key_invalid', 'Invalid API key provided.');
    trace.keyId = key.id;
    const account = mustHaveAccount(stored, this.store.label);
    checkStanding(key, account);
    const now = (trace.now = this.now(account));
    if (account.rate_limit_requests !== null) {
      const wait = await this.store.takeRequest(key.id, now, account.rate_limit_requests, account.rate_limit_window_ms);
      if (wait !== null) throw rateLimited(wait);
    }
    return { key, hash: key.hash, mode, account, available, now, trace };
  }

  /** The spec's Offset for a stored one as it stands at `now`, certificate URLs on this service's base URL. */
  toOffset(row: OffsetRecord, now: number): Offset {
    return renderOffset(effective(row, now), this.publicBaseUrl);
  }

  /**
   * Records the placements due by `now` if the store's write lock is free, and otherwise leaves
   * them to the next writer: reads show them placed either way (lifecycle.ts), and never wait.
   */
  settleDue(now: number): Promise<void> {
    return settleDue(this.store, now);
  }

  /** Buys, in the next batch of purchases (purchase-batch.ts); the caller's key is checked again inside the write. */
  purchase(
    mode: Mode,
    body: string,
    idempotencyKey: string | null,
    keyHash: Uint8Array,
    maxAmount: number | null = null,
  ): Promise<PurchaseOutcome> {
    const request = parsePurchaseBody(body);
    return this.purchases.submit({ mode, request, idempotencyKey, keyHash, maxAmount });
  }
}

/** The offset a path names, if it is of the caller's mode. */
async function ownOffset(service: OffsetsService, mode: Mode, id: string): Promise<OffsetRecord | undefined> {
  const row = await service.store.offset(id);
  return row !== undefined && row.mode === mode ? row : undefined;
}

const HANDLERS: Record<Operation, Handler> = {
  async createOffset(service, req, caller) {
    const idempotencyKey = checkIdempotencyKey(req.headers['idempotency-key'], true);
    const maxAmount = checkMaxAmount(req.headers['carbon-max-amount-cents']);
    const { offset, replayed: again, now, emptied } = await service.purchase(caller.mode, req.body, idempotencyKey, caller.hash, maxAmount);
    Object.assign(caller.trace, { offsetId: offset.id, replayed: again, now, emptied });
    const headers: Record<string, string> = jsonHeaders();
    if (again) headers['idempotent-replayed'] = 'true';
    return { status: 201, headers, body: service.toOffset(offset, now) satisfies Offset };
  },

  async createQuote(_service, req, { mode, account, available }) {
    const request = parsePurchaseBody(req.body);
    const { kg, amount_cents: amount } = price(request, account.rate);
    const quote = ok<Quote>({
      object: 'quote',
      livemode: mode === 'live',
      kg,
      amount_cents: amount,
      currency: CURRENCY,
      rate_millicents_per_kg: account.rate,
      available_cents: available!,
      sufficient_balance: available! >= amount,
      requires_review: amount > account.review_limit_cents,
    });
    // Says that a purchase's Carbon-Max-Amount-Cents is checked here (a client may then leave the ceiling to it).
    quote.headers['carbon-max-amount-cents'] = 'checked';
    return quote;
  },

  async listOffsets(service, req, { mode, now }) {
    const query = parseListQuery(req.query);
    const { rows, hasMore } = await listPage(service.store, {
      mode,
      startingAfter: query.starting_after,
      limit: query.limit,
      cursorNote: ' (starting_after)',
      read: (beforeSeq, limit) => service.store.page(mode, { limit, beforeSeq, reference: query.reference }),
    });
    if (rows.some((r) => isDue(r, now))) await service.settleDue(now);
    return ok<OffsetList>({ object: 'list', data: rows.map((r) => service.toOffset(r, now)), has_more: hasMore });
  },

  /** `id` is the raw path segment; one that is not valid percent-encoding names no offset. */
  async getOffset(service, _req, { mode, now, trace }, segment) {
    const id = decodePathSegment(segment ?? '');
    const row = id === null ? undefined : await ownOffset(service, mode, id);
    if (row === undefined) throw new ApiError('resource_missing', `No such offset: '${echoed(id ?? segment ?? '')}'.`, { param: 'id' });
    trace.offsetId = row.id;
    if (isDue(row, now)) await service.settleDue(now);
    return ok<Offset>(service.toOffset(row, now));
  },

  async getBalance(_service, _req, { mode, account, available }) {
    return ok<Balance>({
      object: 'balance',
      livemode: mode === 'live',
      available_cents: available!,
      currency: CURRENCY,
      rate_millicents_per_kg: account.rate,
    });
  },

  async getImpact(service, _req, { mode, now }) {
    const [stored, due] = await Promise.all([service.store.impact(mode), service.store.due(mode, now)]);
    if (due.count > 0) await service.settleDue(now);
    return ok<Impact>({ object: 'impact', livemode: mode === 'live', ...effectiveImpact(stored, due) });
  },
};

/** The spec's Offset for a record (already brought to its state at the time of asking). */
export function renderOffset(row: OffsetRecord, publicBaseUrl: string): Offset {
  return {
    object: 'offset',
    id: row.id,
    livemode: row.mode === 'live',
    status: row.status,
    kg: row.kg,
    amount_cents: row.amount_cents,
    currency: CURRENCY,
    rate_millicents_per_kg: row.rate,
    requested: { kg: row.req_kg, amount_cents: row.req_amount_cents },
    reference: row.reference,
    // Public once placed, and only for live offsets (spec part 2).
    certificate_url: row.status === 'placed' && row.certificate_id !== null ? `${publicBaseUrl}/certificates/${row.certificate_id}` : null,
    created: isoTime(row.created_ms),
    placed: row.placed_ms === null ? null : isoTime(row.placed_ms),
  };
}

/** A path segment decoded, or null when it is not valid percent-encoding (`%ZZ`). */
export function decodePathSegment(segment: string): string | null {
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
