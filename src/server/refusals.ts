import type { IncomingMessage } from 'node:http';
import { API_PREFIX, type ApiRequest } from '../api/types.js';
import { noteAnswer } from '../service/faults.js';
import type { OffsetsService } from '../service/service.js';
import { requestHeaders } from './http.js';
import type { Reply } from './reply.js';

/** Where a refused request was going: its method, path and query. */
export type Target = Pick<ApiRequest, 'method' | 'path' | 'query'>;

/**
 * A request `carbon serve` refused before the service saw it (a body too large, not UTF-8, or cut
 * off by the timeout; a header sent twice) is kept in the journal as the caller met it, when its
 * path is the API's: what an integration sent matters most when it was refused. Its body is not
 * kept (it was not read, or not whole, or not text). A request Node could not parse at all has no
 * method or path to keep, and is in the access log only, as the developer page's requests are.
 */
export function noteRefusal(service: OffsetsService | undefined, req: IncomingMessage, target: Target, reply: Reply): void {
  const { method, path, query } = target;
  if (service === undefined || (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`))) return;
  void noteAnswer(service, { method, path, query, headers: requestHeaders(req), body: '' }, reply, service.journal.trace());
}
