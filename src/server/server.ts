import type { StoreTarget } from '../engine/ledger.js';
import type { JournalSettings } from '../service/journal-settings.js';
import type { Sandbox } from '../service/sandbox.js';

/**
 * `carbon serve`: the service model on a port. The parts: the request table (requests.ts: every
 * URL, one entry each, with the handlers in endpoints.ts and pages/), the replies and their one
 * writer (reply.ts), node:http's side (intake.ts, http.ts, client-errors.ts), the access log (access-log.ts), and
 * the lifecycle (lifecycle.ts: open, listen, drain, close; signals.ts). Auth, validation,
 * idempotency and the error envelope stay in the service, so a served sandbox answers exactly as
 * the in-process engine does.
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
  /** The request journal's settings; by default those of the environment (CARBON_JOURNAL…). */
  journal?: JournalSettings;
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
  /** http://host:port; for every address (0.0.0.0, ::), this machine's loopback (linksHost). */
  origin: string;
  host: string;
  port: number;
  dataDir: string;
  /** The sandbox the server serves (its keys, for the banner). Closed by close(). */
  sandbox: Sandbox;
  /** Which store holds the ledger, and where (for the banner and /healthz). */
  store: { kind: string; label: string };
  /** The developer page's address with a one-time login token (valid for a day, on any instance sharing the store). */
  developerPageUrl: string;
  /** Requests being received or answered right now. */
  inFlight(): number;
  /** Graceful: stop accepting, finish requests in flight, then close the ledger. Idempotent. */
  close(): Promise<void>;
  /** Like close(), but cuts requests in flight off at once (a second Ctrl-C). */
  terminate(): Promise<void>;
}

export { parseTarget } from './http.js';
export { linksHost, startServer } from './lifecycle.js';
export { closeOnSignals } from './signals.js';
