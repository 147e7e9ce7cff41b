import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FaultConfig } from '../service/faults.js';
import type { LoggedResponse } from './access-log.js';
import { ClientErrors } from './client-errors.js';
import { compressedBody, headerProblem, parseTarget, readBody, requestHeaders } from './http.js';
import { InFlight } from './in-flight.js';
import { unsureNote } from './pages/developer/actions.js';
import { noteFailure, noteRefusal, type Target } from './refusals.js';
import { errorReply, failureReply, type Reply, type ReplyWriter, refusalAsPage, wantsPage } from './reply.js';
import { answersPage, type Incoming, incoming, match, type Served } from './requests.js';

/**
 * From node:http to the request table: a request is read (its body within the limit), joins the
 * turn's batch, and is answered by the first entry of the table that matches it. Failures the
 * service could not answer (storage, bugs) are answered here, in the envelope, and logged.
 */

const utf8 = new TextDecoder('utf-8', { fatal: true });
export class Intake {
  /** Requests being received or answered right now. */
  readonly open: InFlight;
  /** What the handlers share; null before the server is ready and once its ledger is closed. */
  served: Served | null = null;
  private batch: Incoming[] = [];
  private readonly clientErrors = new ClientErrors(
    (res, target, reply) => this.refuse(res, target, reply),
    (line) => this.log(line),
    (req, res) => this.handle(req, res),
  );

  /** Takes `server`'s requests from now on. */
  constructor(
    server: Server<typeof IncomingMessage, typeof LoggedResponse>,
    private readonly writer: ReplyWriter,
    private readonly faults: { load(): Promise<FaultConfig | null> },
    private readonly log: (line: string) => void,
    private readonly bodyLimit: number,
  ) {
    // While closing, a connection whose request just ended is idle now: let it go.
    this.open = new InFlight(log, () => writer.closing && server.closeIdleConnections());
    server.on('request', this.handle);
    server.on('checkContinue', this.checkContinue);
    // Any other `Expect` value: Node would answer a bare 417 outside the envelope. The expectation
    // is ignored instead (RFC 9110 allows it) and the request answered as usual.
    server.on('checkExpectation', this.handle);
    server.on('clientError', this.clientErrors.handle);
    server.on('connect', this.clientErrors.connect);
  }

  /** node:http's `request` (and `checkExpectation`): nothing thrown here may escape. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      this.receive(req, res);
    } catch (err) {
      this.fail(res, err);
    }
  };

  /** `Expect: 100-continue`: refuse an oversized body before the client sends it. */
  readonly checkContinue = (req: IncomingMessage, res: ServerResponse): void => {
    const declared = req.headers['content-length'];
    if (declared === undefined || !/^\d+$/.test(declared) || Number(declared) <= this.bodyLimit) res.writeContinue();
    this.handle(req, res);
  };

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const before = this.writer.received(req.socket, res);
    if (before === false) return;
    const answered = res as LoggedResponse;
    answered.started = performance.now();
    const method = req.method ?? 'GET';
    const { path, query, rawQuery } = parseTarget(req.url ?? '/');
    answered.method = method;
    answered.path = path;
    this.open.received(res);
    this.clientErrors.received(req, res);

    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3):
    // it joins this turn's batch at once, without a Promise or waiting for its end.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      this.enqueueAfter(before, incoming(req, res, method, path, query, rawQuery, ''));
      return;
    }
    readBody(req, this.bodyLimit)
      .then((result) => {
        if (result.kind === 'aborted') return;
        if (result.kind === 'too_large') return this.tooLarge(req, res, { method, path, query, rawQuery });
        const compressed = compressedBody(req);
        if (compressed !== undefined) return this.refuse(res, { method, path, query, rawQuery }, errorReply('invalid_json', compressed));
        let body: string;
        try {
          body = utf8.decode(result.body);
        } catch {
          this.refuse(res, { method, path, query, rawQuery }, errorReply('invalid_json', 'Invalid request body: it is not valid UTF-8.'));
          return;
        }
        this.enqueueAfter(before, incoming(req, res, method, path, query, rawQuery, body));
      })
      .catch((err: unknown) => this.fail(res, err));
  }

  /** Stop keeping bytes; answer, close, and drain briefly so the client reads the 413, not a reset (which can overtake it). */
  private tooLarge(req: IncomingMessage, res: ServerResponse, target: Target): void {
    res.setHeader('Connection', 'close');
    this.refuse(res, target, errorReply('body_too_large', `The request body is larger than ${this.bodyLimit} bytes.`));
    req.resume();
    res.on('finish', () => setTimeout(() => req.socket.destroy(), 1_000).unref());
  }

  /**
   * Requests read in one turn of the event loop are answered together at its end (setImmediate
   * runs after the turn's I/O callbacks), so the store checks once whether another process has
   * committed for the whole batch instead of once a request (BENCHMARKS.md: GET /balance). That
   * check still comes after every request in the batch was read, so an answer never misses a
   * commit that finished before its request arrived.
   */
  private enqueue(request: Incoming): void {
    if (this.batch.push(request) === 1) setImmediate(this.drain);
  }

  /**
   * Requests pipelined on one connection act one after another, in the order they came: one joins
   * a batch once the request before it has been answered, so it sees what that one did (a balance
   * read after a purchase sent before it), as it would had the client waited for each answer.
   */
  private enqueueAfter(before: ServerResponse | undefined, request: Incoming): void {
    if (before === undefined || before.writableFinished) this.enqueue(request);
    // The connection gone meanwhile (the client left, a fault cut it): no answer can reach anyone, so it is not acted on.
    else before.once('close', () => void (gone(request) || this.enqueue(request)));
  }

  private readonly drain = (): void => {
    const pending = this.batch;
    this.batch = [];
    // The fault setting (`carbon sandbox faults`), read once a batch like the freshness check.
    const config = this.faults.load();
    config.catch(() => {}); // Each request that needs it reports a failure itself.
    for (const request of pending) {
      if (gone(request)) continue; // its client left while it waited its turn: no answer could reach it
      request.faults = config;
      void this.answer(request);
    }
  };

  /** Acts on a request and answers it; one whose client leaves meanwhile is over once its answer is made. */
  private async answer(request: Incoming): Promise<void> {
    const res = request.res as LoggedResponse;
    res.acting = true;
    try {
      await this.act(request);
    } catch (err) {
      this.fail(res, err, request);
    } finally {
      this.open.acted(res);
    }
  }

  private async act(request: Incoming): Promise<void> {
    const served = this.served;
    const { res } = request;
    if (served === null) {
      this.writer.write(res, errorReply('service_unavailable', 'The server is shutting down.', { 'retry-after': '1' }));
      return;
    }
    const problem = headerProblem(request.req);
    if (problem !== undefined) {
      this.refuse(res, request, errorReply('malformed_request', problem));
      return;
    }
    request.upper = request.method.toUpperCase();
    request.headers = requestHeaders(request.req);
    const reply = await match(request).handle(request, served);
    if (reply !== null) this.writer.write(res, reply);
  }

  /** Answers a request refused before the service saw it, and keeps it in the journal (refusals.ts). */
  private refuse(res: ServerResponse, target: Target, reply: Reply): void {
    // A browser's form (a developer page's field pasted over the body limit) gets a page, not the API's JSON.
    this.writer.write(res, wantsPage({ path: target.path, headers: requestHeaders(res.req) }) ? refusalAsPage(reply) : reply);
    noteRefusal(this.served?.service, res.req, target, reply, (res as LoggedResponse).started);
  }

  /** Answers anything the service itself could not (reply.ts: `failureReply`), and keeps it in the journal (refusals.ts). */
  private fail(res: ServerResponse, err: unknown, request?: Incoming): void {
    const page = request !== undefined && answersPage(request);
    // `?unsure=` is said only where a form's redirect leads (the developer page, `/`), not on any page's address.
    const reply = failureReply(err, this.log, page, page && request.path === '/' ? unsureNote(request.query.unsure) : undefined);
    this.writer.write(res, reply);
    if (request !== undefined) noteFailure(this.served?.service, request, reply, (res as LoggedResponse).started);
  }
}

/** No answer can reach its client: the connection ended, or is ending (a client's FIN: node:http ends its side). */
const gone = ({ res, req: { socket } }: Incoming): boolean =>
  res.destroyed || socket.destroyed || socket.writableEnded || socket.readableEnded;
