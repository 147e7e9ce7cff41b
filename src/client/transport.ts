import type { ApiRequest, ApiResponse } from '../api/types.js';
import { CarbonConfigError } from './errors.js';

/** Carries one API request to the service and brings back its response. */
export interface Transport {
  request(request: ApiRequest): Promise<ApiResponse>;
  /** The URL a request goes to, as sent (for --verbose); none for the in-process model. */
  url?(request: ApiRequest): string;
  /** Releases what the transport holds (a database handle, sockets); resolves once it is released. */
  close?(): void | Promise<void>;
}

/** Anything that answers an ApiRequest: the in-process service model. */
export interface RequestHandler {
  handle(request: ApiRequest): Promise<ApiResponse>;
}

/** The local engine: calls the service model in this process. Same requests, same answers. */
/**
 * A request as HTTP would carry it: every query value and header text (a JavaScript caller's
 * `starting_after: 123` is "123" over HTTP, and was a number the model did not expect here), so the
 * local engine answers what a server would.
 */
function asSent(request: ApiRequest): ApiRequest {
  const query = asText(request.query);
  const headers = asText(request.headers);
  return query === request.query && headers === request.headers ? request : { ...request, query, headers };
}

/** `record` with each value that is not text (nor absent) as HTTP would write it; `record` itself when all are. */
function asText<T extends Record<string, unknown>>(record: T): T {
  let out = record;
  for (const name in record) {
    const v = record[name];
    if (v === undefined || typeof v === 'string') continue;
    if (out === record) out = { ...record };
    (out as Record<string, unknown>)[name] = Array.isArray(v) ? v.map(String) : String(v);
  }
  return out;
}

export class LocalTransport implements Transport {
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly handler: RequestHandler,
    private readonly onClose: () => unknown = () => {},
  ) {}

  request(request: ApiRequest): Promise<ApiResponse> {
    // Its ledger is closed: said as the client's misuse, not as SQLite's "statement has been finalized".
    if (this.closed) return Promise.reject(new CarbonConfigError('This client was closed: open another to go on.'));
    return this.handler.handle(asSent(request));
  }

  /** Once: a second close (or two at once) waits for the first. */
  close(): Promise<void> {
    this.closing ??= Promise.resolve(this.onClose()).then(() => {});
    this.closed = true;
    return this.closing;
  }
}

/**
 * The local engine on the sandbox's own key (none configured): a `carbon sandbox reset` or a loaded
 * snapshot in another process replaces the sandbox's keys under a command that runs on (`watch`).
 * A 401 to that key asks the sandbox for its key again and, if it changed, sends the request again
 * with it (refused at its key, the first did nothing).
 */
export class OwnKeyTransport implements Transport {
  private current: string;

  constructor(
    private readonly inner: Transport,
    private readonly original: string,
    private readonly ownKey: () => Promise<string | undefined>,
  ) {
    this.current = original;
  }

  async request(request: ApiRequest): Promise<ApiResponse> {
    if (request.headers.authorization !== `Bearer ${this.original}`) return this.inner.request(request);
    const send = (key: string) => this.inner.request({ ...request, headers: { ...request.headers, authorization: `Bearer ${key}` } });
    const response = await send(this.current);
    if (response.status !== 401) return response;
    const fresh = await this.ownKey();
    if (fresh === undefined || fresh === this.current) return response;
    this.current = fresh;
    return send(fresh);
  }

  close(): void | Promise<void> {
    return this.inner.close?.();
  }
}

/** What the deferred transport opens: the local engine's transport, and the key its requests carry. */
export interface Opened {
  transport: Transport;
  apiKey: string;
}

/**
 * The key a client on a `DeferredTransport` is made with: no key of any ledger. The transport
 * puts the key of the ledger it opens in its place.
 */
export const KEY_OF_THE_LEDGER = 'key-of-the-ledger-once-opened';

/**
 * The local engine before its ledger exists. A request the service would refuse whatever the ledger
 * held (`refusal`: a malformed body, a path it does not have) is answered without creating it; the
 * first other request opens the ledger (`open`) and goes to it with the ledger's key in place of
 * KEY_OF_THE_LEDGER (a key given by the caller, `carbon api -H`, is sent as it is).
 */
export class DeferredTransport implements Transport {
  private opened: Promise<Opened> | undefined;

  constructor(
    private readonly refusal: (request: ApiRequest) => ApiResponse | undefined,
    private readonly open: () => Promise<Opened>,
  ) {}

  async request(request: ApiRequest): Promise<ApiResponse> {
    const ours = request.headers.authorization === `Bearer ${KEY_OF_THE_LEDGER}`;
    if (this.opened === undefined && ours) {
      const refused = this.refusal(request);
      if (refused !== undefined) return refused;
    }
    this.opened ??= this.open();
    const { transport, apiKey } = await this.opened;
    if (!ours) return transport.request(request);
    return transport.request({ ...request, headers: { ...request.headers, authorization: `Bearer ${apiKey}` } });
  }

  close(): void {
    void this.opened?.then((o) => o.transport.close?.()).catch(() => {});
  }
}
