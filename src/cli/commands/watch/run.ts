import type { CarbonClient } from '../../../client/client.js';
import { CarbonApiError } from '../../../client/errors.js';
import { isoTime } from '../../../platform/iso-time.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { DEFAULT_WAIT_SECONDS, POLL_GRACE_MS, timeoutNamed } from '../../offsets/wait.js';
import { clockFor, parseWhen } from '../../options.js';
import { parseDuration, withReference } from '../../render/format.js';
import { stopName } from '../../stop-signals.js';
import { beginCursor, readCursor, writeCursor } from '../../watch/cursor.js';
import { givenUp, ridden, stillProcessing } from '../../watch/deadline.js';
import { type EventType, eventIds, freshState, poll, type WatchEvent, type WatchState } from '../../watch/follow.js';
import { forwardUrl } from '../../watch/forward-url.js';
import { signingSecret } from '../../watch/secret.js';
import { notPrinted, Stop } from '../../watch/stop.js';

/**
 * `carbon watch`: follows offsets as they change, on either engine, by reading the list every
 * --interval. One NDJSON event per change on stdout; `--forward-to` POSTs each, signed, to a local
 * app; `--until-settled` ends once every offset followed is placed or refunded (exit 0, 9, or 8
 * on --timeout, as --wait); `--cursor FILE` carries the state from one run to the next.
 */

export interface WatchFlags {
  reference?: string;
  status?: string;
  since?: string;
  interval?: string;
  forwardTo?: string;
  printSecret?: boolean;
  untilSettled?: boolean;
  cursor?: string;
}

const STATUS_EVENT: Record<string, EventType> = { processing: 'offset.created', placed: 'offset.placed', refunded: 'offset.refunded' };

export async function run(ctx: Context, flags: WatchFlags): Promise<void> {
  if (flags.printSecret) {
    const secret = await signingSecret(ctx, false);
    // With --json, a document (as `sandbox keys create --json` gives a key's secret), not a bare line.
    if (ctx.out.json) return ctx.out.jsonDocument({ profile: ctx.settings.profileName, secret });
    return ctx.out.data(secret);
  }
  const { intervalMs, forwardUrl } = checkFlags(flags);
  const mode = ctx.settings.mode;
  const reference = flags.reference ?? null;
  // Both judged before the client opens the model; the cursor first, as --since's clock (an age's, as in list) may open it.
  const resumed = flags.cursor === undefined ? null : readCursor(flags.cursor, mode, reference);
  const since = flags.since === undefined ? null : parseWhen(flags.since, '--since', await clockFor(ctx, [flags.since]));
  const client = await ctx.client();
  const terminal = ctx.out.stderrInteractive && !ctx.out.json;
  const stop = new Stop();
  const forwarder = forwardUrl === undefined ? undefined : await startForwarder(ctx, forwardUrl, { intervalMs, terminal, stop });
  if (terminal) {
    const which = `${mode} offsets${reference === null ? '' : ` ${withReference(reference)}`}`;
    ctx.out.info(`Watching ${which} every ${flags.interval ?? '2s'}${flags.untilSettled ? ' until they settle' : ''} (Ctrl-C to stop)…`);
  }

  // Ctrl-C or SIGTERM (or the reader gone) ends the run after the poll under way: the cursor is saved first.
  stop.listen();
  let ended: Ended;
  try {
    const begin = beginCursor(flags.cursor, resumed, since, freshState(mode, reference));
    const watch = { client, stop, forwarder, intervalMs, reference, since: begin.since, resumed: begin.resumed };
    ended = await follow(ctx, flags, watch, begin.initial);
  } finally {
    stop.release();
  }
  if (ended.why === 'settled') return;
  // The reader gone (`| head -1`) with every event printed delivered: the quiet end of a listing cut short.
  if (ended.why === 'signal' && stop.signal === null && ended.undelivered === 0) return;
  throw stopped(ctx, flags, ended, forwarder, stop.signal);
}

/** How a run ended, unless it threw: settled (--until-settled), or stopped by a signal (or the reader gone) or the deadline. */
type Ended = { why: 'settled' } | { why: 'signal' | 'deadline'; printed: number; undelivered: number; state: WatchState };

/**
 * The line a stopped run ends with. Ctrl-C or SIGTERM is the user's own stop: exit 130, said
 * plainly (what was printed and delivered, what was not, where the cursor is). The deadline of
 * --until-settled, or stdout's reader gone (no signal), with events undelivered: exit 12; the
 * deadline without: exit 8 (offsets still processing).
 */
function stopped(
  ctx: Context,
  flags: WatchFlags,
  ended: Exclude<Ended, { why: 'settled' }>,
  forwarder: Forwarder | undefined,
  signal: NodeJS.Signals | null,
): CliError {
  const { printed, undelivered } = ended;
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const done = forwarder === undefined ? plural(printed, 'event') : `${plural(printed, 'event')} (${forwarder.delivered} delivered)`;
  const again =
    flags.cursor === undefined
      ? 'the run had no --cursor, so the next one starts afresh (--cursor FILE carries them over)'
      : `the next run with --cursor ${flags.cursor} sends ${undelivered === 1 ? 'it' : 'them'}`;
  const found = notPrinted(undelivered, printed, forwarder?.delivered ?? 0);
  const lost = undelivered === 0 ? '' : `; ${plural(undelivered, 'event')} not delivered to ${forwarder?.url}${found}: ${again}`;
  const where = flags.cursor === undefined || undelivered > 0 ? '' : `; ${flags.cursor} holds where it stopped`;
  const fields = { printed, delivered: forwarder?.delivered ?? 0, undelivered };
  if (ended.why === 'signal' && signal === null) {
    const line = `Stopped watching: stdout's reader went away after ${done}${lost}.`;
    return new CliError(line, EXIT.undelivered, 'events_undelivered', undefined, fields);
  }
  if (ended.why === 'signal') {
    return new CliError(
      `Stopped watching (${stopName(signal)}) after ${done}${lost}${where}.`,
      EXIT.interrupted,
      'interrupted',
      undefined,
      fields,
    );
  }
  if (undelivered === 0) return stillProcessing(ctx, ended.state, flags.cursor);
  return new CliError(
    `Stopped at ${timeoutNamed(ctx.settings.timeoutSeconds)} after ${done}${lost}.`,
    EXIT.undelivered,
    'events_undelivered',
    undefined,
    fields,
  );
}

/** The interval, and the URL to forward to, checked before anything is read. */
function checkFlags(flags: WatchFlags): { intervalMs: number; forwardUrl: URL | undefined } {
  const intervalMs = flags.interval === undefined ? 2000 : parseDuration(flags.interval);
  if (intervalMs === null || intervalMs < 10 || intervalMs > 3_600_000)
    throw usage(`--interval must be a duration from 10ms to 1h, such as 2s or 500ms, not "${flags.interval}".`);
  if (flags.status !== undefined && !(flags.status in STATUS_EVENT))
    throw usage(`--status is one of processing, placed, refunded, not "${flags.status}".`);
  return { intervalMs, forwardUrl: flags.forwardTo === undefined ? undefined : forwardUrl(flags.forwardTo) };
}

type Forwarder = import('../../watch/forward.js').Forwarder;

/**
 * `--forward-to`: POSTs each event, signed with the profile's secret; with Carbon-Sandbox: true when the events are
 * the sandbox's: the local model's, or a carbon serve's (its answers say so, and a poll comes before any delivery).
 */
async function startForwarder(ctx: Context, url: URL, how: Pick<Watch, 'intervalMs' | 'stop'> & { terminal: boolean }) {
  const { Forwarder, maskSecret } = await import('../../watch/forward.js');
  const secret = await signingSecret(ctx, true);
  const { stop, terminal } = how;
  const forwarder = new Forwarder({
    url: url.href,
    secret,
    backoffMs: how.intervalMs,
    out: ctx.out,
    verbose: terminal,
    sleep: stop.sleep,
    stopped: () => stop.stopped,
    interrupted: stop.interrupted,
    sandbox: () => ctx.fromSandbox,
  });
  if (terminal) ctx.out.info(`Forwarding to ${forwarder.url}, signed with ${maskSecret(secret)} (header Carbon-Signature).`);
  return forwarder;
}

/** What a run follows, and how. */
interface Watch {
  client: CarbonClient;
  stop: Stop;
  forwarder: Forwarder | undefined;
  intervalMs: number;
  reference: string | null;
  since: number | null;
  /** Whether the state came from --cursor (else the first poll is the baseline, and sends nothing). */
  resumed: boolean;
}

/**
 * Polls until every offset followed has settled (with --until-settled), a signal stops the run,
 * or --until-settled's deadline passes while an event is still undelivered; throws when
 * --until-settled ends refunded, or at its deadline with offsets still processing.
 */
async function follow(ctx: Context, flags: WatchFlags, watch: Watch, initial: WatchState): Promise<Ended> {
  const { stop, forwarder } = watch;
  let state = initial;
  const deadline = flags.untilSettled
    ? Date.now() + (ctx.settings.timeoutSeconds ?? DEFAULT_WAIT_SECONDS) * 1000
    : Number.POSITIVE_INFINITY;
  const keep = (e: WatchEvent) => flags.status === undefined || STATUS_EVENT[flags.status] === e.type;
  const counts = { placed: 0, refunded: 0 };
  let printed = 0;
  const end = (why: 'signal' | 'deadline', undelivered: number): Ended => ({ why, printed, undelivered, state });
  // The last poll's failure, while the server fails (restarting, its ledger stalled).
  let failure: Error | undefined;
  const pollOnce = poller(ctx, watch, await eventIds(), () => failure);
  let first = true;
  for (;;) {
    // The poll works on a copy, kept only once its events are all out and delivered: a run
    // stopped halfway leaves the cursor where the poll began, and the next run sends them again
    // (at least once; an event's id says which it is). A delivery that fails is retried, never
    // passed by: the next event waits for it.
    const next = structuredClone(state);
    // Ctrl-C or SIGTERM during the poll ends the run at once, the cursor as it was.
    let found: WatchEvent[] | undefined;
    try {
      found = await pollOnce(next, first && !watch.resumed, deadline);
    } catch (err) {
      // A server restarting (or its ledger stalled) after the client's own retries: said once, and
      // tried again at the interval, as `stripe listen` reconnects; --until-settled's deadline bounds it.
      const failed = ridden(ctx, err, deadline);
      if (failure === undefined) ctx.out.warn(`${failed.message} Trying again every ${flags.interval ?? '2s'}.`);
      failure = failed;
      await stop.sleep(Math.min(watch.intervalMs, Math.max(0, deadline - Date.now())));
      if (stop.stopped) return end('signal', 0);
      continue;
    }
    if (failure !== undefined) ctx.out.info('Reached again: watching on.');
    failure = undefined;
    first = false;
    if (found === undefined) return end('signal', 0);
    const events = found.filter(keep);
    for (const [i, event] of events.entries()) {
      ctx.out.stdout.write(`${JSON.stringify(event)}\n`);
      printed++;
      if (forwarder !== undefined && !(await forwarder.deliver(event, deadline)))
        return end(stop.stopped ? 'signal' : 'deadline', events.length - i);
      // Stopped between two events: those left are not sent (nor printed) by this run.
      if (stop.stopped && i < events.length - 1) return end('signal', forwarder === undefined ? 0 : events.length - i - 1);
      // --until-settled's deadline passed while a slow app took each event: it bounds the run, and
      // those left wait for the next (not every event of the poll, however long each takes).
      if (forwarder !== undefined && Date.now() >= deadline && i < events.length - 1) return end('deadline', events.length - i - 1);
    }
    for (const event of found) if (event.type !== 'offset.created') counts[event.type === 'offset.placed' ? 'placed' : 'refunded']++;
    state = next;
    if (flags.cursor !== undefined) writeCursor(flags.cursor, state);
    if (flags.untilSettled && Object.keys(state.pending).length === 0) return settled(ctx, counts);
    if (stop.stopped) return end('signal', 0);
    if (Date.now() >= deadline) throw stillProcessing(ctx, state, flags.cursor);
    await stop.sleep(Math.min(watch.intervalMs, Math.max(0, deadline - Date.now())));
    if (stop.stopped) return end('signal', 0);
  }
}

/** The end of --until-settled: success, unless some offsets were refunded. */
function settled(ctx: Context, counts: { placed: number; refunded: number }): Ended {
  const what = `${counts.placed} placed, ${counts.refunded} refunded`;
  if (counts.refunded > 0) {
    throw new CliError(
      `Every offset followed has settled (${what}): some were refunded, their orders not placed.`,
      EXIT.refunded,
      'offset_refunded',
    );
  }
  if (!ctx.out.json) ctx.out.info(`✓ Every offset followed has settled (${what}).`);
  return { why: 'settled' };
}

/**
 * One poll of the list into `next`: Ctrl-C or SIGTERM during it ends the run at once, the cursor as it was; so does
 * --until-settled's deadline, a second past it, with a poll a server took and never answered (exit 1, said so).
 */
function poller(ctx: Context, watch: Watch, eventId: Awaited<ReturnType<typeof eventIds>>, failure: () => Error | undefined) {
  const { client, stop, reference } = watch;
  const late = () => givenUp(ctx, failure());
  const found = (err: unknown) => !(err instanceof CarbonApiError && err.status === 404);
  return (next: WatchState, baseline: boolean, deadline: number) =>
    stop.orInterrupted(
      poll(next, client.listAll(reference === null ? {} : { reference }), {
        baseline,
        since: watch.since,
        now: () => isoTime(Date.now()),
        eventId,
        exists: (id) => client.get(id).then(() => true, found),
        warn: (line) => ctx.out.warn(line),
      }),
      Number.isFinite(deadline) ? { at: deadline + POLL_GRACE_MS, late } : undefined,
    );
}
