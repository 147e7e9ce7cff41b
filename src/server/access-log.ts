import { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isoTime } from '../platform/iso-time.js';
import { bearerToken } from '../service/access.js';
import { maskKey, redactSecrets } from '../service/keys.js';

/**
 * The access log: one line per request once its response is over (sent, or cut off), with the
 * key masked and the path bounded and printable. What the line needs of its request is kept on
 * the response as declared fields (`LoggedResponse`): one shape for every response, not a closure per
 * request nor properties added to Node's own class (each such store took V8's slow path).
 */
export class LoggedResponse extends ServerResponse {
  started = 0;
  method = '';
  path = '';
  /** Set by send(), as getHeader() does not see headers given to writeHead(). */
  requestId: string | undefined = undefined;
  /** The fault that cut the connection instead of sending the answer (`carbon sandbox faults`). */
  cutBy: 'drop-before' | 'drop-after' | undefined = undefined;
  /** Being acted on (intake.ts): a client that closes meanwhile gets its line once the answer is made. */
  acting = false;
  closedWhileActing = false;
}

/** `new Date().toISOString()`. */
export function isoNow(): string {
  return isoTime(Date.now());
}

/**
 * What the log shows for a request's key: masked, never the key itself, and in ASCII
 * (`ck_test_...4eUO`): one `…` in a line makes the log's text two-byte, which took a third of the
 * cost of logging a request under load (BENCHMARKS.md, serving).
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
  const token = bearerToken(authorization);
  // In ASCII, as the path is: a header's other bytes come as Latin-1 (`Ã©` for an é sent as UTF-8).
  // A label of carbon's own keeps its spaces (`[13-character key]`), as `[not a bearer key]` does.
  return token === undefined
    ? '[not a bearer key]'
    : maskKey(token)
        .replace('…', '...')
        .replace(/[^\x20-\x7e]/g, '?');
}

const PRINTABLE_PATH = /^[\x21-\x7e]{0,200}$/;

/** The path for the log: bounded, and printable (a raw request line can carry odd bytes). */
function logPath(path: string): string {
  // A key pasted into a path (`/offsets/ck_test_…`) is logged masked, in ASCII.
  const shown = redactSecrets(path).replaceAll('…', '...');
  if (PRINTABLE_PATH.test(shown)) return shown;
  const clean = shown.replace(/[^\x21-\x7e]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

/** The line for a finished (or cut off) response. */
export function accessLine(res: LoggedResponse): string {
  const ms = (performance.now() - res.started).toFixed(1);
  // A fault's cut says so: after the service answered (its status, its Request-Id), or before it saw the request.
  const status =
    res.cutBy === 'drop-after'
      ? `${res.statusCode} (cut: drop-after)`
      : res.cutBy === 'drop-before'
        ? '- (cut: drop-before)'
        : res.writableFinished
          ? String(res.statusCode)
          : // The client gone before its answer was sent: the answer made all the same (a purchase, say) is named by its status and Request-Id.
            `${res.headersSent || res.requestId !== undefined ? res.statusCode : '-'} (aborted)`;
  const requestId = res.requestId ?? res.getHeader('request-id');
  return `${isoNow()} ${res.method} ${logPath(res.path)} ${status} ${ms}ms key=${keyLabel(res.req.headers.authorization)}${typeof requestId === 'string' ? ` ${requestId}` : ''}`;
}
