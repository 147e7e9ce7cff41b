import { Worker } from 'node:worker_threads';
import type { Db } from './driver.js';
import { SELF_CHECKPOINT_PAGES } from './sqlite-open.js';

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
 * The WAL restarts only after a checkpoint that ended with nothing committed while it ran. One of
 * 32 commits' pages, with its sync, outlasts the pauses of a server buying at a steady rate (2,000
 * a second: the WAL then restarted only when the writer copied it back itself, below, 3-6 ms on
 * the answering thread every 0.8 s). So past CHASE_PAGES the worker checkpoints at every look that
 * follows a commit, and when one ends with pages left it runs again at once, CHASE_TRIES in a row
 * at most: each copies only what was committed meanwhile, and one ends in a pause.
 *
 * A writer that never pauses (a tight loop of purchases) gives the WAL no moment in which it is
 * all copied back, so it would grow without end (measured: 4 GB in 12 s). The worker therefore
 * publishes the WAL's length in shared memory, and past WAL_HIGH pages the writer's connection
 * copies it back itself (WalCheckpoints), so that its next commit restarts it.
 *
 * Nothing about what a commit guarantees changes: a commit is durable when it is in the WAL
 * (synchronous=NORMAL, docs/reliability.md); a checkpoint only copies committed pages into the
 * database file, and SQLite recovers one interrupted at any point.
 */

/** Pages in the WAL past which the writer copies it back itself (64 MiB of 4 KiB pages). */
export const WAL_HIGH = 16384;
/** Commits after which the worker checkpoints (a purchase loop in process makes them every few milliseconds). */
const CHECKPOINT_COMMITS = 32;
/** The longest the worker waits after a commit before it checkpoints. */
const CHECKPOINT_MS = 50;
/** Pages in the WAL past which the worker checkpoints at every look that follows a commit (4 MiB). */
export const CHASE_PAGES = 1024;
/** The checkpoints in a row, at most, while pages are left over and the WAL is past CHASE_PAGES. */
export const CHASE_TRIES = 4;

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
let chasing = false;
const timer = setInterval(() => {
  const commits = Atomics.load(shared, 1);
  if (commits === done) return;
  if (!chasing && commits - done < workerData.commits && Date.now() - doneAt < workerData.maxWaitMs) return;
  try {
    let row = checkpoint.get();
    let runs = 1;
    for (; runs < workerData.chaseTries && row.log > workerData.chasePages && row.checkpointed < row.log; runs++) row = checkpoint.get();
    // -1 when another process's checkpoint holds the lock: the last length stands.
    if (row.log >= 0) Atomics.store(shared, 0, row.log);
    chasing = row.log > workerData.chasePages;
    done = commits;
    doneAt = Date.now();
    // After the length, so that the store reads a new count with the length it goes with.
    Atomics.add(shared, 2, runs);
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
  /** Pages in the WAL when the worker last looked (-1 while it does not look: before its first look, and once it has stopped). */
  walPages(): number;
  /** The store committed: counted towards the next checkpoint. */
  committed(): void;
  /** The checkpoints the worker has run (each run again while chasing counts). */
  checkpoints(): number;
  /** Stops the worker, after its current checkpoint (if any) is done. */
  stop(): Promise<void>;
}

/** How often the worker looks (ms), and the longest it waits after a commit (tests stretch it, to see the other rules alone). */
export interface CheckpointerTimes {
  intervalMs?: number;
  maxWaitMs?: number;
}

export function startCheckpointer(path: string, { intervalMs = 5, maxWaitMs = CHECKPOINT_MS }: CheckpointerTimes = {}): Checkpointer {
  const shared = new SharedArrayBuffer(12);
  const counts = new Int32Array(shared);
  counts[0] = -1;
  const workerData = {
    path,
    intervalMs,
    shared,
    commits: CHECKPOINT_COMMITS,
    maxWaitMs,
    chasePages: CHASE_PAGES,
    chaseTries: CHASE_TRIES,
  };
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
    walPages: () => (exited ? -1 : Atomics.load(counts, 0)),
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

/** Commits by one connection before its checkpoints move to a worker thread. */
const WORKER_AFTER = 32;

/**
 * Who checkpoints one connection's WAL, told after each of its commits: the connection's own
 * commits (wal_autocheckpoint, every SELF_CHECKPOINT_PAGES) while no worker looks at the WAL (its
 * first WORKER_AFTER commits, or after the worker stopped), then the worker. Past WAL_HIGH pages
 * the connection copies the WAL back itself, once for each length the worker reports, and its
 * next commit restarts the WAL. (Before, its commits checkpointed again, each past
 * SELF_CHECKPOINT_PAGES, until the worker next looked: two or three syncs of the disk a time on
 * the thread that buys, and a purchase's p99.9 over 2 ms; BENCHMARKS.md.)
 */
export class WalCheckpoints {
  private worker: Checkpointer | undefined;
  private autocheckpoint = true;
  /** The worker's checkpoint count when this connection last copied a long WAL back. */
  private copiedAt = -1;

  constructor(
    private readonly db: Db,
    private readonly path: string,
  ) {}

  /** Whether a worker was started: this connection kept writing. */
  get started(): boolean {
    return this.worker !== undefined;
  }

  committed(commits: number): void {
    if (this.worker === undefined) {
      if (commits < WORKER_AFTER || this.path === ':memory:') return;
      this.worker = startCheckpointer(this.path);
    }
    this.worker.committed();
    const pages = this.worker.walPages();
    // The connection's own commits checkpoint exactly while the worker does not look (pages -1).
    const unwatched = pages < 0;
    if (unwatched !== this.autocheckpoint) {
      this.autocheckpoint = unwatched;
      this.db.exec(`PRAGMA wal_autocheckpoint = ${unwatched ? SELF_CHECKPOINT_PAGES : 0}`);
    }
    if (pages > WAL_HIGH && this.worker.checkpoints() !== this.copiedAt) {
      this.copiedAt = this.worker.checkpoints();
      this.copyBack();
    }
  }

  /** Stops the worker, if one started, and copies back what it had not (the last connection's close copies all of it anyway). */
  async stop(): Promise<void> {
    if (this.worker === undefined) return;
    await this.worker.stop();
    this.copyBack();
  }

  private copyBack(): void {
    try {
      this.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // Busy, or a full disk: a later checkpoint takes it. A commit stands either way.
    }
  }
}
