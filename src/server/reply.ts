import type { ServerResponse } from 'node:http';
import { API_PREFIX } from '../api/types.js';
import { LedgerError } from '../engine/ledger.js';
import type { ErrorCode } from '../service/errors.js';
import { requestId } from '../service/keys.js';
import { LoggedResponse } from './access-log.js';
import { EVERY_ANSWER, envelope } from './http.js';
import { refusedPage, unavailablePage } from './pages/unavailable.js';

/**
 * What every handler of the request table returns, and the one writer that turns it into bytes.
 * The service's ApiResponse is a Reply as it stands (a JSON body, no `type`).
 */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** With `type`: a string or Buffer sent as it is. Without: a value sent as JSON. */
  body: unknown;
  /** The Content-Type of a string or Buffer body; absent for JSON. */
  type?: string;
}

/** A reply in the API's error envelope, with a fresh Request-Id unless `headers` gives one. */
export function errorReply(code: ErrorCode, message: string, headers: Record<string, string> = {}): Reply {
  const { status, body } = envelope(code, message);
  return { status, headers: { 'request-id': requestId(), ...headers }, body };
}

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

/** Set by the writer itself, below whatever a reply's headers say. */
const OWN_HEADERS = new Set(['content-type', 'content-length', 'cache-control', 'x-content-type-options', 'carbon-sandbox']);

/**
 * Writes replies. One writeHead() with every header, not a setHeader() apiece (each one validates
 * and stores its header in a map that writeHead() then walks again). While `closing` (the server
 * is draining), every reply says `Connection: close`, so no connection is kept.
 */
export class ReplyWriter {
  closing = false;
  /** Each connection's newest request: while closing, only its answer says `Connection: close`. */
  private readonly newest = new WeakMap<object, ServerResponse>();
  /** The connections an answer said `Connection: close` on while closing. */
  private readonly ended = new WeakSet<object>();

  /**
   * Notes `res` as its connection's newest request (intake.ts); false when an answer on that
   * connection said `Connection: close` (the server closing): it ends after that answer, so a
   * request read behind it could never be answered, and is not acted on. Otherwise the request
   * before it on the connection, if that one is not answered yet (pipelined): it waits for it.
   */
  received(socket: object, res: ServerResponse): ServerResponse | undefined | false {
    if (this.ended.has(socket)) return false;
    const before = this.newest.get(socket);
    this.newest.set(socket, res);
    // Finished, not only ended: an answer refused at once may still wait its turn behind one being made.
    return before === undefined || before.writableFinished ? undefined : before;
  }

  write(res: ServerResponse, reply: Reply): void {
    if (res.headersSent) return;
    const { headers, type } = reply;
    const id = headers['request-id'];
    if (res.destroyed) {
      // Its client has gone: the access log still names what was answered.
      if (res instanceof LoggedResponse && res.requestId === undefined) {
        res.statusCode = reply.status;
        res.requestId = id;
      }
      return;
    }
    const body = type === undefined ? JSON.stringify(reply.body) : (reply.body as string | Buffer);
    // Closing: the last answer of the connection says so. One before it (requests pipelined) may not:
    // Node ends the connection after an answer saying close, and the answers queued behind it were lost.
    const socket = res.req.socket;
    // After a request asking to Upgrade, node:http reads nothing more of the connection: said, so no client waits on it.
    const last = (this.closing && this.newest.get(socket) === res) || res.req.headers.upgrade !== undefined;
    const list: string[] = [];
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (OWN_HEADERS.has(lower) || (this.closing && lower === 'connection')) continue;
      list.push(canonicalHeader(name), headers[name]!);
    }
    list.push('Content-Type', type ?? 'application/json', 'Content-Length', String(Buffer.byteLength(body)));
    list.push(...EVERY_ANSWER);
    if (last) {
      list.push('Connection', 'close');
      this.ended.add(socket);
    }
    if (id !== undefined && res instanceof LoggedResponse) res.requestId = id;
    res.writeHead(reply.status, list);
    res.end(body);
  }
}

/** A browser's request: its Accept names HTML (curl's, fetch's and carbon's do not). */
export function fromBrowser(r: { headers: Record<string, string | undefined> }): boolean {
  return (r.headers.accept ?? '').includes('text/html');
}

/**
 * A browser asking for a page: neither the API (`/api/v1/…`) nor the journal (`/_sandbox/…`), whose
 * answers are JSON. It is answered in HTML, failures too (a 503 as the page's), and a GET that no
 * entry of the request table took is the page's 404 (requests.ts), so a failure comes in the form
 * the path's other answers come in.
 */
export function wantsPage(r: { path: string; headers: Record<string, string | undefined> }): boolean {
  return fromBrowser(r) && !r.path.startsWith(`${API_PREFIX}/`) && !r.path.startsWith('/_sandbox/');
}

/**
 * The answer to a failure the service itself could not answer: a storage failure or a bug. Logged,
 * never shown. `page`: the path answers pages (a certificate, the developer page's paths) or a browser
 * asked for one (requests.ts, answersPage), so the 503 is an HTML page, with the same Retry-After, and
 * `note` first (what is unsure of a form sent before it: developer/actions.ts, unsureNote).
 */
export function failureReply(err: unknown, log: (line: string) => void, page = false, note?: string): Reply {
  const id = requestId();
  if (err instanceof LedgerError) {
    log(`error ${id}: ${err.message} ${err.hint}`);
    // Storage trouble (locked, full, unreachable) is a state of the service, not of the request.
    // Only what passes (a lock, a restart) is worth trying again shortly: damage, a full disk or a
    // read-only file waits for a person, whom the log tells what to do.
    const message = err.transient
      ? 'The service cannot reach its ledger right now. Try again shortly.'
      : "The service cannot use its ledger until its operator acts on what the server's log says.";
    const headers: Record<string, string> = err.transient ? { 'request-id': id, 'retry-after': '1' } : { 'request-id': id };
    if (page) return { status: 503, headers, body: unavailablePage(message, id, err.transient, note), type: 'text/html; charset=utf-8' };
    return errorReply('service_unavailable', message, headers);
  }
  log(`error ${id}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  return errorReply('internal_error', 'The server failed to answer this request. It has been logged.', { 'request-id': id });
}

/** A refusal made before the request was read (intake.ts: a body over the limit, not UTF-8), as a page for a browser that asked for one. */
export function refusalAsPage(reply: Reply): Reply {
  const id = reply.headers['request-id'] ?? requestId();
  const message = (reply.body as { error: { message: string } }).error.message;
  return { ...reply, body: refusedPage(message, id, reply.status === 413), type: 'text/html; charset=utf-8' };
}
