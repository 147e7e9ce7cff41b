import type { Offset } from '../../api/types.js';
import type { CarbonClient } from '../../client/client.js';
import { CarbonApiError, CarbonConnectionError, WaitTimeoutError } from '../../client/errors.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT, exitCodeForStatus } from '../exit-codes.js';
import { followUp } from '../follow-up.js';
import { print as printAs, printResource } from '../print.js';
import { offsetCard, offsetPlain } from '../render/resources.js';
import { bySigterm, onStopSignal, untilStopped } from '../stop-signals.js';

export const DEFAULT_WAIT_SECONDS = 120;
/** How long past --timeout a poll under way may take to answer before the wait ends without it. */
export const POLL_GRACE_MS = 1_000;

/** How long a wait may take: --timeout, or DEFAULT_WAIT_SECONDS. */
const waitMs = (ctx: Context): number => (ctx.settings.timeoutSeconds ?? DEFAULT_WAIT_SECONDS) * 1000;

/** --timeout as a line that ends a wait names it: its seconds, and whether they are the default (none was given). */
export const timeoutNamed = (seconds: number | undefined): string =>
  seconds === undefined ? `--timeout (${DEFAULT_WAIT_SECONDS} s, the default)` : `--timeout (${seconds} s)`;

/**
 * `show --wait`'s first read of the offset, as one of the wait's polls: a server that accepts and
 * never answers (each attempt its own --timeout, retried) does not hold it past --timeout and
 * POLL_GRACE_MS, and it ends as a wait does at its time (exit 8), with no offset to print. Ctrl-C
 * or SIGTERM during it ends it as they end the wait: exit 130, with a line.
 */
export async function readForWait<T>(ctx: Context, id: string, read: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const { baseUrl, timeoutSeconds } = ctx.settings;
  const follow = `Follow it with \`${followUp(['show', id, '--wait'])}\`.`;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const line = `No answer from ${baseUrl ?? 'the ledger'} by ${timeoutNamed(timeoutSeconds)}: the read of ${id} was given up.`;
      reject(new CliError(line, EXIT.waitTimeout, 'wait_timeout', follow));
    }, waitMs(ctx) + POLL_GRACE_MS);
  });
  const stopped = (signal: NodeJS.Signals) =>
    new CliError(`Stopped waiting${bySigterm(signal)} before ${id} was read. ${follow}`, EXIT.interrupted, 'interrupted');
  try {
    return await untilStopped(Promise.race([read(), late]), stopped);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The spinner's last line: ✓ placed (as every other line that says something was done), or ⚠ refunded, in colour where stderr has it, and ora's own
 * fallbacks (√, ‼) where the terminal has no unicode (the Linux console; older Windows consoles).
 */
async function lastLine(ctx: Context, settled: Offset): Promise<{ symbol: string; text: string }> {
  const env = process.env;
  const unicode =
    process.platform === 'win32'
      ? Boolean(env.WT_SESSION) || env.TERM_PROGRAM === 'vscode' || env.TERM === 'xterm-256color'
      : env.TERM !== 'linux';
  const paint = await ctx.paint('stderr');
  const symbol = settled.status === 'placed' ? paint.green(unicode ? '✓' : '√') : paint.yellow(unicode ? '⚠' : '‼');
  return { symbol, text: `${settled.id} ${settled.status}` };
}

/** The wait's spinner on stderr, where spinners are shown; undefined elsewhere. */
async function waitSpinner(
  ctx: Context,
  offset: Offset,
): Promise<{ text: string; stop(): void; stopAndPersist(o: { symbol: string; text: string }): void } | undefined> {
  // A terminal that reports 0 columns (a pty nobody sized: `script` in CI, some `docker exec -t`)
  // makes ora count Infinity lines to clear, and its clear() then never returns: no spinner there.
  if (!ctx.out.spinners || (ctx.out.stderr as { columns?: number }).columns === 0) return undefined;
  const { default: ora } = await import('ora');
  // discardStdin off: ora would otherwise put the terminal in raw mode, and Ctrl-C would be
  // read as a character instead of interrupting. --no-color and NO_COLOR reach it too (ora's own
  // colours know neither).
  return ora({
    text: `Waiting for ${offset.id} to be placed…`,
    stream: ctx.out.stderr,
    color: ctx.out.stderrColor ? 'green' : false,
    isEnabled: true,
    discardStdin: false,
  }).start();
}

/**
 * Waits until an offset is placed or refunded, with an ora spinner when stderr is a terminal
 * (and nothing at all otherwise). WaitTimeoutError propagates: reportError() turns it into exit 8.
 */
async function waitForOffset(ctx: Context, client: CarbonClient, offset: Offset, review: boolean, startedMs: number): Promise<Offset> {
  if (offset.status !== 'processing') return offset;
  // What is left of --timeout since the wait began (`show --wait`'s first read is part of it).
  const timeoutMs = Math.max(0, waitMs(ctx) - (performance.now() - startedMs));
  // On a terminal, a live wait on the local model says what it waits for and how to end it now.
  if (ctx.out.stderrInteractive && !ctx.out.json && offset.livemode && ctx.settings.engine === 'local')
    ctx.out.info(await localLiveNote(ctx, offset, review));
  const spinner = await waitSpinner(ctx, offset);
  // Ctrl-C (or a CI job's SIGTERM) stops the wait at once: the offset is printed (a script or a
  // person can follow it), then exit 130. So does --timeout, with a poll under way a second to
  // answer: one that hangs (a server that accepts and never answers, retried) is left, exit 8.
  let last = offset;
  let release = () => {};
  const stopped = new Promise<never>((_, reject) => {
    const deadline = setTimeout(() => reject(new WaitTimeoutError(last)), timeoutMs + POLL_GRACE_MS);
    const unlisten = onStopSignal((signal) => reject(new WaitInterrupted(last, signal)));
    release = () => {
      clearTimeout(deadline);
      unlisten();
    };
  });
  try {
    const settled = await Promise.race([
      client.waitUntilSettled(offset.id, {
        timeoutMs,
        intervalMs: 500,
        onPoll: (o) => {
          last = o;
          if (spinner) spinner.text = `Waiting for ${o.id} to be placed… (${o.status})`;
        },
      }),
      stopped,
    ]);
    if (spinner) spinner.stopAndPersist(await lastLine(ctx, settled));
    return settled;
  } catch (err) {
    // A poll that failed after its retries ends the wait, not the offset: it is printed as last seen.
    if (err instanceof CarbonApiError || err instanceof CarbonConnectionError) throw new WaitBroken(last, err);
    throw err;
  } finally {
    release();
    spinner?.stop();
  }
}

/**
 * What a live wait on the local model waits for, and how to end it now: the model places a live
 * offset a minute (model time) after its purchase, or holds it for review above the limit.
 */
async function localLiveNote(ctx: Context, offset: Offset, review: boolean): Promise<string> {
  const held = review || (await (await ctx.sandbox()).awaitsReview(offset.id));
  if (held)
    return `${offset.id} waits for review (above the review limit): \`${followUp(['sandbox', 'review', 'approve', offset.id])}\` places it.`;
  const { TIMING } = await import('../../service/lifecycle.js');
  const seconds = TIMING.livePlacementMs / 1000;
  return `The local model places a live offset ${seconds} s (model time) after its purchase; \`${followUp(['sandbox', 'clock', 'advance', '1m'])}\` places it at once.`;
}

/** Ctrl-C or SIGTERM during a wait, with the offset as last seen; the line names SIGTERM (Ctrl-C is the user's own). */
class WaitInterrupted extends CliError {
  constructor(
    readonly offset: Offset,
    signal: NodeJS.Signals,
  ) {
    super(
      `Stopped waiting${bySigterm(signal)}: ${offset.id} is ${offset.status}. Follow it with \`${followUp(['show', offset.id, '--wait'])}\`.`,
      EXIT.interrupted,
      'interrupted',
    );
  }
}

/**
 * A poll of the wait failed after its retries (no answer, a 5xx, a 429): the offset exists, as last
 * seen, and the line says how to follow it; the exit code is the failure's own (1, 7, …).
 */
class WaitBroken extends CliError {
  constructor(
    readonly offset: Offset,
    err: CarbonApiError | CarbonConnectionError,
  ) {
    super(
      `${err.message} Stopped waiting: ${offset.id} is ${offset.status}. Follow it with \`${followUp(['show', offset.id, '--wait'])}\`.`,
      err instanceof CarbonApiError ? exitCodeForStatus(err.status, err.code) : EXIT.failure,
      err instanceof CarbonApiError ? err.code : 'connection_error',
    );
  }
}

interface PrintOptions {
  wait?: boolean;
  /** --quiet: the id alone. */
  quiet?: boolean;
  /** Held for review (the local model says so). */
  review?: boolean;
  /** When the wait began (performance.now()), if before this call: --timeout counts from then. */
  waitStartedMs?: number;
}

/**
 * Prints an offset, after waiting for it to settle when asked. On a timeout the offset is still
 * printed (it exists, and a script needs its id) before the error goes on to become exit 8; so it
 * is when a poll of the wait fails, or the wait is stopped.
 */
export async function printOffset(
  ctx: Context,
  client: CarbonClient,
  offset: Offset,
  { wait = false, quiet = false, review = false, waitStartedMs = performance.now() }: PrintOptions,
): Promise<void> {
  // --quiet: the id alone, one line, for xargs and loops.
  const print = quiet
    ? async (o: Offset) => void ctx.out.stdout.write(`${o.id}\n`)
    : review
      ? (o: Offset) => printAs(ctx, o, (v, paint) => offsetCard(v, paint, ctx.fromSandbox, true), offsetPlain)
      : (o: Offset) => printResource(ctx, o);
  let shown = offset;
  try {
    if (wait) shown = await waitForOffset(ctx, client, offset, review, waitStartedMs);
  } catch (err) {
    if (err instanceof WaitTimeoutError || err instanceof WaitInterrupted || err instanceof WaitBroken) await print(err.offset);
    throw err;
  }
  await print(shown);
  // A wait that ends refunded is a failure for a script: the offset is printed, then exit 9.
  if (wait && shown.status === 'refunded') {
    throw new CliError(
      `${shown.id} was refunded: the order could not be placed and the charge was returned.`,
      EXIT.refunded,
      'offset_refunded',
    );
  }
  if (shown.status === 'refunded') ctx.out.warn(`${shown.id} was refunded: the order could not be placed and the charge was returned.`);
}
