import { MAX_REQUESTS_PAGE, type RequestEntry } from '../../../api/journal.js';
import { LedgerError } from '../../../engine/ledger.js';
import { NO_FILTER, type RequestFilter, statusRange } from '../../../service/journal-view.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { parseWhen, wholeNumberOption } from '../../options.js';
import { terminalWidth } from '../../render/fit.js';
import { requestCard, requestPlain, requestRow, requestStream, requestTable } from '../../render/requests.js';
import { onStopSignal, stopName } from '../../stop-signals.js';
import { journalSource } from './source.js';

export interface LogsFlags {
  status?: string;
  method?: string;
  path?: string;
  code?: string;
  since?: string;
  requestId?: string;
  limit?: string;
  follow?: boolean;
}

/** The flags as the journal's filter; a bad one is a usage error, before anything is read. */
function filterOf(ctx: Context, flags: LogsFlags): RequestFilter {
  if (flags.status !== undefined) {
    try {
      statusRange(flags.status);
    } catch {
      throw usage(`--status must be 2xx, 4xx, 5xx or a status code such as 404, not "${flags.status}".`);
    }
  }
  if (flags.method !== undefined && !/^[A-Za-z]{1,16}$/.test(flags.method)) throw usage(`--method must be a method such as GET or POST.`);
  if (flags.path !== undefined && !flags.path.startsWith('/')) throw usage(`--path is the start of a path, such as /api/v1/offsets.`);
  // An empty value (a script's unset variable) matches no entry: said, as the server says it.
  if (flags.code === '') throw usage('--code needs an error code, such as rate_limited.');
  if (flags.requestId === '') throw usage('--request-id needs a Request-Id, such as req_8dFj2kQ9xLm3Pz.');
  return {
    ...NO_FILTER,
    status: flags.status ?? null,
    method: flags.method?.toUpperCase() ?? null,
    path: flags.path ?? null,
    code: flags.code ?? null,
    since: flags.since === undefined ? null : parseWhen(flags.since, '--since'),
    requestId: flags.requestId ?? null,
    mode: ctx.settings.modeFlag ?? null,
    // With --follow, 0 is what it starts from anyway (as `tail -n 0 -f`): taken.
    limit: flags.limit === undefined ? 50 : wholeNumberOption(flags.limit, '--limit', { min: flags.follow ? 0 : 1, max: 1000 }),
  };
}

/** `carbon logs`: the newest entries, or (--follow) every new one as it is written. */
export async function list(ctx: Context, flags: LogsFlags): Promise<void> {
  const filter = filterOf(ctx, flags);
  const source = await journalSource(ctx);
  // --follow starts from now; with --limit, the newest that many first (as `tail -n N -f`).
  if (flags.follow) return follow(ctx, source, filter, flags.limit === undefined ? 0 : filter.limit);
  const entries = await source.entries(filter, 0);
  if (ctx.out.json) {
    if (entries.length > 0) ctx.out.data(entries.map((e) => JSON.stringify(e)).join('\n'));
    return;
  }
  if (!ctx.out.interactive) {
    if (entries.length > 0) ctx.out.data(entries.map(requestRow).join('\n'));
    return;
  }
  if (entries.length === 0) {
    // With the journal off here, nothing this machine's commands answer is recorded: said, or the empty journal puzzles.
    const off =
      ctx.settings.engine === 'local' && !ctx.settings.journal.enabled
        ? ' (CARBON_JOURNAL=off is set here: commands run with it record nothing; a carbon serve records what it answers unless it runs with it too)'
        : '';
    ctx.out.info(`No requests in the journal of ${source.where}${filtered(filter) ? ' match' : ' yet'}${off}.`);
    return;
  }
  ctx.out.data(requestTable(entries, await ctx.paint(), terminalWidth(ctx.out.stdout, ctx.env)));
}

const filtered = (f: RequestFilter) => [f.status, f.method, f.path, f.code, f.since, f.requestId, f.mode].some((v) => v !== null);

/** `carbon logs show req_…`: one entry whole, with both bodies. */
export async function show(ctx: Context, id: string): Promise<void> {
  const source = await journalSource(ctx);
  const entry = await source.entry(id);
  if (entry === undefined) {
    throw new CliError(
      `No request ${JSON.stringify(id.slice(0, 60))} in the journal of ${source.where}.`,
      EXIT.notFound,
      'resource_missing',
      'The journal keeps the newest entries only (carbon logs --help), and not what carbon serve could not read as HTTP (its 400 malformed_request or 431, which are in its own log); list the entries with `carbon logs`.',
    );
  }
  if (ctx.out.json) return ctx.out.jsonDocument(entry);
  ctx.out.data(ctx.out.interactive ? requestCard(entry, await ctx.paint()) : requestPlain(entry));
}

/**
 * Every entry written from now on, oldest first, until Ctrl-C or SIGTERM (exit 130): the newest seq is read first, then
 * each read waits (on the ledger, or on the served sandbox) for entries after the last one seen. `backlog`: how many
 * of the entries up to that seq are printed first (the newest of them, oldest first). The signals are heard from the
 * first read on: a server that takes the connection and never answers is left at once, with the same last line.
 */
async function follow(ctx: Context, source: Source, filter: RequestFilter, backlog: number): Promise<void> {
  const stop = new AbortController();
  // Which signal stopped it, for the last line: a service manager's SIGTERM is not the user's Ctrl-C.
  let heard: NodeJS.Signals | undefined;
  const release = onStopSignal((signal) => {
    heard = signal;
    stop.abort();
  });
  try {
    const begun = await orStopped(begin(source, filter, backlog), stop.signal);
    if (begun !== undefined) await followFrom(ctx, source, filter, begun, stop.signal);
  } catch (err) {
    // A served sandbox stops taking the key it was followed with: revoked, or replaced by a reset.
    if (!(err instanceof CliError) || err.exitCode !== EXIT.auth) throw err;
    throw new CliError(err.message, err.exitCode, err.code, KEY_GONE_HINT);
  } finally {
    release();
  }
  throw new CliError(`Stopped following (${stopName(heard)}).`, EXIT.interrupted, 'interrupted');
}

/** Where following starts: the newest seq (how far it has read the journal), and the backlog's entries up to it. */
async function begin(source: Source, filter: RequestFilter, backlog: number): Promise<{ read: number; earlier: RequestEntry[] }> {
  const read = await source.newestSeq();
  const earlier = backlog > 0 && read > 0 ? await source.entries({ ...filter, before: read + 1, limit: backlog }, 0) : [];
  return { read, earlier };
}

/** Prints the backlog, then every entry as it comes, until `signal` aborts. */
async function followFrom(
  ctx: Context,
  source: Source,
  filter: RequestFilter,
  begun: { read: number; earlier: RequestEntry[] },
  signal: AbortSignal,
): Promise<void> {
  // How far it has read the journal (with a filter, past the last entry printed).
  let read = begun.read;
  const draw = ctx.out.json || !ctx.out.interactive ? null : requestStream(await ctx.paint(), terminalWidth(ctx.out.stdout, ctx.env));
  if (!ctx.out.json) ctx.out.info(`Following the requests of ${source.where} (Ctrl-C to stop)…`);
  if (begun.earlier.length > 0) write(ctx, begun.earlier.reverse(), draw);
  let down = false;
  while (!signal.aborted) {
    try {
      // Back after a failure: said as soon as the source answers (not once an entry comes, which
      // may be many seconds on), and before any entry printed after it.
      if (down) await source.newestSeq();
      if (down) ctx.out.info('Reached again: following on.');
      down = false;
      read = await readStep(ctx, source, filter, read, signal, draw);
    } catch (err) {
      // A server restarting (or its ledger stalled): said once, and asked again, as `watch` does.
      if (!passing(err)) throw err;
      if (!down) ctx.out.warn(`${err.message} Trying again every 2 s.`);
      down = true;
      await pause(2_000, signal);
    }
  }
}

/** `work`'s result, or undefined once `signal` aborts first (a late failure is not left unhandled). */
const orStopped = <T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> =>
  new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });

/** One read of the entries past `read` (waiting for some), printed; how far the journal is read now. */
async function readStep(
  ctx: Context,
  source: Source,
  filter: RequestFilter,
  read: number,
  signal: AbortSignal,
  draw: ReturnType<typeof requestStream> | null,
): Promise<number> {
  const { head, batch, through } = await readOn(source, filter, read, signal);
  await sayMissed(ctx, source, read, head, filtered(filter));
  // Seqs never start again (docs/reliability.md, section 9); a journal emptied by an older carbon
  // numbers from 1 again: what it holds now came after, so all of it is printed.
  if (head === undefined) return (await source.newestSeq()) < read ? 0 : read;
  if (batch.length > 0) write(ctx, batch, draw);
  return through;
}

/** A failure a later read may not meet: no answer, or a 5xx (exit 1: source.ts); on the local engine, its ledger out of reach for now (a database restarting). */
const passing = (err: unknown): err is Error =>
  (err instanceof CliError && (err.code === 'connection_error' || err.exitCode === EXIT.failure)) ||
  (err instanceof LedgerError && err.transient);

/** Waits `ms`, or until `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const KEY_GONE_HINT =
  'The sandbox no longer takes the key it was followed with (revoked, or replaced by `carbon sandbox reset`): follow again with a current key (`carbon sandbox keys --reveal`).';

type Source = Awaited<ReturnType<typeof journalSource>>;

/**
 * The entries past `read` that match, waiting up to 20 s for any; with `head`, the first entry
 * the journal holds past `read` (none: nothing new came), and how far this read the journal.
 * With a filter, the seqs between the entries it prints are not gaps: it waits for any entry,
 * then reads those that match up to the newest, so an entry past `through` was never read.
 */
async function readOn(source: Source, filter: RequestFilter, read: number, signal: AbortSignal) {
  if (!filtered(filter)) {
    const batch = await source.entries({ ...filter, after: read, limit: MAX_REQUESTS_PAGE }, 20, signal);
    return { head: batch[0], batch, through: batch.at(-1)?.seq ?? read };
  }
  const head = (await source.entries({ ...NO_FILTER, after: read, limit: 1 }, 20, signal))[0];
  if (head === undefined) return { head, batch: [], through: read };
  const top = await source.newestSeq();
  const batch = await source.entries({ ...filter, after: read, before: top + 1, limit: MAX_REQUESTS_PAGE }, 0);
  return { head, batch, through: batch.length === MAX_REQUESTS_PAGE ? batch.at(-1)!.seq : Math.max(read, top) };
}

/**
 * Entries past `read` the journal pruned before the follower read them, said in one line on stderr
 * (stdout is the entries, --json's one a line), and it goes on: those below `next` (the first it
 * holds past `read`), when it holds none below `next`. The journal prunes its oldest, so an entry
 * still held below `next` means the seqs between were never entries (a batch PostgreSQL did not
 * commit took them) or are a loaded snapshot's past, skipped on purpose; a reset empties the
 * journal and numbers on past every seq handed out, so a follower misses nothing across it but
 * the entries written before it that it had not yet read (said, as pruned ones are).
 */
async function sayMissed(ctx: Context, source: Source, read: number, next: RequestEntry | undefined, narrowed: boolean): Promise<void> {
  // `read` is where it started (the highest seq handed out then, an emptied journal's too), or what it read since.
  if (next === undefined || next.seq <= read + 1) return;
  if ((await source.entries({ ...NO_FILTER, before: next.seq, limit: 1 }, 0)).length > 0) return;
  const count = next.seq - read - 1;
  const what = `${count} ${count === 1 ? 'entry' : 'entries'}${narrowed ? ' (matching the filter or not)' : ''}`;
  ctx.out.warn(
    `missed ${what}: gone from the journal before carbon logs read them (it keeps only the newest CARBON_JOURNAL_KEEP entries; a reset or a loaded snapshot empties it).`,
  );
}

function write(ctx: Context, batch: RequestEntry[], draw: ((b: readonly RequestEntry[]) => string) | null): void {
  if (ctx.out.json) ctx.out.data(batch.map((e) => JSON.stringify(e)).join('\n'));
  else if (draw === null) ctx.out.data(batch.map(requestRow).join('\n'));
  else ctx.out.data(draw(batch));
}
