import {
  createReadStream,
  createWriteStream,
  existsSync,
  fchmodSync,
  fstatSync,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  type WriteStream,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import pkg from '../../../../package.json' with { type: 'json' };
import { checkSnapshot } from '../../../engine/snapshot-check.js';
import { keysNotKnownHere } from '../../../service/sandbox-model.js';
import { linesOf, SnapshotError } from '../../../service/snapshot-format.js';
import type { SnapshotSummary } from '../../../service/snapshots.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { print } from '../../print.js';
import { grouped } from '../../render/format.js';
import { snapshotCard, snapshotPlain, statusCard, statusPlain } from '../../render/sandbox.js';
import { bySigterm, onStopSignal } from '../../stop-signals.js';
import { note, open } from './shared.js';

/**
 * `carbon sandbox snapshot save|load FILE` (docs/snapshots.md): the whole model to one file and
 * back, `-` for stdout and stdin. A refused file is one line, exit 2, and the ledger untouched.
 */

/** A write that waits while the reader is behind (a pipe, a slow disk): a large ledger is never held whole. */
function writer(stream: Writable): (text: string) => Promise<void> {
  return (text) =>
    new Promise((resolve, reject) => {
      const failed = (err: Error) => reject(err);
      stream.once('error', failed);
      const done = () => {
        stream.off('error', failed);
        resolve();
      };
      if (stream.write(text)) done();
      else stream.once('drain', done);
    });
}

const ended = (stream: WriteStream) =>
  new Promise<void>((resolve, reject) => {
    stream.once('error', reject);
    stream.end((err?: Error | null) => (err ? reject(err) : resolve()));
  });

/** "12 offsets, 3 keys, 7 Idempotency-Keys": what a person checks first. */
const held = (s: SnapshotSummary) =>
  [
    [s.counts.offsets ?? 0, 'offset'],
    [s.counts.api_keys ?? 0, 'key'],
    [s.counts.idempotency ?? 0, 'Idempotency-Key'],
  ]
    .map(([n, what]) => `${grouped(n as number)} ${what}${n === 1 ? '' : 's'}`)
    .join(', ');

/** An empty FILE (an unset variable, `save "$SEED"`) names nothing: said before anything is read or written. */
function named(file: string, dash: 'stdout' | 'stdin'): void {
  if (file === '') throw usage(`FILE is empty: give a file name, or - for ${dash}.`);
}

export async function snapshotSave(ctx: Context, file: string, flags: { withJournal?: boolean }): Promise<void> {
  named(file, 'stdout');
  // Said before the ledger is opened: in a fresh home, a save that cannot be made makes no sandbox either.
  const noDirectory = () => usage(`No such directory: ${dirname(file)}; nothing was saved.`);
  if (file !== '-' && !existsSync(dirname(resolve(file)))) throw noDirectory();
  const snapshots = await (await open(ctx, 'snapshot save')).snapshots();
  const options = { carbon: pkg.version, journal: flags.withJournal === true };
  if (file === '-') {
    const summary = await snapshots.save(writer(ctx.out.stdout), options);
    await note(ctx, () => `✓ Saved the sandbox (${held(summary)}) to stdout.`);
    return;
  }
  const target = saveTarget(file);
  // A regular file is written beside itself and renamed over it once whole: a failed save leaves no half file.
  const tmp = target.through ? target.path : `${target.path}.${process.pid}.tmp`;
  let fd: number;
  try {
    // Opened before the ledger is read: a file that cannot be made is said at once. Opened by the
    // stream instead, its error came while the ledger was being read (over the network, on
    // PostgreSQL) with nothing listening yet, and ended the process with a stack trace.
    fd = openSync(tmp, target.through ? 'w' : 'wx', 0o666);
    if (target.mode !== undefined) fchmodSync(fd, target.mode);
  } catch (err) {
    // The file is to be made: what is missing is the directory it goes in.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw existsSync(dirname(resolve(file))) ? usage(`${file} cannot be made in ${dirname(file)}; nothing was saved.`) : noDirectory();
    throw fileError(err, file);
  }
  const stream = createWriteStream(tmp, { fd });
  // A write that fails later (a full disk) is kept until the next write or the end, which throw it.
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
  });
  const write = writer(stream);
  let summary: SnapshotSummary;
  try {
    summary = await snapshots.save(async (text) => {
      if (failure !== undefined) throw failure;
      await write(text);
    }, options);
    await ended(stream);
    if (failure !== undefined) throw failure;
    if (!target.through) renameSync(tmp, target.path);
  } catch (err) {
    stream.destroy();
    try {
      if (!target.through) unlinkSync(tmp);
    } catch {}
    throw fileError(err, file);
  }
  await note(ctx, (p) => `${p.green('✓')} Saved the sandbox (${held(summary)}) to ${file}.`);
  // Saved to stdout by name (/dev/stdout): nothing more goes after the snapshot, as with `-`.
  if (!target.through || !sameFile(target.path, 1)) await print(ctx, summary, snapshotCard, snapshotPlain);
}

function sameFile(path: string, fd: number): boolean {
  try {
    const [a, b] = [statSync(path), fstatSync(fd)];
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/**
 * Where a save writes. A regular file, through any symlinks to it: its temporary copy goes beside
 * it and is renamed over it (the link stays a link), with the mode the file had. Anything else
 * that is there (a device such as /dev/stdout or /dev/full, a named pipe, >(gzip)) is written
 * through, as `-` is: renamed over, it was replaced by a file (with root's rights) or refused.
 */
function saveTarget(file: string): { path: string; through: boolean; mode?: number } {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch {
    return { path: file, through: false };
  }
  if (stat.isDirectory()) throw usage(`${file} is a directory.`);
  if (!stat.isFile()) return { path: file, through: true };
  return { path: realpathSync(file), through: false, mode: stat.mode & 0o7777 };
}

/** Lines of FILE, or of stdin (which can be read once). */
function source(file: string): () => AsyncIterable<string> {
  if (file !== '-') {
    const stat = statOf(file);
    if (!stat.isFile()) throw usage(`${file} is not a file.`);
    return () => linesOf(createReadStream(file));
  }
  let read = false;
  return () => {
    if (read) throw new CliError('The ledger was busy and stdin cannot be read twice: load the snapshot from a file.', EXIT.failure);
    read = true;
    return linesOf(process.stdin);
  };
}

function statOf(file: string) {
  try {
    return statSync(file);
  } catch (err) {
    throw fileError(err, file);
  }
}

/**
 * The file checked in a scratch ledger (engine/snapshot-check.ts). Ctrl-C or SIGTERM ends the check
 * at the next line, so its scratch ledger is removed (killed by the signal, it stayed in TMPDIR):
 * exit 130, one line.
 */
async function checkStoppable(lines: () => AsyncIterable<string>, name: string): Promise<SnapshotSummary> {
  // The signal rejects the line being read: a check waiting on stdin stops at once too. A promise
  // of its own for each line, not one raced with every line: each race left a reaction on it, and
  // a million-offset file held three million of them (880 MB; BENCHMARKS.md, "Snapshots").
  let stopped: CliError | undefined;
  let stopLine: ((err: CliError) => void) | undefined;
  const release = onStopSignal((signal) => {
    stopped = new CliError(`Stopped${bySigterm(signal)}: ${name} was not checked, and nothing was loaded.`, EXIT.interrupted, 'cancelled');
    stopLine?.(stopped);
  });
  async function* lineByLine(): AsyncGenerator<string> {
    const it = lines()[Symbol.asyncIterator]();
    try {
      for (;;) {
        if (stopped !== undefined) throw stopped;
        const next = await new Promise<IteratorResult<string>>((resolve, reject) => {
          stopLine = reject;
          it.next().then(resolve, reject);
        });
        if (next.done) return;
        yield next.value;
      }
    } finally {
      stopLine = undefined;
      // Not awaited: a generator's return waits for the line it is reading (stdin that sends none).
      void it.return?.()?.catch(() => {});
    }
  }
  try {
    return await checkSnapshot(lineByLine);
  } finally {
    release();
  }
}

export async function snapshotLoad(ctx: Context, file: string, flags: { dryRun?: boolean }): Promise<void> {
  named(file, 'stdin');
  const lines = source(file);
  const name = file === '-' ? 'stdin' : file;
  try {
    if (flags.dryRun) {
      const summary = await checkStoppable(lines, name);
      await note(ctx, () => `${name} is a whole snapshot (${held(summary)}); nothing was loaded (--dry-run).`);
      await print(ctx, summary, snapshotCard, snapshotPlain);
      return;
    }
    // Into a home with no ledger yet, a file is loaded into a scratch ledger before the ledger is
    // made: one it refuses makes no sandbox (bad input changes nothing). stdin cannot be read twice.
    if (file !== '-' && (await ctx.ledgerMissing())) await checkStoppable(lines, name);
    const sandbox = await open(ctx, 'snapshot load');
    const summary = await (await sandbox.snapshots()).load(lines);
    await note(
      ctx,
      (p) => `${p.green('✓')} Loaded ${name} (${held(summary)}): the sandbox is as it was saved, its clock at ${summary.clock.now}.`,
    );
    // Its keys work for whoever holds their text, but saved elsewhere, none of that text is here (docs/snapshots.md).
    if (await keysNotKnownHere(sandbox, 'test'))
      await note(
        ctx,
        () =>
          "Its keys' text is not known here (a snapshot holds none): run `carbon sandbox keys create` for a test key local commands use, or set CARBON_API_KEY to one of its keys.",
      );
    await print(ctx, await sandbox.status(), statusCard, statusPlain);
  } catch (err) {
    if (err instanceof SnapshotError)
      throw new CliError(`${name} was not loaded: ${err.message}. The ledger is unchanged.`, EXIT.usage, err.code);
    throw fileError(err, file);
  }
}

/** A file that cannot be read or written, in one line. */
function fileError(err: unknown, file: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return usage(`No such file: ${file}.`);
  if (code === 'EISDIR') return usage(`${file} is a directory.`);
  if (code === 'ENOTDIR') return usage(`${dirname(file)} is a file, not a directory; nothing was done.`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC')
    return new CliError(`${file} cannot be ${code === 'ENOSPC' ? 'written: the disk is full' : 'used: permission denied'}.`, EXIT.failure);
  return err;
}
