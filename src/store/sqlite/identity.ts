import { closeSync, existsSync, fstatSync, openSync } from 'node:fs';
import { LedgerError } from '../ledger-error.js';

/**
 * The ledger file a connection opened, held by a descriptor: once that file has no name left (it
 * was deleted, or another file was renamed over it), its link count is 0.
 */
export class LedgerIdentity {
  private readonly fd: number;

  constructor(private readonly path: string) {
    this.fd = openSync(path, 'r');
  }

  /**
   * Writing to a ledger file that was deleted or replaced under this process would write into an
   * unlinked file, lost when the process ends: refused instead (503 from the server), with a
   * LedgerError that says what happened. One fstat a write (half a stat of the path).
   */
  check(): void {
    if (fstatSync(this.fd).nlink > 0) return;
    const what = existsSync(this.path) ? 'replaced' : 'deleted';
    throw new LedgerError(
      `The ledger ${this.path} was ${what} while this process had it open; nothing more is written to the old one.`,
      this.path,
      'Restart carbon serve (or the command) to open the ledger that is there now.',
    );
  }

  close(): void {
    closeSync(this.fd);
  }
}
