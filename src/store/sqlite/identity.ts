import { existsSync, fstatSync } from 'node:fs';
import { LedgerError } from '../ledger-error.js';
import { type HeldFile, holdFile, openSidecars, releaseFile, type Turn } from './turns.js';

/**
 * The ledger file a connection opened, held by a descriptor: once that file has no name left (it
 * was deleted, or another file was renamed over it), its link count is 0. So are its write-ahead
 * log (`-wal`) and its index (`-shm`), held from the first write on: deleted under a process that
 * has them open, that process and the next would each write a log of their own, and one's
 * purchases be lost to the other's checkpoint (SQLite's "How To Corrupt", 2.4). The descriptors are
 * the process's, shared by its connections to the file (turns.ts).
 */
export class LedgerIdentity {
  private readonly held: { key: string; file: HeldFile };
  private closed = false;
  /** The writes this connection has checked. */
  private writes = 0;

  constructor(private readonly path: string) {
    this.held = holdFile(path);
  }

  /** Whose turn it is on this file in this process (turns.ts). */
  get turn(): Turn {
    return this.held.file;
  }

  /**
   * Writing to a ledger file that was deleted or replaced under this process would write into an
   * unlinked file, lost when the process ends: refused instead (503 from the server), with a
   * LedgerError that says what happened. One fstat a write (half a stat of the path), and one for
   * each of the log and its index.
   */
  check(): void {
    if (this.closed) throw closedLedger(this.path);
    const { file } = this.held;
    if (fstatSync(file.fd).nlink === 0) {
      const what = existsSync(this.path) ? 'replaced' : 'deleted';
      throw new LedgerError(
        `The ledger ${this.path} was ${what} while this process had it open; nothing more is written to the old one.`,
        this.path,
        'Restart carbon serve (or the command) to open the ledger that is there now.',
      );
    }
    // Watched from a connection's second write on: a command that writes once (a `balance`, its
    // journal entry, moments after it opened the files) opens nothing more for it on its way out.
    if (this.writes++ === 0) return;
    file.sidecars ??= openSidecars(this.path);
    for (const { fd, suffix } of file.sidecars ?? []) {
      if (fstatSync(fd).nlink > 0) continue;
      throw new LedgerError(
        `The ledger's ${suffix} file (${this.path}${suffix}) was deleted while this process had it open; nothing more is written, as another process would not see it.`,
        this.path,
        "Restart carbon serve (or the command); never delete a ledger's -wal or -shm file while carbon has it open.",
      );
    }
  }

  /** After the connection's own close (a descriptor closed before it would drop SQLite's locks on that file). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    releaseFile(this.held.key);
  }
}

/** A ledger this process closed, used again (the library's sandbox after its client's close). */
export const closedLedger = (path: string): LedgerError =>
  new LedgerError(`The ledger ${path} was closed in this process.`, path, 'Open it again (openLocal, openEngine) to go on.');
