import type { IncomingMessage } from 'node:http';
import type { ApiErrorBody, ApiRequest } from '../api/types.js';
import { ApiError, type ErrorCode } from '../service/errors.js';

/**
 * node:http → the API's request: the target parsed into path and query, the body read within its
 * limit, the headers as the service reads them; and the error envelope for what Node refuses.
 */

/** Splits a request target into the path (raw, still percent-encoded) and its query. */
export function parseTarget(target: string): { path: string; query: ApiRequest['query']; rawQuery: string } {
  // An absolute-form target (`GET http://host/api/v1/balance`) is legal HTTP/1.1; keep its path.
  const origin = target.charCodeAt(0) === 47 /* / */ ? null : /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  const rest = origin ? target.slice(origin[0].length) || '/' : target;
  const hash = rest.indexOf('#');
  const noHash = hash === -1 ? rest : rest.slice(0, hash);
  const q = noHash.indexOf('?');
  const path = q === -1 ? noHash : noHash.slice(0, q);
  // No prototype: a parameter named `__proto__` must stay a parameter (and be refused by name).
  const query: ApiRequest['query'] = Object.create(null) as ApiRequest['query'];
  const raw = q === -1 ? '' : noHash.slice(q + 1);
  if (q !== -1) {
    let replaced = false;
    for (const [name, value] of new URLSearchParams(raw)) {
      const prior = query[name];
      query[name] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
      replaced ||= value.includes('\uFFFD');
    }
    if (replaced) notUtf8(raw, query);
  }
  return { path, query, rawQuery: raw };
}

/**
 * URLSearchParams reads bytes that are not UTF-8 (`%FF`, an encoded surrogate) as U+FFFD, as if
 * the caller had sent that character: such a value becomes an unpaired surrogate instead, which
 * the service refuses naming its parameter (422), as it refuses a body's (400) and an
 * Idempotency-Key's (requestHeaders, below). A value that holds U+FFFD itself is kept.
 */
function notUtf8(raw: string, query: ApiRequest['query']): void {
  for (const part of raw.split('&')) {
    const eq = part.indexOf('=');
    const value = eq === -1 ? '' : part.slice(eq + 1);
    try {
      // A `%` not followed by two hex digits is kept as it is, as URLSearchParams keeps it.
      decodeURIComponent(value.replace(/\+/g, ' ').replace(/%(?![0-9a-f]{2})/gi, '%25'));
    } catch {
      const [name] = new URLSearchParams(eq === -1 ? part : part.slice(0, eq)).keys();
      if (name !== undefined) query[name] = '\uD800';
    }
  }
}

export type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/** Reads the body up to `limit` bytes; past it, stops keeping bytes and says so. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
    return Promise.resolve({ kind: 'too_large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        finish({ kind: 'too_large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => finish({ kind: 'ok', body: Buffer.concat(chunks) }));
    req.on('error', () => finish({ kind: 'aborted' }));
    req.on('close', () => finish({ kind: 'aborted' }));
  });
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8 = new TextDecoder('utf-8');
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Request headers as the service reads them: Node joins repeats itself; only Set-Cookie comes as
 * a list. Node reads header bytes as latin1; an Idempotency-Key is text sent as UTF-8, so its
 * bytes are read again as UTF-8 (bytes that are not UTF-8 become an unpaired surrogate, which the
 * service refuses with 400: docs/service-model.md; the rest is kept, so the journal shows `caf�`).
 */
export function requestHeaders(req: IncomingMessage): ApiRequest['headers'] {
  const incoming = req.headers;
  const raw = incoming['idempotency-key'];
  const idem = Array.isArray(raw) ? raw.join(', ') : raw;
  const recode = idem !== undefined && NOT_ASCII.test(idem);
  if (incoming['set-cookie'] === undefined && !recode) return incoming as ApiRequest['headers'];
  const headers: ApiRequest['headers'] = {};
  for (const name in incoming) {
    const value = incoming[name];
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (recode) {
    const bytes = Buffer.from(idem!, 'latin1');
    try {
      headers['idempotency-key'] = utf8Strict.decode(bytes);
    } catch {
      headers['idempotency-key'] = textNotUtf8(bytes);
    }
  }
  return headers;
}

/**
 * Bytes that are not all UTF-8, read as text with an unpaired surrogate (U+D800) for each part that
 * is not: one U+FFFD sent as such (its bytes EF BF BD) would be told from them no more, so then it is
 * that surrogate alone. Stored, a surrogate is written U+FFFD.
 */
function textNotUtf8(bytes: Buffer): string {
  return bytes.includes(REPLACEMENT) ? '\uD800' : utf8.decode(bytes).replaceAll('\uFFFD', '\uD800');
}
const REPLACEMENT = Buffer.from('\uFFFD');

/**
 * Why the request's headers cannot be acted on, or undefined: a header that must come once came
 * more often (Host, Authorization, Idempotency-Key), or HTTP/1.1 came without Host (RFC 9112 §3.2:
 * 400). Node keeps the first Authorization and joins repeated Idempotency-Keys into one (`a, b`):
 * either would act on something the client did not mean, as a repeated Content-Length is refused
 * by the parser. A walk over the raw header list, comparing names by length, then as clients
 * write them, and only then lowercased (about 80 ns a request with eight headers, against 600
 * when every candidate was lowercased).
 */
export function headerProblem(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let host = 0;
  let authorization = 0;
  let idempotency = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && named(name, 'Host', 'host') && ++host > 1) return once('Host');
    if (name.length === 13 && named(name, 'Authorization', 'authorization') && ++authorization > 1) return once('Authorization');
    if (name.length === 15 && named(name, 'Idempotency-Key', 'idempotency-key') && ++idempotency > 1) return once('Idempotency-Key');
  }
  return host === 0 && req.httpVersion === '1.1' ? 'The request has no Host header, which HTTP/1.1 requires.' : undefined;
}
const once = (name: string) => `The request has more than one ${name} header; send it once.`;
const named = (name: string, canonical: string, lower: string) => name === canonical || name === lower || name.toLowerCase() === lower;

export function envelope(code: ErrorCode, message: string): { status: number; body: { error: ApiErrorBody } } {
  const err = new ApiError(code, message);
  return { status: err.status, body: { error: err.toBody() } };
}

/** The error code and message for a request Node could not parse, or that timed out. */
export function clientErrorCode(code: string | undefined): [ErrorCode, string] {
  return code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? ['request_timeout', 'The request was not received in time.']
    : code === 'HPE_HEADER_OVERFLOW'
      ? ['headers_too_large', 'The request headers are too large.']
      : ['malformed_request', 'The request is not valid HTTP.'];
}

/**
 * The headers every answer carries, as name, value pairs (reply.ts, and the raw answers below):
 * never cached, never sniffed, and the sandbox's, so a client (carbon report) can tell it from the service's.
 */
export const EVERY_ANSWER = ['Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff', 'Carbon-Sandbox', 'true'] as const;
const EVERY_ANSWER_LINES = EVERY_ANSWER.map((v, k) => (k % 2 === 0 ? `${v}: ` : `${v}\r\n`)).join('');

/** A whole error response written straight to a socket that has no response object. */
export function rawErrorResponse(code: ErrorCode, message: string, requestId: string): { text: string; status: number } {
  const { status, body } = envelope(code, message);
  const json = JSON.stringify(body);
  const reason = status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return {
    status,
    text:
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `Request-Id: ${requestId}\r\n${EVERY_ANSWER_LINES}Connection: close\r\n\r\n${json}`,
  };
}

/** Why a body sent compressed (`Content-Encoding: gzip`, `br`) is not read: said so, rather than "not valid UTF-8". */
export function compressedBody(req: IncomingMessage): string | undefined {
  const coding = req.headers['content-encoding']?.trim() ?? '';
  if (coding === '' || coding.toLowerCase() === 'identity') return undefined;
  return `Invalid request body: it is sent with Content-Encoding: ${coding.slice(0, 40)}, which this API does not take; send it uncompressed.`;
}
