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
  /** The response's `close` listener, one function for every response. */
  readonly closed: (this: ServerResponse) => void;

  /** `over`: after each line (the server, closing, lets a connection that just went idle go). */
  constructor(log: (line: string) => void, over: () => void) {
    const open = this;
    this.closed = function (this: ServerResponse) {
      const res = this as LoggedResponse;
      if (res.acting) {
        res.closedWhileActing = true;
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

  /** Runs `act` (the service answering `res`), with the response over only once it is done. */
  async acting(res: LoggedResponse, act: () => Promise<void>): Promise<void> {
    res.acting = true;
    try {
      await act();
    } finally {
      res.acting = false;
      if (res.closedWhileActing) this.closed.call(res);
    }
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
