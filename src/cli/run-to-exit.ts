import { LedgerError } from '../engine/ledger.js';
import type { Context } from './context.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { reportError } from './report-error.js';
import { keyFrom } from './settings.js';
import { afterLostOutput, createdStreams, onReaderGone, stderr, stdoutFailure } from './stdio.js';

/** Told the Context of the command that runs, so the run can release its engine whatever happened. */
export type ContextOpened = (ctx: Context) => void;

/** Where an error is reported: what reportError needs of the run. */
export type ErrorIO = Parameters<typeof reportError>[1];

/**
 * Runs a command and exits with the documented code: the one place that ends the process, for
 * the whole CLI (main.ts) and for the quick start (quick.ts) alike. `command` is told the Context
 * it opens; `known` may answer an error of its own kind (commander's) with an exit code, and any
 * other error is reported with the command's mode and engine.
 */
export async function runToExit(
  argv: readonly string[],
  command: (opened: ContextOpened) => Promise<unknown>,
  known?: (err: unknown, io: ErrorIO) => number | undefined,
): Promise<never> {
  // The Context of the command that ran, if one did, so its engine is released whatever happened.
  let running: Context | undefined;
  // Options end at `--`: what follows is an argument, however it reads.
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  const io: ErrorIO = {
    json: options.includes('--json'),
    env: process.env,
    get stderr() {
      return stderr();
    },
    ...(options.includes('--no-color') ? { color: false } : {}),
  };
  // A command whose work never settles (waiting on nothing: a bug) would let Node exit 0 once the
  // event loop is empty, which a script takes for success. It is reported as the failure it is.
  process.once('beforeExit', () => {
    process.exitCode = reportError(
      new Error('carbon stopped before the command finished: it was left waiting on nothing (a bug in carbon).'),
      io,
    );
  });
  let code: number = EXIT.ok;
  try {
    await command((ctx) => (running = ctx));
  } catch (err) {
    if (running !== undefined && err instanceof LedgerError) running.ledgerFailed = true;
    const settings = running?.settings;
    const scene = settings === undefined ? undefined : { mode: settings.mode, engine: settings.engine, keyFrom: keyFrom(settings) };
    code =
      known?.(err, io) ??
      reportError(err !== undefined && err === stdoutFailure() ? lostOutput(err as NodeJS.ErrnoException) : err, io, scene);
  }
  // The code is decided: a reader gone from here on (the EPIPE of the command's last line comes a
  // tick later, while the ledger closes) no longer ends it quietly with 0 (stdio.ts).
  onReaderGone(() => {});
  try {
    // A ledger that failed the command (stalled, unreachable) is waited on a second more at most (its journal's last
    // write and its connections' end each waited a deadline: an error at 5 s, the exit at 14 s); what the journal held
    // then is lost, as a stall loses it. Any other end closes fully: a slow ledger still takes its journal's entries.
    const closing = running?.close({ exiting: true });
    await (running?.ledgerFailed ? Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1_000))]) : closing);
  } catch {
    // Closing a handle cannot change what the command did.
  }
  // process.exit() drops output still queued for a slow pipe reader (`carbon list --all --json | jq`
  // lost its last offsets under load), so wait until both streams have handed everything over.
  // Only the streams that were created: most commands never create stderr, and many not stdout (stdio.ts).
  await Promise.all(createdStreams().map(flushed));
  const lost = stdoutFailure();
  if (lost !== undefined && code === EXIT.ok) {
    code = reportError(lostOutput(lost), io);
    await Promise.all(createdStreams().map(flushed));
  }
  return exitWith(code);
}

/**
 * Exits with `code` once the ticks queued so far have run: Node prints a warning (a deprecation,
 * the runtime's own) on a later tick, so one raised while the command ran is printed, not lost to
 * the exit.
 */
async function exitWith(code: number): Promise<never> {
  await new Promise((resolve) => process.nextTick(resolve));
  process.exit(code);
}

/** stdout failed (not a reader that went away): the command did its work, but what it printed did not all arrive. */
function lostOutput(err: NodeJS.ErrnoException): CliError {
  const done = afterLostOutput();
  return new CliError(
    `Could not write to stdout (${err.code ?? err.message}): what was printed there is incomplete.${done === undefined ? '' : ` ${done.line}`}`,
    EXIT.failure,
    'output_error',
    err.code === 'ENOSPC' ? 'Free some space, or send the output elsewhere.' : undefined,
    done?.fields,
  );
}

/** Resolves once everything written so far to `stream` has been handed to the OS (or it failed). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
  });
}
