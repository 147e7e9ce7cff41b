import {
  API_PREFIX,
  type ApiRequest,
  type ApiResponse,
  type Balance,
  type Impact,
  type ListParams,
  type Offset,
  type OffsetList,
  type PurchaseParams,
  type Quote,
} from '../api/types.js';
import { randomUUID } from '../platform/random.js';
import { maskKey } from '../service/keys.js';
import {
  apiErrorOf,
  CarbonAnswerError,
  CarbonConfigError,
  CarbonConnectionError,
  CarbonError,
  givenKey,
  missingOffset,
  otherServer,
  UNEXPECTED,
} from './errors.js';
import { PageGuard } from './paging.js';
import { type RetryOptions, type RetryPolicy, responseOutcome, retryDelay, retryPolicy } from './retry.js';
import { expectShape, type Shape } from './shapes.js';
import type { Transport } from './transport.js';
import { type WaitOptions, waitUntilSettled } from './wait.js';

export type { WaitOptions } from './wait.js';

export interface ClientOptions {
  apiKey: string;
  transport: Transport;
  retry?: RetryOptions | undefined;
  /** Replaced in tests to skip real waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Called once per attempt of a request, after its answer (or its failure): for --verbose. */
  onExchange?: (exchange: Exchange) => void;
}

/** One attempt of one request, as --verbose reports it (no key, no body). */
export interface Exchange {
  method: string;
  /** Where it went: the URL as requested over HTTP, or the path and query string given to the in-process model. */
  url: string;
  /** 0 when no answer came (a network failure). */
  status: number;
  ms: number;
  requestId: string | undefined;
  attempt: number;
}

/** A purchase and how it came back. */
export interface Purchase {
  offset: Offset;
  /** True when the service returned a purchase made before this call with the same Idempotency-Key (not one its own lost attempt made). */
  replayed: boolean;
  /** The key the purchase was made with: pass it again to retry safely. */
  idempotencyKey: string;
}

/** What a request may add to its method and path. */
interface RequestExtra {
  /** A name given more than once (`carbon api GET '/offsets?limit=1&limit=3'`) is sent as often, for the API to refuse. */
  query?: ApiRequest['query'];
  headers?: Record<string, string>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The typed client over a Transport: the same for the in-process model and the HTTP API.
 * It authenticates, generates an Idempotency-Key for every purchase (reused on each retry),
 * retries what is safe to retry, and turns error envelopes into CarbonApiError.
 */
export class CarbonClient {
  private readonly policy: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Whether the answers came from a carbon sandbox (`Carbon-Sandbox: true`), and a quote said it checks a purchase's ceiling. */
  fromSandbox = false;
  checksMaxAmount = false;

  constructor(private readonly options: ClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new CarbonConfigError('No API key (an unset variable?): give CarbonClient an apiKey, a ck_test_… or ck_live_… key.');
    this.policy = retryPolicy(options.retry);
    this.sleep = options.sleep ?? sleepFor;
  }

  /** What console.log and JSON.stringify show of a client: its key masked, never whole. */
  toJSON(): { apiKey: string } {
    return { apiKey: maskKey(this.options.apiKey) };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CarbonClient { apiKey: '${maskKey(this.options.apiKey)}' }`;
  }

  /** Releases the transport (the local ledger, closed: awaited, its last writes are in the file). */
  async close(): Promise<void> {
    await this.options.transport.close?.();
  }

  /** What a purchase would buy and cost. Buys nothing. */
  async quote(params: PurchaseParams): Promise<Quote> {
    return (await this.send<Quote>('POST', '/quotes', { body: params }, 'quote')).body;
  }

  /** Buys offsets (a fresh `idempotencyKey` unless given; retries reuse it). `maxAmountCents`: a ceiling a carbon sandbox checks. */
  async buy(params: PurchaseParams, options: { idempotencyKey?: string; maxAmountCents?: number } = {}): Promise<Purchase> {
    const idempotencyKey = givenKey(options.idempotencyKey) ?? randomUUID();
    const headers: Record<string, string> = { 'idempotency-key': idempotencyKey };
    if (options.maxAmountCents !== undefined) headers['carbon-max-amount-cents'] = String(options.maxAmountCents);
    let exchanged: { response: ApiResponse<Offset>; earlierMaybeSent: boolean };
    try {
      exchanged = await this.exchange<Offset>('POST', '/offsets', { body: params, headers });
      expectShape(exchanged.response, 'offset', 'POST', '/offsets');
    } catch (err) {
      // The key to retry with, the one made here included: the outcome may be unknown.
      if (err instanceof CarbonError) err.idempotencyKey ??= idempotencyKey;
      throw err;
    }
    const { response, earlierMaybeSent } = exchanged;
    // A replay that answers a retry of this very call may be the purchase its own lost first
    // attempt made: only a replay no earlier attempt could have caused is an earlier purchase.
    const replayed = response.headers['idempotent-replayed'] === 'true' && !earlierMaybeSent;
    return { offset: response.body, replayed, idempotencyKey };
  }

  /** One page of offsets, newest first. */
  async list(params: ListParams = {}): Promise<OffsetList> {
    const query: Record<string, string> = {};
    if (params.limit !== undefined) query.limit = String(params.limit);
    if (params.starting_after !== undefined) query.starting_after = params.starting_after;
    if (params.reference !== undefined) query.reference = params.reference;
    return (await this.send<OffsetList>('GET', '/offsets', { query }, 'list')).body;
  }

  /**
   * Every offset, newest first, one page at a time: memory stays flat however many there are. A
   * server that repeats a cursor or an offset ends the walk with CarbonPagingError (paging.ts).
   */
  async *listAll(params: Omit<ListParams, 'starting_after'> = {}): AsyncGenerator<Offset> {
    for await (const page of this.listPages(params)) yield* page;
  }

  /** listAll's pages: a walk over a million offsets takes ten thousand steps, not a million (each settles a promise). */
  async *listPages(params: Omit<ListParams, 'starting_after'> = {}): AsyncGenerator<Offset[]> {
    let startingAfter: string | undefined;
    const guard = new PageGuard();
    for (;;) {
      const page = await this.list({ limit: 100, ...params, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) });
      guard.check(page, startingAfter);
      yield page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      startingAfter = last.id;
    }
  }

  async get(id: string): Promise<Offset> {
    // '', '.' and '..' are no path segment: a URL resolves `/offsets/..` to `/api/v1/` and
    // `/offsets/.` to `/offsets/`, which a server may answer 200 (an empty $ID in a script). No
    // offset has such an id, so the answer is the API's 404 for an unknown id, without asking.
    if (id === '' || id === '.' || id === '..') throw missingOffset(id);
    return (await this.send<Offset>('GET', `/offsets/${encodeURIComponent(id)}`, {}, 'offset')).body;
  }

  async balance(): Promise<Balance> {
    return (await this.send<Balance>('GET', '/balance', {}, 'balance')).body;
  }

  async impact(): Promise<Impact> {
    return (await this.send<Impact>('GET', '/impact', {}, 'impact')).body;
  }

  /** Polls an offset until it is placed or refunded; WaitTimeoutError when time runs out first. */
  async waitUntilSettled(id: string, options: WaitOptions = {}): Promise<Offset> {
    return waitUntilSettled((offset) => this.get(offset), id, options, this.sleep);
  }

  /**
   * One request as given, through the same transport and key, answered whatever its status (for
   * `carbon api`): retried as every request is (a POST /offsets with its Idempotency-Key on each
   * attempt), then the last answer returned, a 4xx or 5xx included; no error thrown for it.
   * `earlierMaybeSent`: whether an attempt before that answer may have reached the server.
   */
  async raw(
    method: string,
    path: string,
    options: RequestExtra & { body?: string } = {},
  ): Promise<{ response: ApiResponse; earlierMaybeSent: boolean }> {
    return this.attempts(this.request(method.toUpperCase(), path, options.body, options));
  }

  /** An answer came: --verbose is told, and whether a carbon sandbox gave it (`Carbon-Sandbox: true`) is noted. */
  private answered(response: ApiResponse, report: ReturnType<CarbonClient['reporter']>): void {
    report?.(response.status, response.headers['request-id']);
    this.fromSandbox ||= response.headers['carbon-sandbox'] === 'true';
    this.checksMaxAmount ||= response.headers['carbon-max-amount-cents'] === 'checked';
  }

  /** What --verbose is told of one attempt of `request`, once it is over; undefined when nobody listens. */
  private reporter(request: ApiRequest, attempt: number): ((status: number, requestId: string | undefined) => void) | undefined {
    const onExchange = this.options.onExchange;
    if (onExchange === undefined) return undefined;
    // Timed only when someone listens: the global `performance` loads perf_hooks (~1 ms of start-up).
    const started = performance.now();
    const { transport } = this.options;
    const url = transport.url?.(request) ?? pathAndQuery(request);
    return (status, requestId) => onExchange({ method: request.method, url, status, ms: performance.now() - started, requestId, attempt });
  }

  /** The request as sent: under /api/v1, with the key, and a JSON content type when there is a body. */
  private request(method: string, path: string, body: string | undefined, extra: RequestExtra): ApiRequest {
    return {
      method,
      path: `${API_PREFIX}${path}`,
      query: extra.query ?? {},
      headers: {
        authorization: `Bearer ${this.options.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...extra.headers,
      },
      body: body ?? '',
    };
  }

  private async send<T>(method: string, path: string, extra: RequestExtra & { body?: unknown }, kind: Shape): Promise<ApiResponse<T>> {
    return expectShape((await this.exchange<T>(method, path, extra)).response, kind, method, path);
  }

  /** A request with its retries, a 4xx or 5xx thrown; `earlierMaybeSent`: whether an attempt before the one answered may have reached the server. */
  private async exchange<T>(
    method: string,
    path: string,
    extra: RequestExtra & { body?: unknown } = {},
  ): Promise<{ response: ApiResponse<T>; earlierMaybeSent: boolean }> {
    const request = this.request(method, path, extra.body === undefined ? undefined : JSON.stringify(extra.body), extra);
    const { response, earlierMaybeSent } = await this.attempts(request);
    if (response.status < 400) return { response: response as ApiResponse<T>, earlierMaybeSent };
    const error = apiErrorOf(response);
    if (error.code === UNEXPECTED && (error.status === 404 || error.status === 405))
      throw otherServer(error.status, method, path, earlierMaybeSent);
    // A 4xx is the service saying it did nothing (a 429, a 409); a 5xx may have come after the purchase committed.
    error.earlierMaybeSent = earlierMaybeSent || response.status >= 500;
    throw error;
  }

  /**
   * Sends `request` until its answer is final: a success, a failure retryDelay does not retry, or
   * the last retry's answer, whatever its status. A network failure after the last retry is
   * thrown. `earlierMaybeSent`: whether an attempt before the one answered may have reached the server.
   */
  private async attempts(request: ApiRequest): Promise<{ response: ApiResponse; earlierMaybeSent: boolean }> {
    // Whether any attempt may have reached the server (so a purchase may have been made).
    let maybeSent = false;
    for (let attempt = 1; ; attempt++) {
      const report = this.reporter(request, attempt);
      let delay: number | null;
      try {
        const response = await this.options.transport.request(request);
        this.answered(response, report);
        delay = response.status < 400 ? null : retryDelay(responseOutcome(response), attempt, this.policy);
        if (delay === null) return { response, earlierMaybeSent: maybeSent };
        maybeSent ||= response.status >= 500;
      } catch (err) {
        // An answer of another service (--verbose told its status): trying again does not change it.
        if (err instanceof CarbonAnswerError) report?.(err.status ?? 0, undefined);
        if (!(err instanceof CarbonConnectionError) || err instanceof CarbonAnswerError) throw err;
        report?.(0, undefined);
        maybeSent ||= !err.neverSent;
        err.neverSent = !maybeSent;
        delay = retryDelay({ kind: 'network' }, attempt, this.policy);
        if (delay === null) throw err;
      }
      await this.sleep(delay);
    }
  }
}

/** A request's path and query string, as the in-process model is given them. */
function pathAndQuery(request: ApiRequest): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(name, v);
  }
  const query = search.toString();
  return query === '' ? request.path : `${request.path}?${query}`;
}
