import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { API_PREFIX, type ApiRequest } from '../api/types.js';
import type { ErrorCode } from '../service/errors.js';
import { requestId } from '../service/keys.js';
import { routeList } from '../service/routes.js';
import { Sandbox } from '../service/sandbox.js';
import type { OffsetsService } from '../service/service.js';
import { LedgerError } from '../store/ledger-error.js';
import type { StoreTarget } from '../store/open.js';
import { Answered, accessLine, isoNow } from './access-log.js';
import { ServerFaults } from './faults.js';
import { clientErrorCode, envelope, parseTarget, rawErrorResponse, readBody, repeatedHeader, requestHeaders, send, sendJson } from './http.js';
import { CERTIFICATE_PATH, certificate } from './pages/certificate-route.js';
import { recordPageUrl } from './pages/developer/address.js';
import { handlePage, isPagePath } from './pages/developer/routes.js';
import { newLoginToken } from './pages/developer/session.js';

/**
 * `carbon serve`: the service model on a port. This file wires the parts: the HTTP adapter
 * (http.ts), the access log (access-log.ts), the pages (pages/), and the lifecycle (listen,
 * drain, close; signals.ts). Auth, validation, idempotency and the error envelope stay in the
 * service, so a served sandbox answers exactly as the in-process engine does.
 */

export interface ServeOptions {
  /** Interface to bind; the CLI passes 127.0.0.1. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The data directory (shared with the local engine); the ledger lives here unless `store` says otherwise. */
  dataDir: string;
  /** Where the ledger lives; default SQLite in `dataDir`. */
  store?: StoreTarget;
  /** Origin for certificate URLs; default http://HOST:PORT. */
  publicUrl?: string;
  /** The wall clock under the model's (default Date.now): a test holds it still and moves the model's clock itself. */
  clock?: () => number;
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
  /** The developer page's address with a one-time login token (valid for a day, on any instance sharing the store). */
  developerPageUrl: string;
  /** Requests being received or answered right now. */
  inFlight(): number;
  /** Graceful: stop accepting, finish requests in flight, then close the ledger. Idempotent. */
  close(): Promise<void>;
  /** Like close(), but cuts requests in flight off at once (a second Ctrl-C). */
  terminate(): Promise<void>;
}

export { closeOnSignals } from './signals.js';
export { parseTarget } from './http.js';

export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;
const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  shutdownGraceMs: 10_000,
} as const;

interface Pending {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: ApiRequest['query'];
  body: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Starts serving the sandbox. Resolves once listening; rejects if the port or the ledger cannot be had. */
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

  // Opened first: a ledger that cannot be used should fail the start, not the first request.
  const sandbox = await Sandbox.open(options.store ?? { kind: 'sqlite', dir: options.dataDir }, options.clock);
  // The developer page's one-time login token, made before the first request can arrive.
  const loginToken = await newLoginToken(sandbox.store, Date.now()).catch(async (err: unknown) => {
    await sandbox.close();
    throw err;
  });
  const faults = new ServerFaults(sandbox.store);
  let pageOrigin = '';
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

  function sendError(res: ServerResponse, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
    const { status, body } = envelope(code, message);
    sendJson(res, { status, headers: { 'request-id': requestId(), ...headers }, body }, closing);
  }

  /** Answers anything the service itself could not: a storage failure or a bug. Logged, never shown. */
  function sendFailure(res: ServerResponse, err: unknown): void {
    const id = requestId();
    if (err instanceof LedgerError) {
      log(`error ${id}: ${err.message} ${err.hint}`);
      // Storage trouble (locked, full, unreachable) is a state of the service, not of the request.
      const { status, body } = envelope('service_unavailable', 'The service cannot reach its ledger right now. Try again shortly.');
      sendJson(res, { status, headers: { 'request-id': id, 'retry-after': '1' }, body }, closing);
      return;
    }
    log(`error ${id}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    const { status, body } = envelope('internal_error', 'The server failed to answer this request. It has been logged.');
    sendJson(res, { status, headers: { 'request-id': id }, body }, closing);
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
        endpoints: [...routeList(), 'GET /certificates/{certificate_id}', 'GET /healthz'],
      },
    }, closing);
  }

  /** GET /healthz: 200 while the ledger answers, else 503 (for load balancers). */
  async function health(res: ServerResponse): Promise<void> {
    const ok = !closing && (await sandbox.store.healthy());
    sendJson(res, {
      status: ok ? 200 : 503,
      headers: { 'request-id': requestId(), ...(ok ? {} : { 'retry-after': '1' }) },
      body: { status: ok ? 'ok' : closing ? 'draining' : 'unavailable', store: sandbox.store.kind },
    }, closing);
  }

  /** The access log's line for a request, once its response is over (sent, or cut off). */
  function onClose(this: ServerResponse): void {
    inFlight--;
    log(accessLine(this as Answered));
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
      enqueue({ req, res, method, path, query, body: '' });
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
        enqueue({ req, res, method, path, query, body });
      })
      .catch((err: unknown) => sendFailure(res, err));
  }

  /**
   * Requests read in one turn of the event loop are answered together at its end (setImmediate
   * runs after the turn's I/O callbacks), so the store checks once whether another process has
   * committed for the whole batch instead of once a request (BENCHMARKS.md: GET /balance). That
   * check still comes after every request in the batch was read, so an answer never misses a
   * commit that finished before its request arrived.
   */
  let batch: Pending[] = [];
  function enqueue(p: Pending): void {
    if (batch.push(p) === 1) setImmediate(drain);
  }
  function drain(): void {
    const pending = batch;
    batch = [];
    // The fault setting (`carbon sandbox faults`), read once a batch like the freshness check.
    const config = faults.load();
    config.catch(() => {}); // Each request that needs it reports a failure itself.
    for (const p of pending) answer(p, config).catch((err: unknown) => sendFailure(p.res, err));
  }

  async function answer({ req, res, method, path, query, body }: Pending, config: ReturnType<ServerFaults['load']>): Promise<void> {
    const svc = service;
    if (svc === null || ledgerClosed) {
      sendError(res, 'service_unavailable', 'The server is shutting down.', { 'retry-after': '1' });
      return;
    }
    const repeated = repeatedHeader(req.rawHeaders);
    if (repeated !== undefined) return sendError(res, 'malformed_request', `The request has more than one ${repeated} header; send it once.`);
    const upper = method.toUpperCase();
    const headers = requestHeaders(req);
    if (isPagePath(upper, path, headers.accept)) {
      const page = await handlePage(sandbox, pageOrigin, { method, path, query, headers, body });
      send(res, page.status, { 'request-id': requestId(), ...page.headers }, page.body, page.contentType, closing);
      return;
    }
    if (upper === 'GET' || upper === 'HEAD') {
      const cert = CERTIFICATE_PATH.exec(path);
      if (cert) return certificate(res, svc, cert[1]!, closing);
      // Only at `/` and `/healthz`: under /api/v1 everything is the service's, so both engines answer alike.
      if (path === '/') return index(res);
      if (path === '/healthz') return health(res);
    }
    const request = { method, path, query, headers, body };
    const response = await faults.withFaults(await config, request, res, () => svc.handle(request));
    if (response !== null) sendJson(res, response, closing);
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
    const [code, message] = clientErrorCode(err.code);
    if (current !== undefined) {
      // A request is under way (its body broke off or took too long): answer through its
      // response, so the access log still has exactly one line for it.
      current.setHeader('Connection', 'close');
      current.on('finish', () => setTimeout(() => socket.destroy(), 1_000).unref());
      sendError(current, code, message);
      return;
    }
    const id = requestId();
    const { text, status } = rawErrorResponse(code, message, id);
    socket.end(text);
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
    await sandbox.close();
    throw err;
  }
  server.on('error', (err) => log(`server error: ${err.message}`));

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  const origin = `http://${hostForUrl}:${port}`;
  pageOrigin = options.publicUrl ?? origin;
  // For `carbon sandbox login` on any machine that reaches the ledger.
  await recordPageUrl(sandbox.store, pageOrigin).catch(async (err: unknown) => {
    server.close();
    await sandbox.close();
    throw err;
  });
  service = sandbox.service({ publicBaseUrl: options.publicUrl ?? origin });

  let closed: Promise<void> | null = null;
  const running: RunningServer = {
    developerPageUrl: `${options.publicUrl ?? origin}/login?token=${loginToken}`,
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
          sandbox.close().then(
            () => undefined,
            (err: unknown) => log(`error closing the ledger: ${err instanceof Error ? err.message : String(err)}`),
          ).finally(() => {
            log('closed');
            resolve();
          });
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
  // No "listening on …" line: the caller says where it listens (carbon serve's banner), once.
  return running;
}
