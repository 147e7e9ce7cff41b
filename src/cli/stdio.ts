import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { EXIT } from './exit-codes.js';

/**
 * process.stdout and process.stderr, created on first use. Node creates a stdio stream the first
 * time it is read, and for a pipe that loads node:net and node:stream (~3–6 ms of a ~40 ms
 * start-up); most runs never write to stderr, and `--json`, `--help` and `--version` write their
 * few kilobytes to stdout with writeStdout(), straight to the file descriptor. runToExit() flushes a
 * stream before exiting only if it was created.
 */
let out: NodeJS.WriteStream | undefined;
let err: NodeJS.WriteStream | undefined;
/** The first error stdout reported that was not EPIPE (see stdoutFailure). */
let outFailure: NodeJS.ErrnoException | undefined;
/** Told when the reader goes away (instead of the quiet exit 0), or a write fails, while a command needs to know (onReaderGone). */
let readerGone: ((err: NodeJS.ErrnoException) => void) | undefined;

/** process.stdout, which stops the process quietly when the reader has gone away. */
export function stdout(): NodeJS.WriteStream {
  if (out === undefined) {
    out = process.stdout;
    out.on('error', (e: NodeJS.ErrnoException) => {
      // The reader went away (`carbon list --all | head`): stop quietly, as a Unix tool does,
      // unless a command is in the middle of something that must not end as a success (onReaderGone).
      if (e.code === 'EPIPE') return readerGone === undefined ? process.exit(EXIT.ok) : readerGone(e);
      // Anything else (a full disk, an I/O error) is kept: runToExit() reports it (stdoutFailure),
      // and a command that would go on unseen (a batch buying) is told.
      outFailure ??= e;
      readerGone?.(e);
    });
  }
  return out;
}

/**
 * Why stdout lost what was written to it, if it did (`carbon buy --json > offset.json` on a full
 * disk): not the reader going away, which is a quiet end, but data that never arrived, which must
 * not end in exit 0 with a truncated file.
 */
export function stdoutFailure(): NodeJS.ErrnoException | undefined {
  // A file's stream reports its error only by the event; a pipe's may not have emitted it yet.
  const failed = outFailure ?? ((out?.errored ?? undefined) as NodeJS.ErrnoException | undefined);
  return failed?.code === 'EPIPE' ? undefined : failed;
}

/** What the command did that its stdout was to say, for the line of a stdout that fails (see afterLostOutput). */
let doneNote: { line: string; fields: Record<string, string | number> } | undefined;

/**
 * Says `line` (and puts `fields` in the --json envelope) if stdout fails: a command that did something
 * that cannot be undone (`carbon buy`: an offset bought) names it, so a full disk under
 * `> offset.json` is not a bare failure a script would retry, buying again.
 */
export function sayIfStdoutLost(line: string, fields: Record<string, string | number>): void {
  doneNote = { line, fields };
}

/** The note sayIfStdoutLost left, if any. */
export const afterLostOutput = (): { line: string; fields: Record<string, string | number> } | undefined => doneNote;

/**
 * Calls `gone` when stdout's reader goes away, instead of exiting quietly with 0, or when a write
 * to it fails (a full disk), until the function it returns is called: `buy --from-csv` stops
 * buying then, and says so (exit 10), as a batch that stopped half-way is no success, and none is
 * bought unseen. What is written to stdout afterwards is dropped.
 */
export function onReaderGone(gone: (err: NodeJS.ErrnoException) => void): () => void {
  readerGone = gone;
  return () => {
    if (readerGone === gone) readerGone = undefined;
  };
}

/**
 * process.stderr, whose failures are let go: its reader gone (`2>&1 | head`, a log shipper
 * restarting) or its disk full, nothing can be said about it, and the command goes on to its own
 * end and exit code (a dry run's verdict, a batch's 10, a server that keeps serving), where an
 * unhandled error would have ended it with 1.
 */
export function stderr(): NodeJS.WriteStream {
  if (err === undefined) {
    err = process.stderr;
    err.on('error', () => {});
  }
  return err;
}

/** The streams created so far: those runToExit() waits for before exiting. */
export function createdStreams(): NodeJS.WriteStream[] {
  return [out, err].filter((s) => s !== undefined);
}

/**
 * Writes to stdout: with write(2) while process.stdout has not been created, then through it, so
 * the order is kept. Anything but a complete write (EAGAIN from a non-blocking pipe, EPIPE, a
 * closed descriptor) hands the rest to process.stdout, which deals with it as it always has.
 * Not on Windows, where the console wants the stream's own encoding.
 *
 * The text is written as it is, not copied into a Buffer first: Node encodes it into memory it
 * frees at once, where a Buffer is native memory that stays until a collection. (process.stdout's
 * stream for a file made a Buffer of every write: `list --all` over a million offsets into a file
 * held 18 MB more for them, BENCHMARKS.md, "An eleventh sitting".)
 */
export function writeStdout(text: string): void {
  if (out !== undefined || process.platform === 'win32') {
    stdout().write(text);
    return;
  }
  let done = 0;
  let bytes: Buffer | undefined;
  try {
    done = writeSync(1, text);
    if (done === Buffer.byteLength(text)) return;
    // Written in part (a pipe that took what it had room for): the rest by the byte.
    bytes = Buffer.from(text);
    while (done < bytes.length) done += writeSync(1, bytes, done, bytes.length - done);
  } catch {
    bytes ??= Buffer.from(text);
    stdout().write(bytes.subarray(done));
  }
}

/**
 * Whether stdout is a file, or a device that is not a terminal (/dev/null): write(2) takes a
 * whole write there at once, so data streamed to it need not go through process.stdout, whose
 * stream for a file copies every string into a Buffer before writing it (see writeStdout).
 */
export function stdoutIsFile(): boolean {
  if (process.platform === 'win32') return false;
  try {
    const st = fstatSync(1);
    return st.isFile() || (st.isCharacterDevice() && !isatty(1));
  } catch {
    return false;
  }
}
