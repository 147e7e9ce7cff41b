import type { Health } from '../engine/open.js';
import { requestId } from '../service/keys.js';
import { certificateNotFoundPage, certificatePage } from './pages/certificate.js';
import type { Reply } from './reply.js';
import type { Incoming, Served } from './requests.js';

/** The request table's handlers outside the developer page: the API, the certificate, the probes. */

/** The API (and the envelope's 404 or 405 for anything no other entry answers), through the faults. */
export async function api(r: Incoming, served: Served): Promise<Reply | null> {
  const request = { method: r.method, path: r.path, query: r.query, rawQuery: r.rawQuery, headers: r.headers, body: r.body };
  return await served.faults.withFaults(await r.faults, request, r.res, served.service);
}

const CERTIFICATE_ID = /^cert_[0-9a-f]{24}$/;
const CERTIFICATE_HEADERS = {
  // The page is static HTML: no script, no outside resource, only its own inline style.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};
const HTML = 'text/html; charset=utf-8';

/** GET /certificates/{id}: the public page of a placed live offset; 404 for anything else. */
export async function certificate(r: Incoming, served: Served): Promise<Reply> {
  const segment = r.params[0]!;
  let certId = segment;
  try {
    certId = decodeURIComponent(segment);
  } catch {
    // Not valid percent-encoding: it names no certificate; shown escaped as it came.
  }
  const offset = CERTIFICATE_ID.test(certId) ? await served.service.offsetByCertificate(certId) : undefined;
  const headers = { 'request-id': requestId(), ...CERTIFICATE_HEADERS };
  if (offset === undefined || offset.status !== 'placed' || !offset.livemode) {
    return { status: 404, headers, body: certificateNotFoundPage(certId), type: HTML };
  }
  return { status: 200, headers, body: certificatePage(offset, certId), type: HTML };
}

/**
 * How long /healthz waits for the ledger before it answers 503: inside a probe's 1 s timeout
 * (Kubernetes' default timeoutSeconds), with 200 ms left for the network and a busy event loop.
 * A ledger that answers a `SELECT 1` takes a millisecond or two; one that has not in 800 ms is
 * not serving. The API's own requests still wait for the database's deadlines (deadlines.ts).
 */
const HEALTH_WAIT_MS = 800;

/**
 * The ledger's health check, answered within `waitMs` (false once it has not answered by then).
 * One check at a time: probes that come while one is under way share its answer, and a stalled
 * database holds the check's own connection (the store's, never one of the requests' pool) for
 * them, not one a probe; the check ends at the database's deadlines at the latest, and the next
 * probe starts another.
 */
export function boundedHealth(health: () => Promise<Health>, waitMs = HEALTH_WAIT_MS): () => Promise<Health> {
  let running: Promise<Health> | null = null;
  return async () => {
    running ??= health()
      .catch((): Health => NO_ANSWER)
      .finally(() => {
        running = null;
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Health>((resolve) => {
      timer = setTimeout(() => resolve(NO_ANSWER), waitMs);
    });
    try {
      return await Promise.race([running, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * GET /livez: the process answers (Kubernetes' liveness probe). It never asks the ledger: a
 * database that is down or stalled makes every instance unready at once (/readyz), and
 * restarting them would bring it back no sooner. 200 while draining too: the
 * instance is finishing its requests, and ends by itself.
 */
export function live(_: Incoming, served: Served): Reply {
  const status = served.writer.closing ? 'draining' : 'ok';
  return { status: 200, headers: { 'request-id': requestId() }, body: { status, store: served.storeKind } };
}

const NO_ANSWER: Health = { ok: false, reason: 'no_answer', passing: true };

/**
 * GET /readyz and /healthz: 200 while the ledger answers, else 503 within HEALTH_WAIT_MS (readiness
 * probes, load balancers), saying why in a word (never the ledger's address: anyone may ask), with
 * Retry-After where it passes by itself (draining, no answer, a standby), and without it where a
 * person mends it (the ledger's tables gone, or its rights taken), as the API's requests answer then.
 */
export async function health(_: Incoming, served: Served): Promise<Reply> {
  const { storeKind: store } = served;
  if (served.writer.closing) return unready({ status: 'draining', store }, true);
  const h = await served.health();
  if (h.ok) return { status: 200, headers: { 'request-id': requestId() }, body: { status: 'ok', store } };
  return unready({ status: 'unavailable', store, reason: h.reason }, h.passing);
}

function unready(body: object, passing: boolean): Reply {
  return { status: 503, headers: { 'request-id': requestId(), ...(passing ? { 'retry-after': '1' } : {}) }, body };
}
