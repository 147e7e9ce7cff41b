import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the purchase path. SQLite's automatic checkpoint runs inside the commit
 * that crosses 1,000 WAL pages, so about one purchase in a hundred waited 4–14 ms for it (the
 * p99 of a purchase). A process that keeps writing (`carbon serve`, a loop over the library)
 * hands them instead to a worker thread with its own connection, which runs a PASSIVE
 * checkpoint once CHECKPOINT_COMMITS commits have been made since the last, or CHECKPOINT_MS
 * after the last if fewer have: PASSIVE never takes the write lock and never waits, so a
 * purchase does not wait for it, and the WAL is reset by the next commit once it has all been
 * copied back. A one-shot command never starts it: its connection's close checkpoints.
 *
 * Not one every few milliseconds whatever was written: each checkpoint syncs the WAL and the
 * ledger file, and the commit that resets the WAL after it syncs the WAL's new header on the
 * thread that answers. A server answering only reads writes one journal batch every few
 * milliseconds, and nearly every batch paid that sync (606 on the answering thread in 60,000
 * `GET /balance`, half a millisecond each on this machine's disk).
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
/** Commits after which the worker checkpoints (a purchase loop in process makes them every few milliseconds). */
const CHECKPOINT_COMMITS = 32;
/** The longest the worker waits after a commit before it checkpoints. */
const CHECKPOINT_MS = 50;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { existsSync } = require('node:fs');
// Node 22's one ExperimentalWarning for node:sqlite, as the store silences it (driver.ts).
const emit = process.emitWarning;
process.emitWarning = (w, ...rest) => (/^SQLite is an experimental/.test(String(w)) ? undefined : emit.call(process, w, ...rest));
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
process.emitWarning = emit;
// [0]: the WAL's length in pages, for the store; [1]: the store's commits, counted by
// committed(); [2]: the checkpoints run.
const shared = new Int32Array(workerData.shared);
// Opening a path that is gone would make an empty file there.
if (!existsSync(workerData.path)) throw new Error('the ledger is gone');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let done = 0;
let doneAt = Date.now();
const timer = setInterval(() => {
  const commits = Atomics.load(shared, 1);
  if (commits === done || (commits - done < workerData.commits && Date.now() - doneAt < workerData.maxWaitMs)) return;
  try {
    const row = checkpoint.get();
    // -1 when another process's checkpoint holds the lock: the last length stands.
    if (row.log >= 0) Atomics.store(shared, 0, row.log);
    done = commits;
    doneAt = Date.now();
    Atomics.add(shared, 2, 1);
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
  /** The store committed: counted towards the next checkpoint. */
  committed(): void;
  /** The checkpoints the worker has run. */
  checkpoints(): number;
  /** Stops the worker, after its current checkpoint (if any) is done. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, intervalMs = 5): Checkpointer {
  const shared = new SharedArrayBuffer(12);
  const counts = new Int32Array(shared);
  counts[0] = -1;
  const workerData = { path, intervalMs, shared, commits: CHECKPOINT_COMMITS, maxWaitMs: CHECKPOINT_MS };
  const worker = new Worker(WORKER, { eval: true, workerData });
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
    walPages: () => (exited ? Number.MAX_SAFE_INTEGER : Atomics.load(counts, 0)),
    committed: () => void Atomics.add(counts, 1, 1),
    checkpoints: () => Atomics.load(counts, 2),
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
