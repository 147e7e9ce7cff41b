import type { IncomingMessage } from 'node:http';
import { API_PREFIX, type ApiRequest } from '../api/types.js';
import { noteAnswer } from '../service/faults.js';
import type { OffsetsService } from '../service/service.js';
import { requestHeaders } from './http.js';
import type { Reply } from './reply.js';

/** Where a refused request was going: its method, path and query. */
export type Target = Pick<ApiRequest, 'method' | 'path' | 'query' | 'rawQuery'>;

/**
 * A request `carbon serve` refused before the service saw it (a body too large, not UTF-8, or cut
 * off by the timeout; a header sent twice) is kept in the journal as the caller met it, when its
 * path is the API's: what an integration sent matters most when it was refused. Its body is not
 * kept (it was not read, or not whole, or not text). A request Node could not parse at all has no
 * method or path to keep, and is in the access log only, as the developer page's requests are.
 */
export function noteRefusal(
  service: OffsetsService | undefined,
  req: IncomingMessage,
  target: Target,
  reply: Reply,
  startedMs?: number,
): void {
  const { method, path, query, rawQuery } = target;
  if (service === undefined || !apiPath(path)) return;
  void noteAnswer(service, { method, path, query, rawQuery, headers: requestHeaders(req), body: '' }, reply, since(service, startedMs));
}

/**
 * A request of the API the service could not answer (its ledger unreachable or stalled: a 503; a
 * bug: a 500) is kept in the journal too, as the caller met it, so `carbon logs --status 5xx` shows
 * what an app met during an outage. The ledger is not asked for its key (the ledger is what
 * failed): the entry has the mode its Authorization names, and no key id. Like every entry, it
 * waits in memory until the ledger takes it.
 */
export function noteFailure(service: OffsetsService | undefined, request: ApiRequest, reply: Reply, startedMs?: number): void {
  if (service === undefined || !apiPath(request.path)) return;
  void noteAnswer(service, request, reply, since(service, startedMs), false);
}

/**
 * The entry's trace, timed from when the request came in (`performance.now()` then: the access
 * log's start), so its duration is what the caller waited, as the access log's is: a 503 after a
 * stalled ledger's 4 s said 0 ms.
 */
function since(service: OffsetsService, startedMs: number | undefined): ReturnType<OffsetsService['journal']['trace']> {
  const trace = service.journal.trace();
  if (startedMs !== undefined && startedMs > 0) trace.started -= Math.max(0, Math.round((performance.now() - startedMs) * 1000));
  return trace;
}

const apiPath = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
