import { onReaderGone } from '../stdio.js';
import { onStopSignal } from '../stop-signals.js';

/**
 * What stops a `carbon watch` run, once heard: Ctrl-C or SIGTERM (`signal`), or its stdout's reader
 * going away (`readerGone`: `| head -1`), which ends the run as a signal does rather than at once
 * with exit 0, so the delivery under way finishes and the events left are counted (a signal gives it
 * up: the person or the service manager stopping the run does not wait for a stuck app). And a wake-up
 * for the sleeps between polls and between deliveries.
 */
export class Stop {
  signal: NodeJS.Signals | null = null;
  readerGone = false;
  private wake: () => void = () => {};
  private off: () => void = () => {};
  private offReader: () => void = () => {};
  private readonly interrupt = new AbortController();
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.signal = signal;
    this.interrupt.abort();
    this.wake();
  };

  /** Aborted on Ctrl-C or SIGTERM (not when the reader goes away): a delivery under way is given up. */
  get interrupted(): AbortSignal {
    return this.interrupt.signal;
  }

  /** Whether the run is to stop: a signal, or the reader gone. */
  get stopped(): boolean {
    return this.signal !== null || this.readerGone;
  }

  readonly sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /**
   * `work`'s result, or undefined if Ctrl-C or SIGTERM comes first: a poll waiting on a server that
   * does not answer (its attempts and retries a minute and more) is left, not waited for. So is one
   * still unanswered at `until.at` (--until-settled's deadline), failing with `until.late()`.
   */
  orInterrupted<T>(work: Promise<T>, until?: { at: number; late: () => Error }): Promise<T | undefined> {
    const signal = this.interrupt.signal;
    return new Promise<T | undefined>((resolve, reject) => {
      const timer = until === undefined ? undefined : setTimeout(() => reject(until.late()), Math.max(0, until.at - Date.now()));
      const done = () => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(timer);
      };
      const onAbort = () => {
        done();
        resolve(undefined);
      };
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      // Settling after the signal changes nothing (a promise settles once), and a late failure is not left unhandled.
      work.then(
        (value) => {
          done();
          resolve(value);
        },
        (err: unknown) => {
          done();
          reject(err);
        },
      );
    });
  }

  listen(): void {
    this.off = onStopSignal(this.onSignal);
    this.offReader = onReaderGone(() => {
      this.readerGone = true;
      this.wake();
    });
  }

  release(): void {
    this.off();
    this.offReader();
  }
}

/**
 * For a stopped run's line: events are delivered in the order printed, so those found after the
 * event a delivery is stuck on are not printed yet; how many of the undelivered those are.
 */
export function notPrinted(undelivered: number, printed: number, delivered: number): string {
  const unprinted = undelivered - printed + delivered;
  if (unprinted <= 0) return '';
  return unprinted === undelivered ? ' (found, not printed yet)' : ` (${unprinted} of them found, not printed yet)`;
}
