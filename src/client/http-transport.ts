import { API_PREFIX, type ApiRequest, type ApiResponse } from '../api/types.js';
import { CarbonAnswerError, CarbonConfigError, CarbonConnectionError, shownValue } from './errors.js';
import type { Transport } from './transport.js';

export interface HttpTransportOptions {
  /** The API's base address, ending in `/api/v1`. */
  baseUrl: string;
  /** Per-request timeout; a request that takes longer is a network failure (and retried). */
  timeoutMs?: number;
  /** Allow sending keys over plain http:// to a host that is not loopback. */
  allowInsecureHttp?: boolean;
  /** A fetch to send requests with (a proxy's, a test's); by default node:http(s), loaded on the first request. */
  fetch?: typeof fetch;
}

/** An answer as the transport reads it, whichever way it was sent. */
export interface Received {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** True for localhost, 127.0.0.0/8 and ::1: plain HTTP there never leaves the machine. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The remote engine: the API over HTTP(S), with node:http(s) (a CLI run that asks the live API
 * once does not load fetch's undici: 70 ms of a start here, BENCHMARKS.md), or a fetch given.
 */
export class HttpTransport implements Transport {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch | undefined;

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
    // Each request's path follows it: a query or a fragment would end up before the path.
    if (/[?#]/.test(options.baseUrl))
      throw new CarbonConfigError("The base URL must not have a query (?) or a fragment (#): every request's path follows it.");
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new CarbonConfigError(`The base URL must use https:// (or http:// to a loopback address), not ${url.protocol}`);
    }
    if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.allowInsecureHttp) {
      throw new CarbonConfigError(
        `Refusing to send an API key over plain http:// to ${url.host}. Use https://, or allow it explicitly: --allow-insecure-http or CARBON_ALLOW_INSECURE_HTTP=1 (the library's HttpTransport: allowInsecureHttp).`,
      );
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    // A deadline a timer takes (AbortSignal.timeout refuses NaN, Infinity and huge values with ERR_OUT_OF_RANGE,
    // which read as a network failure that may have bought): refused here instead, before any request.
    if (!Number.isInteger(this.timeoutMs) || this.timeoutMs < 1 || this.timeoutMs > MAX_TIMEOUT_MS)
      throw new CarbonConfigError(
        `timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, not ${shownValue(options.timeoutMs)}.`,
      );
    this.fetchImpl = options.fetch;
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
      // A header cannot carry control characters (other than tab), nor white space at either end (HTTP strips it: an
      // Idempotency-Key ` k1` would arrive as `k1`, another key): say so, before anything is sent, as the local engine refuses it.
      if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value))
        throw new CarbonConfigError(`The ${name} header cannot be sent: it holds a control character.`);
      if (/^\s|\s$/.test(value))
        throw new CarbonConfigError(`The ${name} header cannot be sent: it has white space at either end, which HTTP strips.`);
      // HTTP carries bytes: text beyond ASCII (an Idempotency-Key may be any text) goes as UTF-8.
      headers[name] = /[^\x00-\x7f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
    }

    let received: Received;
    try {
      const init = { method: request.method, headers, body: request.body, signal: AbortSignal.timeout(this.timeoutMs) };
      received = this.fetchImpl === undefined ? await sendHttp(url, init) : await sendFetch(this.fetchImpl, url, init);
    } catch (err) {
      const { code, message } = causeOf(err);
      // A TLS handshake that failed (a certificate refused, a plain-HTTP server) sent nothing of the request either.
      const neverSent =
        (code !== undefined && (NOT_SENT.has(code) || Object.hasOwn(CERTIFICATE, code))) || plainHttp(err) || message === 'bad port';
      throw new CarbonConnectionError(connectionFailure(new URL(this.baseUrl).origin, err, this.timeoutMs), err, neverSent);
    }
    const { status, headers: responseHeaders, text } = received;
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    // A HEAD is answered without a body, as it should be.
    if (body === undefined && status < 400 && !(request.method.toUpperCase() === 'HEAD' && text === '')) {
      throw new CarbonAnswerError(
        `${new URL(this.baseUrl).origin} answered ${status} with a body that is not JSON; is the base URL right?`,
        status,
      );
    }
    return { status, headers: responseHeaders, body };
  }
}

/** The longest deadline a request may have (a timer's limit: about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Why a request to origin got no answer, as one sentence people can act on (`timeoutMs`: the deadline it had). */
export function connectionFailure(origin: string, err: unknown, timeoutMs: number): string {
  const timedOut = [err, (err as { cause?: unknown }).cause].some((e) => e instanceof Error && e.name === 'TimeoutError');
  if (timedOut) return `Could not reach ${origin}: timed out after ${timeoutMs} ms.`;
  const { code } = causeOf(err);
  // Something answered, but not in HTTP (llhttp's parse errors): another service on that port.
  if (code?.startsWith('HPE_')) return `${origin} answered in something other than HTTP (${code}); is the base URL right?`;
  if (plainHttp(err)) return `${origin} did not answer in TLS (${code}); is it http:// rather than https://?`;
  if (code !== undefined && Object.hasOwn(CERTIFICATE, code))
    return `Could not reach ${origin}: its TLS certificate (${code}) ${CERTIFICATE[code]}.`;
  return `Could not reach ${origin}: ${describeCause(err)}.`;
}

interface Outgoing {
  method: string;
  headers: Record<string, string>;
  /** '' for none. */
  body: string;
  signal: AbortSignal;
}

/** One request with node:http or node:https, loaded when first asked for. */
export function sendHttp(url: string, out: Outgoing): Promise<Received> {
  const target = new URL(url);
  const http = process.getBuiltinModule(target.protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
  const headers = out.body === '' ? out.headers : { ...out.headers, 'content-length': String(Buffer.byteLength(out.body)) };
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: out.method, headers, signal: out.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      // Cut off before its end without an error of its own: as fetch says it.
      res.on('close', () => res.complete || reject(Object.assign(new Error('aborted'), { code: 'UND_ERR_SOCKET' })));
      res.on('end', () => {
        const received: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) received[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: res.statusCode ?? 0, headers: received, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    // Node's "socket hang up": the connection closed before any answer (fetch's UND_ERR_SOCKET).
    req.on('error', (err) =>
      reject(err.message === 'socket hang up' ? Object.assign(new Error(err.message, { cause: err }), { code: 'UND_ERR_SOCKET' }) : err),
    );
    // A Buffer, so the headers go as their own bytes (latin1): with a string body, Node writes them in its encoding.
    req.end(out.body === '' ? undefined : Buffer.from(out.body, 'utf8'));
  });
}

/** One request with the fetch the transport was given. */
async function sendFetch(fetchImpl: typeof fetch, url: string, out: Outgoing): Promise<Received> {
  const { body, ...init } = out;
  const response = await fetchImpl(url, { ...init, ...(body === '' ? {} : { body }) });
  const text = await response.text();
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, text };
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

/** A TLS hello answered in plain HTTP: OpenSSL's "wrong version number", in the handshake. */
function plainHttp(err: unknown): boolean {
  const { code, message } = causeOf(err);
  return code === 'EPROTO' && /wrong version number/.test(message ?? String((err as Error).message));
}

/** Why the server's TLS certificate was refused (the handshake failed: nothing of the request was sent). */
const UNTRUSTED = "is not signed by a CA this machine trusts; if your own CA signed it, name that CA's file in NODE_EXTRA_CA_CERTS";
const CERTIFICATE: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED,
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED,
  CERT_HAS_EXPIRED: 'has expired',
  CERT_NOT_YET_VALID: 'is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'is for another host name',
};

/** The system's or undici's code, on the error itself (node:http) or on its cause (fetch). */
function causeOf(err: unknown): { code?: string; message?: string } {
  const e = err as { code?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof e.code === 'string' && e.code !== 'ABORT_ERR' ? e.code : e.cause?.code;
  const message = e.cause?.message;
  return { ...(typeof code === 'string' ? { code } : {}), ...(typeof message === 'string' ? { message } : {}) };
}

function describeCause(err: unknown): string {
  const { code, message } = causeOf(err);
  if (code) return CAUSES[code] ?? code;
  // fetch refuses some ports outright (the WHATWG "bad ports": 9, 25, 6000, …).
  if (message === 'bad port') return 'fetch refuses to connect to that port (a "bad port")';
  return err instanceof Error ? err.message : String(err);
}
