import { closeSync, existsSync, fstatSync, openSync, statSync } from 'node:fs';

/**
 * A ledger file as this process holds it, whichever of its connections use it (the library opened
 * twice on one directory):
 *
 * - Whose turn it is. Each connection runs one transaction at a time, and two on one file share a
 *   turn too. Otherwise the second's BEGIN IMMEDIATE waits in SQLite's busy handler, which sleeps on
 *   the thread: the first's commit, on that same thread, never comes, and both wait the whole busy
 *   timeout (5 s) before one fails "locked by another process". Processes still serialise on
 *   SQLite's own lock.
 * - The descriptors identity.ts watches (the file, its -wal and -shm), opened once and closed with
 *   the process's last connection to it: POSIX locks belong to the process, so closing any
 *   descriptor of a file drops every lock SQLite's other connections hold on it, and the next
 *   process to close would take itself for the last and delete the log under them.
 */
export interface HeldFile {
  running: Promise<unknown> | null;
  /** The ledger file's descriptor. */
  readonly fd: number;
  /** The -wal and -shm descriptors, once both files were there to open. */
  sidecars: { fd: number; suffix: string }[] | null;
}

/** A turn alone, for a ledger no other connection can open (in memory). */
export type Turn = Pick<HeldFile, 'running'>;

const held = new Map<string, HeldFile & { users: number }>();

/** The file at `path` as this process holds it, shared with its other connections to it (by device and inode). */
export function holdFile(path: string): { key: string; file: HeldFile } {
  // Found by a stat of the path: a descriptor opened to find it, then closed, would drop the locks.
  const { dev, ino } = statSync(path);
  const known = held.get(`${dev}:${ino}`);
  if (known !== undefined) {
    known.users++;
    return { key: `${dev}:${ino}`, file: known };
  }
  const fd = openSync(path, 'r');
  const opened = fstatSync(fd);
  const key = `${opened.dev}:${opened.ino}`;
  const fresh = { running: null, fd, sidecars: null, users: 1 };
  held.set(key, fresh);
  return { key, file: fresh };
}

/** The -wal and -shm descriptors of `path`, or null (tried again at the next write) while either is not there yet. */
export function openSidecars(path: string): { fd: number; suffix: string }[] | null {
  if (!existsSync(`${path}-wal`) || !existsSync(`${path}-shm`)) return null;
  try {
    return ['-wal', '-shm'].map((suffix) => ({ fd: openSync(`${path}${suffix}`, 'r'), suffix }));
  } catch {
    return null;
  }
}

/** A connection to the file closed (after its own close): its descriptors go with the process's last one. */
export function releaseFile(key: string): void {
  const file = held.get(key);
  if (file === undefined || --file.users > 0) return;
  held.delete(key);
  closeSync(file.fd);
  for (const { fd } of file.sidecars ?? []) closeSync(fd);
}

/** A turn of its own, for a ledger no other connection can open (in memory). */
export const ownTurn = (): Turn => ({ running: null });
