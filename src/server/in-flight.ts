import type { ServerResponse } from 'node:http';
import { accessLine, type LoggedResponse } from './access-log.js';

/**
 * The requests received and not yet over, each with its access-log line once it is over (sent, or
 * cut off). One whose client leaves while the service acts on it (a purchase being made) is over
 * once its answer is made, so the line names that answer and a shutdown waits for it.
 */
export class InFlight {
  count = 0;
  private readonly idle: (() => void)[] = [];
  /** Responses whose client left while the service acts on them: their line waits for the answer. */
  private readonly leftBehind = new Set<LoggedResponse>();
  /** The response's `close` listener, one function for every response. */
  readonly closed: (this: ServerResponse) => void;

  /** `over`: after each line (the server, closing, lets a connection that just went idle go). */
  constructor(
    private readonly log: (line: string) => void,
    over: () => void,
  ) {
    const open = this;
    this.closed = function (this: ServerResponse) {
      const res = this as LoggedResponse;
      if (res.acting) {
        res.closedWhileActing = true;
        open.leftBehind.add(res);
        return;
      }
      open.count--;
      log(accessLine(res));
      over();
      if (open.count === 0) for (const resolve of open.idle.splice(0)) resolve();
    };
  }

  received(res: ServerResponse): void {
    this.count++;
    res.on('close', this.closed);
  }

  /** The service has answered `res` (set `acting` before it began): one whose client left meanwhile is over now. */
  acted(res: LoggedResponse): void {
    res.acting = false;
    if (res.closedWhileActing) {
      this.leftBehind.delete(res);
      this.closed.call(res);
    }
  }

  /**
   * A shutdown that waited its grace for them: the lines of those whose client left and whose
   * answer is still being made, said now (before the ledger closes and the log's last line), once.
   * Returns how many.
   */
  cutOff(): number {
    const left = [...this.leftBehind];
    this.leftBehind.clear();
    for (const res of left) {
      res.closedWhileActing = false;
      this.count--;
      this.log(accessLine(res));
    }
    return left.length;
  }

  /**
   * Resolves once no response is open (each has had its access-log line), or after `capMs`. A
   * response cut off at the end of the grace says so after the server's own close: the line of it
   * must still come before the ledger closes and the CLI exits.
   */
  drained(capMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle.push(resolve);
      setTimeout(resolve, capMs).unref();
    });
  }
}
