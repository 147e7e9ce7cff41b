import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the purchase path. SQLite's automatic checkpoint runs inside the commit
 * that crosses 1,000 WAL pages, so about one purchase in a hundred waited 4–14 ms for it (the
 * p99 of a purchase). A process that keeps writing (`carbon serve`, a loop over the library)
 * hands them instead to a worker thread with its own connection, which runs a PASSIVE
 * checkpoint every few milliseconds: PASSIVE never takes the write lock and never waits, so a
 * purchase does not wait for it, and the WAL is reset by the next commit once it has all been
 * copied back. A one-shot command never starts it: its connection's close checkpoints.
 *
 * A writer that never pauses (a tight loop of purchases) gives the WAL no moment in which it is
 * all copied back, so it would grow without end (measured: 4 GB in 12 s). The worker therefore
 * publishes the WAL's length in shared memory, and past WAL_HIGH pages the store lets its own
 * commits checkpoint again, as SQLite does by default, until the WAL is short again.
 *
 * Nothing about what a commit guarantees changes: a commit is durable when it is in the WAL
 * (synchronous=NORMAL, docs/reliability.md); a checkpoint only copies committed pages into the
 * database file, and SQLite recovers one interrupted at any point.
 */

/** Pages in the WAL past which the writer checkpoints itself again (64 MiB of 4 KiB pages). */
export const WAL_HIGH = 16384;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { existsSync } = require('node:fs');
// Node 22's one ExperimentalWarning for node:sqlite, as the store silences it (driver.ts).
const emit = process.emitWarning;
process.emitWarning = (w, ...rest) => (/^SQLite is an experimental/.test(String(w)) ? undefined : emit.call(process, w, ...rest));
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
process.emitWarning = emit;
const wal = new Int32Array(workerData.shared);
// Opening a path that is gone would make an empty file there.
if (!existsSync(workerData.path)) throw new Error('the ledger is gone');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    const row = checkpoint.get();
    // -1 when another process's checkpoint holds the lock: the last length stands.
    if (row.log >= 0) Atomics.store(wal, 0, row.log);
  } catch {
    // Busy or gone: the next tick tries again; the store's own close checkpoints at the end.
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.postMessage('stopped');
});
`;

export interface Checkpointer {
  /** Pages in the WAL when the worker last looked (-1 before it has). */
  walPages(): number;
  /** Stops the worker, after its current checkpoint (if any) is done. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, intervalMs = 5): Checkpointer {
  const shared = new SharedArrayBuffer(4);
  const wal = new Int32Array(shared);
  wal[0] = -1;
  const worker = new Worker(WORKER, { eval: true, workerData: { path, intervalMs, shared } });
  // A process that is otherwise done must not stay up for it.
  worker.unref();
  worker.on('error', () => {
    // It could not open the ledger (removed under us): the checkpoint then happens at close.
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  void exit.then(() => (exited = true));
  let stopped: Promise<void> | undefined;
  return {
    walPages: () => (exited ? Number.MAX_SAFE_INTEGER : Atomics.load(wal, 0)),
    stop() {
      if (stopped === undefined) {
        if (!exited) {
          worker.once('message', () => void worker.terminate());
          worker.postMessage('stop');
        }
        stopped = exit;
      }
      return stopped;
    },
  };
}
