import { createServer, type IncomingMessage, type Server } from 'node:http';
import { API_PREFIX } from '../api/types.js';
import { type Engine, openEngine } from '../engine/open.js';
import { journalSettingsFrom } from '../service/journal-settings.js';
import { LoggedResponse } from './access-log.js';
import { boundedHealth } from './endpoints.js';
import { ServerFaults } from './faults.js';
import { Intake } from './intake.js';
import { ReplyWriter } from './reply.js';
import type { RunningServer, ServeOptions } from './server.js';

/**
 * The server's life: the engine opened, the port listened on, requests drained on close, then
 * the ledger closed (signals.ts turns SIGINT and SIGTERM into close() and terminate()).
 */

type HttpServer = Server<typeof IncomingMessage, typeof LoggedResponse>;

const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;
const DEFAULTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, shutdownGraceMs: 10_000 } as const;

/** A log that fails (stderr closed under us) must not take a request, or the server, down with it. */
function safeLog(log: ((line: string) => void) | undefined): (line: string) => void {
  return (line) => {
    try {
      log?.(line);
    } catch {
      // Nowhere left to report it.
    }
  };
}

function httpServer(options: ServeOptions): HttpServer {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs, headersTimeout);
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs;
  const server = createServer({
    headersTimeout,
    requestTimeout,
    keepAliveTimeout,
    // The timeouts above are enforced by a periodic sweep; its default (30 s) would let them run long.
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
    // HTTP/1.1 without Host is refused in the API's envelope (http.ts, headerProblem), not by Node's bare 400.
    requireHostHeader: false,
    ServerResponse: LoggedResponse,
  });
  server.setTimeout(requestTimeout + keepAliveTimeout + 60_000);
  return server;
}

function listen(server: HttpServer, options: ServeOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Closes the engine when a step of the start fails, then fails the start. */
const failStart =
  (engine: Engine, server?: HttpServer) =>
  async (err: unknown): Promise<never> => {
    server?.close();
    await engine.close();
    throw err;
  };

/**
 * The host of the server's own links when it listens on every address (0.0.0.0, ::): this machine's
 * loopback, which reaches it: 0.0.0.0 is no address to connect to (Windows refuses it, and from
 * another machine it is that machine). Others reach it at an address only the operator knows (`--public-url`).
 */
export const linksHost = (host: string): string => (host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host);

/** Starts serving the sandbox. Resolves once listening; rejects if the port or the ledger cannot be had. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = safeLog(options.log);
  // Opened first: a ledger that cannot be used should fail the start, not the first request.
  const { clock } = options;
  // The journal says in the log what an outage kept out of `carbon logs`.
  const journal = { ...(options.journal ?? journalSettingsFrom(process.env)), log };
  const engine = await openEngine(options.store ?? options.dataDir, { ...(clock === undefined ? {} : { clock }), journal });
  // The developer page's one-time login token, made before the first request can arrive.
  const loginToken = await engine.sandbox.pages.newLoginToken(Date.now()).catch(failStart(engine));
  const writer = new ReplyWriter();
  const faults = new ServerFaults(() => engine.sandbox.faultsText());
  const server = httpServer(options);
  const intake = new Intake(server, writer, faults, log, options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
  await listen(server, options).catch(failStart(engine));
  server.on('error', (err) => log(`server error: ${err.message}`));

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = linksHost(options.host);
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const pageOrigin = options.publicUrl ?? origin;
  // Certificate URLs on the address the server is reached at, known only once it listens.
  const sandbox = engine.sandbox.withPublicBaseUrl(pageOrigin);
  const service = sandbox.service();
  const url = `${origin}${API_PREFIX}`;
  intake.served = {
    sandbox,
    service,
    faults,
    writer,
    pageOrigin,
    apiUrl: url,
    health: boundedHealth(engine.health),
    storeKind: engine.store.kind,
  };
  // For `carbon sandbox login` on any machine that reaches the ledger. Written once requests are
  // served: a write that waits for the ledger (another instance's lock) left every request meanwhile,
  // /livez too, answered 503 "shutting down".
  await engine.sandbox.pages.recordUrl(pageOrigin).catch(failStart(engine, server));
  const graceMs = options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs;
  const { close, terminate } = closer({ server, intake, writer, engine, log, graceMs });
  return {
    url,
    origin,
    host: options.host,
    port,
    dataDir: options.dataDir,
    sandbox,
    store: engine.store,
    developerPageUrl: `${pageOrigin}/login?token=${loginToken}`,
    inFlight: () => intake.open.count,
    close,
    terminate,
  };
}

interface Parts {
  server: HttpServer;
  intake: Intake;
  writer: ReplyWriter;
  engine: Engine;
  log: (line: string) => void;
  graceMs: number;
}

/** Graceful close (stop accepting, finish what is in flight, then close the ledger), and its hurried twin. */
function closer({ server, intake, writer, engine, log, graceMs }: Parts): Pick<RunningServer, 'close' | 'terminate'> {
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      writer.closing = true;
      log(intake.open.count > 0 ? `shutting down: finishing ${intake.open.count} request(s) in flight` : 'shutting down');
      const ends = performance.now() + graceMs;
      const force = setTimeout(() => {
        log(`shutdown: cutting off ${intake.open.count} request(s) still in flight after ${graceMs} ms`);
        server.closeAllConnections();
      }, graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        intake.served = null;
        // A request whose client has left is still acted on (a purchase being made): waited for within the grace too.
        intake.open
          .drained(Math.max(1_000, ends - performance.now()))
          .then(() => {
            const cut = intake.open.cutOff();
            if (cut > 0) log(`shutdown: cutting off ${cut} request(s) still in flight after ${graceMs} ms`);
            return engine.close();
          })
          .then(
            () => undefined,
            (err: unknown) => log(`error closing the ledger: ${err instanceof Error ? err.message : String(err)}`),
          )
          .finally(() => {
            log('closed');
            resolve();
          });
      });
      server.closeIdleConnections();
    });
    return closed;
  };
  const terminate = (): Promise<void> => {
    const done = close();
    server.closeAllConnections();
    return done;
  };
  return { close, terminate };
}
