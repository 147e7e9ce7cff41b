import { API_PREFIX, type ApiRequest, type ApiResponse } from '../api/types.js';
import { CarbonConfigError, CarbonConnectionError } from './errors.js';
import type { Transport } from './transport.js';

export interface HttpTransportOptions {
  /** The API's base address, ending in `/api/v1`. */
  baseUrl: string;
  /** Per-request timeout; a request that takes longer is a network failure (and retried). */
  timeoutMs?: number;
  /** Allow sending keys over plain http:// to a host that is not loopback. */
  allowInsecureHttp?: boolean;
  fetch?: typeof fetch;
}

/** True for localhost, 127.0.0.0/8 and ::1: plain HTTP there never leaves the machine. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The remote engine: the API over HTTP(S) with fetch. */
export class HttpTransport implements Transport {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: HttpTransportOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      // Not echoed: what was typed may hold a key.
      throw new CarbonConfigError(
        `The base URL (${options.baseUrl.length} characters) is not a URL; expected e.g. https://api.example.com/api/v1.`,
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw new CarbonConfigError(
        'The base URL must not carry a user name or password (a key there would travel and show in logs); give the key with CARBON_API_KEY or `carbon config set test-key -`.',
      );
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new CarbonConfigError(`The base URL must use https:// (or http:// to a loopback address), not ${url.protocol}`);
    }
    if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.allowInsecureHttp) {
      throw new CarbonConfigError(
        `Refusing to send an API key over plain http:// to ${url.host}. Use https://, or allow it explicitly with --allow-insecure-http (CARBON_ALLOW_INSECURE_HTTP=1).`,
      );
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The URL a request goes to: the base URL as given, the path under it, and the query. */
  url(request: ApiRequest): string {
    const relative = request.path.startsWith(API_PREFIX) ? request.path.slice(API_PREFIX.length) : request.path;
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(name, v);
    }
    const qs = search.toString();
    return `${this.baseUrl}${relative}${qs ? `?${qs}` : ''}`;
  }

  async request(request: ApiRequest): Promise<ApiResponse> {
    const url = this.url(request);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'carbon-cli' };
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined) continue;
      // A header cannot carry control characters (other than tab): say so, before anything is sent.
      if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value))
        throw new CarbonConfigError(`The ${name} header cannot be sent: it holds a control character.`);
      // HTTP carries bytes: text beyond ASCII (an Idempotency-Key may be any text) goes as UTF-8.
      headers[name] = /[^\x00-\x7f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
    }

    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        method: request.method,
        headers,
        ...(request.body === '' ? {} : { body: request.body }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      const reason = err instanceof Error && err.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : describeCause(err);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const neverSent = (cause?.code !== undefined && NOT_SENT.has(cause.code)) || cause?.message === 'bad port';
      throw new CarbonConnectionError(`Could not reach ${new URL(this.baseUrl).origin}: ${reason}.`, err, neverSent);
    }
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (body === undefined && response.status < 400) {
      throw new CarbonConnectionError(
        `${new URL(this.baseUrl).origin} answered ${response.status} with a body that is not JSON; is the base URL right?`,
      );
    }
    return { status: response.status, headers: responseHeaders, body };
  }
}

/** Failures before any byte of the request left: the server cannot have seen it. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** What people can act on, for the codes undici and the OS give. */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is the server running?)',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed while sending',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host name was not found',
  EAI_AGAIN: 'the host name could not be resolved right now',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  // The server (or something between) closed the connection before the response was complete.
  UND_ERR_SOCKET: 'the connection closed before a response arrived',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers arrived in time',
  UND_ERR_BODY_TIMEOUT: 'the response body stopped arriving',
};

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return CAUSES[cause.code] ?? cause.code;
  // fetch refuses some ports outright (the WHATWG "bad ports": 9, 25, 6000, …).
  if (cause?.message === 'bad port') return 'fetch refuses to connect to that port (a "bad port")';
  return err instanceof Error ? err.message : String(err);
}
