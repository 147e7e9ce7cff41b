import { statSync } from 'node:fs';
import { LedgerError } from '../ledger-error.js';
import { closedLedger } from './identity.js';

/** SQLite's primary result codes, by number (sqlite3.h), as node:sqlite reports them in `errcode`. */
const PRIMARY = (
  'OK ERROR INTERNAL PERM ABORT BUSY LOCKED NOMEM READONLY INTERRUPT IOERR CORRUPT NOTFOUND FULL CANTOPEN PROTOCOL EMPTY ' +
  'SCHEMA TOOBIG CONSTRAINT MISMATCH MISUSE NOLFS AUTH FORMAT RANGE NOTADB'
).split(' ');

/** The extended codes this file decides on (sqlite3.h: primary | n << 8). */
const EXTENDED: Record<number, string> = { [10 | (2 << 8)]: 'SQLITE_IOERR_SHORT_READ' };

/**
 * An error's code in SQLite's own names: `SQLITE_BUSY` for node:sqlite's `errcode` 5 (an
 * extended code by its primary one, `SQLITE_BUSY_RECOVERY` too), or the file system's (`EACCES`)
 * and carbon's own (`CARBON_SCHEMA_NEWER`) as they are.
 */
export function sqliteCode(err: unknown): string {
  const { code, errcode } = (err ?? {}) as { code?: unknown; errcode?: unknown };
  if (typeof errcode === 'number') return `SQLITE_${PRIMARY[errcode & 0xff] ?? errcode}`;
  return typeof code === 'string' ? code : '';
}

/** Translates what SQLite and the file system say into a LedgerError a person can act on. */
/** Another process holds the write lock: transient, and the transaction that met it wrote nothing. */
export const lockedLedger = (path: string): LedgerError =>
  new LedgerError(
    `The ledger ${path} is locked by another process.`,
    path,
    'Wait for the other carbon process to finish and try again.',
    true,
    true,
  );

export function sqliteError(err: unknown, path: string): Error {
  if (err instanceof LedgerError) return err;
  const code = sqliteCode(err);
  const errcode = (err as { errcode?: unknown }).errcode;
  const extended = typeof errcode === 'number' ? (EXTENDED[errcode] ?? `${code} ${errcode}`) : code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new LedgerError(
      `The ledger ${path} is damaged (${message}).`,
      path,
      'Move it aside to start a new ledger, or restore it from a backup.',
    );
  }
  // node:sqlite's words for a connection already closed: said as a closed ledger.
  if (/^(?:database is not open|statement has been finalized)/.test(message)) return closedLedger(path);
  if (code === 'CARBON_SCHEMA_NEWER') {
    return new LedgerError(
      `The ledger ${path} was written by a newer carbon (${message}).`,
      path,
      'Upgrade carbon, or point CARBON_HOME at another data directory.',
    );
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return lockedLedger(path);
  const unlike = notALedger(code, message, path);
  if (unlike !== undefined) return unlike;
  // A recursive mkdir that could not create a parent (read-only file system) says ENOENT.
  if (['SQLITE_READONLY', 'EACCES', 'EPERM', 'EROFS', 'SQLITE_CANTOPEN', 'ENOENT', 'ENOTDIR', 'EEXIST'].includes(code)) {
    return new LedgerError(
      `The ledger ${path} cannot be written (${message}).`,
      path,
      'Check the permissions of the data directory, or set CARBON_HOME to a writable one.',
    );
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return new LedgerError(`The disk holding ${path} is full.`, path, 'Free some space and try again; nothing was written.');
  }
  if (extended === 'SQLITE_IOERR_SHORT_READ') {
    // The WAL index (the -shm file, kept alive by a process that still has the old file open)
    // names pages the file at this path does not have: docs/reliability.md, "The ledger deleted".
    return new LedgerError(
      `The ledger ${path} was deleted or replaced while another process (such as carbon serve) still had it open, and no longer matches its write-ahead log.`,
      path,
      'Stop that process, then run the command again: it opens the file that is there now (a new ledger if there is none).',
    );
  }
  if (code === 'SQLITE_IOERR') {
    // Often a full disk too (no room for the WAL index), or a failing device: SQLite rolled back.
    return new LedgerError(
      `The ledger ${path} could not be read or written (${message}, ${extended}).`,
      path,
      'Check that the disk holding it has free space and works, then try again; nothing was written.',
    );
  }
  return err instanceof Error ? err : new Error(message);
}

/** A path that is no ledger carbon made: a directory where the file should be, or a file that lacks a table or column of carbon's. */
function notALedger(code: string, message: string, path: string): LedgerError | undefined {
  // No permission would mend a directory.
  if (code === 'SQLITE_CANTOPEN' && isDirectory(path))
    return new LedgerError(`The ledger ${path} is a directory, not a file.`, path, 'Move it aside: carbon makes a new ledger there.');
  // Dropped by hand, or another program's file: the statement did not run, so nothing was written.
  if (code === 'SQLITE_ERROR' && /^no such (?:table|column)\b/.test(message))
    return new LedgerError(
      `The ledger ${path} is damaged: it lacks a part carbon made (${message}).`,
      path,
      'Move it aside to start a new ledger, or restore it from a backup.',
      false,
      true,
    );
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
