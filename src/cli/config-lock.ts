import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from '../platform/random.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';

/**
 * One writer of config.json at a time, across processes: CI runs `carbon config set` for several
 * profiles at once with one HOME, a person runs `carbon watch` (which keeps a profile's signing
 * secret) beside `config set`. Each writer reads the file, changes it and renames a new one into
 * place; without this, two at once each wrote what it had read plus its own change, and the
 * first one's change was lost. Readers take no lock: the rename makes every read whole.
 *
 * The lock is a file made with O_EXCL beside config.json, naming its holder (`pid host token`).
 * A holder that was killed (kill -9, a CI job cancelled) cannot remove it, so a waiter takes it
 * over when its holder is gone: on this host, when no process has its pid; from another host
 * (a HOME shared over NFS), or a lock with no name in it yet, when it is older than the longest
 * a write can take. A waiter gives up after WAIT_MS with one line naming the lock and its holder.
 */

const WAIT_MS = 10_000;
/** A lock whose holder cannot be asked (another host) is abandoned past this age; a write takes milliseconds. */
const FOREIGN_STALE_MS = 30_000;
/** A lock made but not yet named (its holder killed between open and write) is abandoned past this age. */
const UNNAMED_STALE_MS = 2_000;

interface Holder {
  /** The lock file's text, as read: a takeover checks it is still this file it moves aside. */
  text: string;
  pid: number | null;
  host: string | null;
  ageMs: number;
}

/** Runs `work` holding the lock `lockPath`, and removes the lock after, whatever `work` did. */
export async function withConfigLock<T>(lockPath: string, configPath: string, work: () => Promise<T>): Promise<T> {
  const own = await acquire(lockPath, configPath);
  try {
    return await work();
  } finally {
    release(lockPath, own);
  }
}

async function acquire(lockPath: string, configPath: string): Promise<string> {
  const own = `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')}\n`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (tryCreate(lockPath, own)) return own;
    const holder = readHolder(lockPath);
    if (holder === null) continue; // released between the two: try again at once
    if (abandoned(holder)) {
      takeOver(lockPath, holder);
      continue;
    }
    if (Date.now() >= deadline) throw busy(lockPath, configPath, holder);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 20)));
  }
}

/** Makes the lock if there is none; false if another holds it. Other errors (EACCES, EROFS, ENOSPC) are thrown. */
function tryCreate(lockPath: string, own: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, own);
  } catch (err) {
    closeSync(fd);
    unlinkSync(lockPath);
    throw err;
  }
  closeSync(fd);
  return true;
}

function readHolder(lockPath: string): Holder | null {
  try {
    const text = readFileSync(lockPath, 'utf8');
    const ageMs = Date.now() - statSync(lockPath).mtimeMs;
    const [pid, host] = text.trim().split(' ');
    const number = Number(pid);
    return { text, pid: Number.isSafeInteger(number) && number > 0 ? number : null, host: host ?? null, ageMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function abandoned(holder: Holder): boolean {
  if (holder.pid === null || holder.host === null) return holder.ageMs > UNNAMED_STALE_MS;
  if (holder.host !== hostname()) return holder.ageMs > FOREIGN_STALE_MS;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    // EPERM: a process of another user has that pid; it is alive.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes an abandoned lock. Several waiters may judge it abandoned at once: each moves it aside
 * under a name of its own (a rename moves it for one of them only) and removes what it moved if it
 * is the file it judged; if it is not (another waiter took over first and a live writer made a
 * new lock in between), it puts it back. Left open: a third writer making a lock in the instant
 * before it is put back, which needs three processes and an abandoned lock within microseconds.
 */
function takeOver(lockPath: string, holder: Holder): void {
  const aside = `${lockPath}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = readFileSync(aside, 'utf8');
  if (moved !== holder.text) tryCreate(lockPath, moved);
  unlinkSync(aside);
}

function release(lockPath: string, own: string): void {
  try {
    if (readFileSync(lockPath, 'utf8') === own) unlinkSync(lockPath);
  } catch {}
}

function busy(lockPath: string, configPath: string, holder: Holder): CliError {
  const who = holder.pid === null ? 'another process' : `process ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}`;
  return new CliError(
    `The config file ${configPath} is being changed by ${who}, and was still locked after ${WAIT_MS / 1000} s; nothing was changed.`,
    EXIT.failure,
    'config_locked',
    `Try again; if no carbon is running, remove ${lockPath}.`,
  );
}
