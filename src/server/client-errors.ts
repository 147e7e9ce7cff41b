import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { requestId } from '../service/keys.js';
import { isoNow, LoggedResponse } from './access-log.js';
import { clientErrorCode, parseTarget, rawErrorResponse } from './http.js';
import type { Target } from './refusals.js';
import { errorReply, type Reply } from './reply.js';

/**
 * Requests Node could not parse, or that timed out (node:http's `clientError`): answered in the
 * envelope, then the connection closed. What broke belongs to the connection's newest request
 * when its body had not all come (cut off, too slow): that request is answered with the error,
 * through its own response. Otherwise it is bytes after every request read whole (a malformed
 * request, headers too large, data after `Connection: close`): those requests are answered
 * first, in order, as they would have been, and the refusal goes out after them; never in place
 * of one of them, which the service still acts on (a purchase made, its client told 400).
 */
export class ClientErrors {
  /** Each connection's newest request, by its response (a pipelined one has no socket of its own yet). */
  private readonly newest = new WeakMap<Socket, ServerResponse>();
  /** Connections already refused: Node reports each later read as the same error again. */
  private readonly refused = new WeakSet<Socket>();

  constructor(
    private readonly refuse: (res: ServerResponse, target: Target, reply: Reply) => void,
    private readonly log: (line: string) => void,
    private readonly handleRequest: (req: IncomingMessage, res: ServerResponse) => void,
  ) {}

  /** Called for every request as it is received. */
  received(req: IncomingMessage, res: ServerResponse): void {
    this.newest.set(req.socket, res);
  }

  readonly handle = (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (this.refused.has(socket)) return;
    this.refused.add(socket);
    const newest = this.newest.get(socket);
    if (!pending(newest)) {
      this.refuseRaw(err, socket);
    } else if (!newest.req.complete) {
      this.refuseThrough(err, newest, socket);
    } else {
      // Responses end in their requests' order: once the newest has, every one before it has
      // (on 'close', after its access-log line; a response cut off leaves the socket unwritable).
      newest.once('close', () => this.refuseRaw(err, socket));
    }
  };

  /**
   * CONNECT (node:http's `connect`): this is no proxy. Unheard, node:http would close the
   * connection without a word; it is answered as any method a path does not take is (the API's
   * 405, or 404), after the requests before it on the connection, then closed. What follows it (a
   * tunnel's bytes) is not read.
   */
  readonly connect = (req: IncomingMessage, socket: Socket): void => {
    const answer = () => {
      if (!socket.writable) return;
      try {
        const res = new LoggedResponse(req);
        res.shouldKeepAlive = false;
        res.assignSocket(socket);
        res.on('finish', () => {
          socket.end();
          setTimeout(() => socket.destroy(), 1_000).unref();
        });
        this.handleRequest(req, res);
      } catch {
        socket.destroy();
      }
    };
    const newest = this.newest.get(socket);
    if (!pending(newest)) answer();
    else newest.once('close', answer);
  };

  /** A request whose body broke off or took too long: answered with the error, so the access log has one line for it. */
  private refuseThrough(err: NodeJS.ErrnoException, res: ServerResponse, socket: Socket): void {
    if (res.headersSent) {
      socket.destroy();
      return;
    }
    const [code, message] = clientErrorCode(err.code);
    res.setHeader('Connection', 'close');
    res.on('finish', () => setTimeout(() => socket.destroy(), 1_000).unref());
    this.refuse(res, { ...parseTarget(res.req.url ?? '/'), method: res.req.method ?? 'GET' }, errorReply(code, message));
  }

  /** Bytes that are no request Node could read: a whole error response written straight to the socket. */
  private refuseRaw(err: NodeJS.ErrnoException, socket: Socket): void {
    // The answer before said `Connection: close` (the client asked, or HTTP/1.0): what came after it is ignored.
    if (!socket.writable) return;
    const [code, message] = clientErrorCode(err.code);
    const id = requestId();
    const { text, status } = rawErrorResponse(code, message, id);
    socket.end(text);
    setTimeout(() => socket.destroy(), 1_000).unref();
    this.log(`${isoNow()} - - ${status} key=- ${id} (${err.code ?? err.message})`);
  }
}

/** Whether a connection's newest request is still to be answered: something before it may still go out. */
const pending = (newest: ServerResponse | undefined): newest is ServerResponse =>
  newest !== undefined && !newest.writableFinished && !newest.destroyed;
