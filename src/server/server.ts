import { type IncomingMessage, type Server, ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { API_PREFIX, type ApiErrorBody, type ApiRequest, type ApiResponse } from '../api/types.js';
import { ApiError, type ErrorCode } from '../service/errors.js';
import { maskKey, requestId } from '../service/keys.js';
import { LedgerError } from '../service/ledger.js';
import { Sandbox } from '../service/sandbox.js';
import type { OffsetsService } from '../service/service.js';
import { certificateNotFoundPage, certificatePage } from './certificate.js';

/**
 * `carbon serve`: the service model on a port. This file is only an adapter between node:http
 * and `service.handle()`; auth, validation, idempotency and the error envelope stay in the
 * service, so a served sandbox answers exactly as the in-process engine does. What only a
 * server has (a body limit, timeouts, malformed requests, shutdown, certificate pages) lives here.
 */

export interface ServeOptions {
  /** Interface to bind; the CLI passes 127.0.0.1. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The data directory (shared with the local engine). */
  dataDir: string;
  /** Origin for certificate URLs; default http://HOST:PORT. */
  publicUrl?: string;
  /** Access log and lifecycle lines (the CLI passes a stderr writer). */
  log?: (line: string) => void;
  /** Largest request body accepted; default 64 KiB. A larger one is 413 `body_too_large`. */
  bodyLimitBytes?: number;
  /** Time allowed to receive a request's headers; default 10 s (slow-loris defence). */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request, body included; default 30 s. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept; default 5 s. */
  keepAliveTimeoutMs?: number;
  /** On close(), requests still in flight after this long are cut off; default 10 s. */
  shutdownGraceMs?: number;
}

export interface RunningServer {
  /** The API's base address: http://host:port/api/v1. */
  url: string;
  /** http://host:port */
  origin: string;
  host: string;
  port: number;
  dataDir: string;
  /** The sandbox the server serves (its keys, for the banner). Closed by close(). */
  sandbox: Sandbox;
  /** Requests being received or answered right now. */
  inFlight(): number;
  /** Graceful: stop accepting, finish requests in flight, then close the ledger. Idempotent. */
  close(): Promise<void>;
  /** Like close(), but cuts requests in flight off at once (a second Ctrl-C). */
  terminate(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;
const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  shutdownGraceMs: 10_000,
} as const;

const CERTIFICATE_PATH = /^\/certificates\/([^/?]+)$/;
const CERTIFICATE_ID = /^cert_[0-9a-f]{24}$/;

/** Header names as the spec writes them (`Request-Id`), for people reading curl -i. */
function canonicalHeader(name: string): string {
  let canonical = canonicalHeaders.get(name);
  if (canonical === undefined) {
    canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    // The names are the service's own few; the bound only guards against a surprise.
    if (canonicalHeaders.size < 256) canonicalHeaders.set(name, canonical);
  }
  return canonical;
}
const canonicalHeaders = new Map<string, string>();

/** Set by send() itself, below whatever a response's headers say. */
const OWN_HEADERS = new Set(['content-type', 'content-length', 'cache-control', 'x-content-type-options']);

/**
 * The response, with what the access log needs of its request as fields declared up front: one
 * shape for every response, not a closure per request nor properties added to Node's own class
 * (each such store took V8's slow path, a map transition per request).
 */
class Answered extends ServerResponse {
  started = 0;
  method = '';
  path = '';
  /** Set by send(), as getHeader() does not see headers given to writeHead(). */
  requestId: string | undefined = undefined;
}

/** `new Date().toISOString()`, with the part up to the second made once a second. */
let isoSecond = Number.NaN;
let isoPrefix = '';
function isoNow(): string {
  const now = Date.now();
  const ms = now % 1000;
  const second = now - ms;
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second).toISOString().slice(0, -4); // …T20:48:02.
  }
  return `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

function envelope(code: ErrorCode, message: string): { status: number; body: { error: ApiErrorBody } } {
  const err = new ApiError(code, message);
  return { status: err.status, body: { error: err.toBody() } };
}

/**
 * What the access log shows for a request's key: masked, never the key itself, and in ASCII
 * (`ck_test_...4eUO`): one `…` in a line makes the log's text two-byte, which took a third of the
 * cost of logging a request under load.
 */
function keyLabel(authorization: string | undefined): string {
  if (authorization === undefined) return '-';
  let label = keyLabels.get(authorization);
  if (label === undefined) {
    label = maskedLabel(authorization);
    // A client sends the same header again and again; a few are remembered (cleared when full).
    if (keyLabels.size >= 64) keyLabels.clear();
    keyLabels.set(authorization, label);
  }
  return label;
}
const keyLabels = new Map<string, string>();

function maskedLabel(authorization: string): string {
  if (authorization.trim() === '') return '-';
  const m = /^Bearer +(\S+) *$/i.exec(authorization);
  return m?.[1] === undefined ? '[not a bearer key]' : maskKey(m[1]).replace('…', '...');
}

const PRINTABLE_PATH = /^[\x21-\x7e]{0,200}$/;

/** The path for the log: bounded, and printable (a raw request line can carry odd bytes). */
function logPath(path: string): string {
  if (PRINTABLE_PATH.test(path)) return path;
  const clean = path.replace(/[^\x21-\x7e]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/** Splits a request target into the path (raw, still percent-encoded) and its query. */
export function parseTarget(target: string): { path: string; query: Record<string, string | string[] | undefined> } {
  // An absolute-form target (`GET http://host/api/v1/balance`) is legal HTTP/1.1; keep its path.
  const origin = target.charCodeAt(0) === 47 /* / */ ? null : /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  const rest = origin ? target.slice(origin[0].length) || '/' : target;
  const hash = rest.indexOf('#');
  const noHash = hash === -1 ? rest : rest.slice(0, hash);
  const q = noHash.indexOf('?');
  const path = q === -1 ? noHash : noHash.slice(0, q);
  // No prototype: a parameter named `__proto__` must stay a parameter (and be refused by name).
  const query: Record<string, string | string[] | undefined> = Object.create(null) as Record<string, string | string[] | undefined>;
  if (q !== -1) {
    for (const [name, value] of new URLSearchParams(noHash.slice(q + 1))) {
      const prior = query[name];
      query[name] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
    }
  }
  return { path, query };
}

interface Pending {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: ApiRequest['query'];
  body: string;
}

type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/** Reads the body up to `limit` bytes; past it, stops keeping bytes and says so. */
function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Starts serving the sandbox in `dataDir`. Resolves once listening; rejects if the port or the ledger cannot be had. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  // A log that fails (stderr closed under us) must not take a request, or the server, down with it.
  const log = (line: string): void => {
    try {
      options.log?.(line);
    } catch {
      // Nowhere left to report it.
    }
  };
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const headersTimeout = options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs, headersTimeout);
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs;
  const graceMs = options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs;

  // Opened first: a data directory that cannot be used should fail the start, not the first request.
  const sandbox = Sandbox.open(options.dataDir);
  let service: OffsetsService | null = null;
  let closing = false;
  let ledgerClosed = false;
  let inFlight = 0;

  const server: Server<typeof IncomingMessage, typeof Answered> = createServer({
    headersTimeout,
    requestTimeout,
    keepAliveTimeout,
    // The timeouts above are enforced by a periodic sweep; its default (30 s) would let them run long.
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
    // A request without Host is harmless here; let it reach the envelope instead of Node's bare 400.
    requireHostHeader: false,
    ServerResponse: Answered,
  });
  server.setTimeout(requestTimeout + keepAliveTimeout + 60_000);

  function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string, contentType: string): void {
    if (res.headersSent || res.destroyed) return;
    // One writeHead() with every header, not a setHeader() apiece (each one validates and
    // stores its header in a map that writeHead() then walks again).
    const list: string[] = [];
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (OWN_HEADERS.has(lower) || (closing && lower === 'connection')) continue;
      list.push(canonicalHeader(name), headers[name]!);
    }
    list.push('Content-Type', contentType, 'Content-Length', String(Buffer.byteLength(body)), 'Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff');
    if (closing) list.push('Connection', 'close');
    const requestId = headers['request-id'];
    if (requestId !== undefined && res instanceof Answered) res.requestId = requestId;
    res.writeHead(status, list);
    res.end(body);
  }

  function sendJson(res: ServerResponse, response: ApiResponse): void {
    send(res, response.status, response.headers, JSON.stringify(response.body), 'application/json');
  }

  function sendError(res: ServerResponse, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
    const { status, body } = envelope(code, message);
    sendJson(res, { status, headers: { 'request-id': requestId(), ...headers }, body });
  }

  /** Answers anything the service itself could not: a storage failure or a bug. Logged, never shown. */
  function sendFailure(res: ServerResponse, err: unknown): void {
    const id = requestId();
    if (err instanceof LedgerError) {
      log(`error ${id}: ${err.message} ${err.hint}`);
      // Storage trouble (locked, full, unwritable) is a state of the service, not of the request.
      const { status, body } = envelope('service_unavailable', 'The service cannot reach its ledger right now. Try again shortly.');
      sendJson(res, { status, headers: { 'request-id': id, 'retry-after': '1' }, body });
      return;
    }
    log(`error ${id}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    const { status, body } = envelope('internal_error', 'The server failed to answer this request. It has been logged.');
    sendJson(res, { status, headers: { 'request-id': id }, body });
  }

  function index(res: ServerResponse): void {
    sendJson(res, {
      status: 200,
      headers: { 'request-id': requestId() },
      body: {
        object: 'api',
        name: 'carbon offsets sandbox',
        version: 'v1',
        base_url: running.url,
        documentation: 'openapi.yaml in the carbon repository describes every operation.',
        endpoints: [
          `POST ${API_PREFIX}/offsets`,
          `GET ${API_PREFIX}/offsets`,
          `GET ${API_PREFIX}/offsets/{id}`,
          `POST ${API_PREFIX}/quotes`,
          `GET ${API_PREFIX}/balance`,
          `GET ${API_PREFIX}/impact`,
          'GET /certificates/{certificate_id}',
        ],
      },
    });
  }

  function certificate(res: ServerResponse, svc: OffsetsService, id: string): void {
    let certId = id;
    try {
      certId = decodeURIComponent(id);
    } catch {
      // Not valid percent-encoding: it names no certificate; shown escaped as it came.
    }
    const row = CERTIFICATE_ID.test(certId) ? svc.ledger.offsetByCertificate(certId) : undefined;
    const offset = row === undefined ? undefined : svc.toOffset(row);
    const headers = {
      'request-id': requestId(),
      // The page is static HTML: no script, no outside resource, only its own inline style.
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
    };
    if (offset === undefined || offset.status !== 'placed' || !offset.livemode) {
      send(res, 404, headers, certificateNotFoundPage(certId), 'text/html; charset=utf-8');
      return;
    }
    send(res, 200, headers, certificatePage(offset, certId), 'text/html; charset=utf-8');
  }

  /** The access log's line for a request, once its response is over (sent, or cut off). */
  function onClose(this: ServerResponse): void {
    const res = this as Answered;
    const req = res.req;
    inFlight--;
    const ms = (performance.now() - res.started).toFixed(1);
    const status = res.writableFinished ? String(res.statusCode) : `${res.headersSent ? res.statusCode : '-'} (aborted)`;
    const requestId = res.requestId ?? res.getHeader('request-id');
    log(`${isoNow()} ${res.method} ${logPath(res.path)} ${status} ${ms}ms key=${keyLabel(req.headers.authorization)}${typeof requestId === 'string' ? ` ${requestId}` : ''}`);
    // Shutting down: a connection whose request just ended is idle now; let it go.
    if (closing) server.closeIdleConnections();
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const answered = res as Answered;
    answered.started = performance.now();
    const method = req.method ?? 'GET';
    const { path, query } = parseTarget(req.url ?? '/');
    answered.method = method;
    answered.path = path;
    inFlight++;
    res.on('close', onClose);

    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3):
    // it joins this turn's batch at once, without a Promise or waiting for its end.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      enqueue(req, res, method, path, query, '');
      return;
    }
    readBody(req, bodyLimit)
      .then((result) => {
        if (result.kind === 'aborted') return;
        if (result.kind === 'too_large') {
          // Stop keeping bytes; answer, close the connection, and drain briefly so the client can
          // read the 413 rather than a reset (a reset can overtake an answer still in flight).
          res.setHeader('Connection', 'close');
          sendError(res, 'body_too_large', `The request body is larger than ${bodyLimit} bytes.`);
          req.resume();
          res.on('finish', () => setTimeout(() => req.socket.destroy(), 1_000).unref());
          return;
        }
        let body: string;
        try {
          body = utf8.decode(result.body);
        } catch {
          sendError(res, 'invalid_json', 'Invalid request body: it is not valid UTF-8.');
          return;
        }
        enqueue(req, res, method, path, query, body);
      })
      .catch((err: unknown) => sendFailure(res, err));
  }

  /**
   * Requests read in one turn of the event loop are answered together at its end (setImmediate
   * runs after the turn's I/O callbacks): one synchronous run, so the ledger checks once whether
   * another process has committed (PRAGMA data_version) for the whole batch instead of once a
   * request. That check still comes after every request in the batch was read, so an answer
   * never misses a commit that finished before its request arrived.
   */
  let batch: Pending[] = [];
  function enqueue(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: ApiRequest['query'], body: string): void {
    if (batch.push({ req, res, method, path, query, body }) === 1) setImmediate(drain);
  }
  function drain(): void {
    const pending = batch;
    batch = [];
    for (const p of pending) {
      try {
        answer(p.req, p.res, p.method, p.path, p.query, p.body);
      } catch (err) {
        sendFailure(p.res, err);
      }
    }
  }

  function answer(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: ApiRequest['query'], body: string): void {
    const svc = service;
    if (svc === null || ledgerClosed) {
      sendError(res, 'service_unavailable', 'The server is shutting down.', { 'retry-after': '1' });
      return;
    }
    const upper = method.toUpperCase();
    try {
      const cert = CERTIFICATE_PATH.exec(path);
      if (cert && (upper === 'GET' || upper === 'HEAD')) {
        certificate(res, svc, cert[1]!);
        return;
      }
      // Only at `/`: under /api/v1 everything is the service's, so both engines answer alike.
      if (path === '/' && (upper === 'GET' || upper === 'HEAD')) {
        index(res);
        return;
      }
      // Node joins repeated request headers itself; only Set-Cookie comes as a list.
      const incoming = req.headers;
      let headers = incoming as Record<string, string | undefined>;
      if (incoming['set-cookie'] !== undefined) {
        headers = {};
        for (const name in incoming) {
          const value = incoming[name];
          headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
      }
      const request: ApiRequest = { method, path, query, headers, body };
      sendJson(res, svc.handle(request));
    } catch (err) {
      sendFailure(res, err);
    }
  }

  const handleRequest = (req: IncomingMessage, res: ServerResponse) => {
    try {
      onRequest(req, res);
    } catch (err) {
      sendFailure(res, err);
    }
  };
  server.on('request', handleRequest);

  // `Expect: 100-continue`: refuse an oversized body before the client sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = req.headers['content-length'];
    if (declared === undefined || !/^\d+$/.test(declared) || Number(declared) <= bodyLimit) res.writeContinue();
    handleRequest(req, res);
  });
  // Any other `Expect` value: Node would answer a bare 417 outside the envelope. The expectation
  // is ignored instead (RFC 9110 allows it) and the request answered as usual.
  server.on('checkExpectation', handleRequest);

  // Requests Node could not parse, or that timed out: answered in the envelope, then closed.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    const [code, message]: [ErrorCode, string] =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['request_timeout', 'The request was not received in time.']
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? ['headers_too_large', 'The request headers are too large.']
          : ['malformed_request', 'The request is not valid HTTP.'];
    if (current !== undefined) {
      // A request is under way (its body broke off or took too long): answer through its
      // response, so the access log still has exactly one line for it.
      current.setHeader('Connection', 'close');
      current.on('finish', () => setTimeout(() => socket.destroy(), 1_000).unref());
      sendError(current, code, message);
      return;
    }
    const { status, body } = envelope(code, message);
    const json = JSON.stringify(body);
    const id = requestId();
    const reason = status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
        `Request-Id: ${id}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${json}`,
    );
    setTimeout(() => socket.destroy(), 1_000).unref();
    log(`${isoNow()} - - ${status} key=- ${id} (${err.code ?? err.message})`);
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    sandbox.close();
    throw err;
  }
  server.on('error', (err) => log(`server error: ${err.message}`));

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  const origin = `http://${hostForUrl}:${port}`;
  service = sandbox.service({ publicBaseUrl: options.publicUrl ?? origin });

  let closed: Promise<void> | null = null;
  const running: RunningServer = {
    url: `${origin}${API_PREFIX}`,
    origin,
    host: options.host,
    port,
    dataDir: options.dataDir,
    sandbox,
    inFlight: () => inFlight,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        log(inFlight > 0 ? `shutting down: finishing ${inFlight} request(s) in flight` : 'shutting down');
        const force = setTimeout(() => {
          log(`shutdown: cutting off ${inFlight} request(s) still in flight after ${graceMs} ms`);
          server.closeAllConnections();
        }, graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          ledgerClosed = true;
          try {
            sandbox.close();
          } catch (err) {
            log(`error closing the ledger: ${err instanceof Error ? err.message : String(err)}`);
          }
          log('closed');
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
    terminate() {
      const done = running.close();
      server.closeAllConnections();
      return done;
    },
  };
  log(`listening on ${running.url} (data: ${options.dataDir})`);
  return running;
}

/**
 * Closes `server` gracefully on SIGINT or SIGTERM; a second signal cuts requests in flight off
 * at once. The process then ends on its own once nothing is left open (no process.exit here:
 * the CLI owns the exit). Returns a function that removes the handlers.
 */
export function closeOnSignals(
  server: RunningServer,
  options: { signals?: NodeJS.Signals[]; log?: (line: string) => void; onClosed?: () => void } = {},
): () => void {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      options.log?.(`${signal}: closing (send it again to stop at once)`);
      void server.close().then(() => {
        remove();
        options.onClosed?.();
      });
    } else {
      options.log?.(`${signal}: stopping now`);
      void server.terminate();
    }
  };
  const remove = () => {
    for (const s of signals) process.off(s, handler);
  };
  for (const s of signals) process.on(s, handler);
  return remove;
}
