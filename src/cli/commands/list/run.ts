import { LIMITS, type ListParams, OFFSET_STATUSES, type Offset, type OffsetList } from '../../../api/types.js';
import type { CarbonClient } from '../../../client/client.js';
import { PageGuard } from '../../../client/paging.js';
import type { Context } from '../../context.js';
import { usage } from '../../errors.js';
import { engineFlags, followUp, shellWord, shownArgs } from '../../follow-up.js';
import { clockForSpan, isOneOf, parseWhen, quietWith, wholeNumberOption } from '../../options.js';
import { topUpHint } from '../../purchase/top-up.js';
import { displayWidth, terminalWidth } from '../../render/fit.js';
import { dollars, kg, withReference } from '../../render/format.js';
import { csvHeader, csvRow, offsetRow, offsetStream, offsetTable, sandboxTableNote } from '../../render/resources.js';
import { wrapCommand } from '../../render/wrap.js';
import { keepYoungGenerationSmall } from '../../young-generation.js';
import { LIST_FORMATS, type ListFormat } from './index.js';

export interface ListFlags {
  limit?: string;
  pageSize?: string;
  startingAfter?: string;
  reference?: string;
  all?: boolean;
  format?: string;
  quiet?: boolean;
  status?: string;
  since?: string;
  until?: string;
}

/**
 * The list's own filters (the API filters by reference only): by status and by when it was
 * created. Applied while paging, newest first, so paging stops at the first offset older than --since.
 */
function filterOf(flags: ListFlags, now: number): { keep: (o: Offset) => boolean; done: (o: Offset) => boolean } | null {
  if (flags.status === undefined && flags.since === undefined && flags.until === undefined) return null;
  if (flags.status !== undefined && !isOneOf(OFFSET_STATUSES, flags.status)) {
    throw usage(`--status is one of ${OFFSET_STATUSES.join(', ')}, not "${flags.status}".`);
  }
  const since = flags.since === undefined ? null : parseWhen(flags.since, '--since', now);
  // A day given to --until is included whole.
  const until = flags.until === undefined ? null : parseWhen(flags.until, '--until', now, true);
  // A span that ends before it starts holds nothing: said, as `carbon report` says it, not printed as "no offsets".
  if (since !== null && until !== null && since >= until) throw usage('--since must come before --until.');
  return {
    keep: (o) => (flags.status === undefined || o.status === flags.status) && (until === null || Date.parse(o.created) < until),
    done: (o) => since !== null && Date.parse(o.created) < since,
  };
}

type Filter = NonNullable<ReturnType<typeof filterOf>>;

/** The pages of a walk, each with only its offsets that pass the filter, ending at the first one older than --since. */
async function* matching(pages: AsyncIterable<Offset[]>, filter: Filter | null): AsyncGenerator<Offset[]> {
  for await (const page of pages) {
    if (filter === null) {
      yield page;
      continue;
    }
    const end = page.findIndex((o) => filter.done(o));
    yield (end === -1 ? page : page.slice(0, end)).filter((o) => filter.keep(o));
    if (end !== -1) return;
  }
}

/**
 * The newest `limit` offsets that pass the filter, page by page, and whether any are left
 * unread (the list's has_more). Unfiltered, pages ask for only what is still wanted, so a
 * default `carbon list` is one request.
 */
async function firstOffsets(client: CarbonClient, params: ListParams, limit: number, filter: Filter | null): Promise<OffsetList> {
  const data: Offset[] = [];
  let after = params.starting_after;
  const guard = new PageGuard();
  for (;;) {
    const size = params.limit ?? (filter === null ? Math.min(100, limit - data.length) : 100);
    const page = await client.list({ ...params, limit: size, ...(after === undefined ? {} : { starting_after: after }) });
    guard.check(page, after);
    for (const o of page.data) {
      if (filter?.done(o)) return { object: 'list', data, has_more: false };
      if (filter !== null && !filter.keep(o)) continue;
      if (data.length === limit) return { object: 'list', data, has_more: true };
      data.push(o);
    }
    const last = page.data.at(-1);
    if (!page.has_more || last === undefined) return { object: 'list', data, has_more: false };
    if (data.length === limit && filter === null) return { object: 'list', data, has_more: true };
    after = last.id;
  }
}

/** The format: --format if given, --json, else a table on a terminal and plain rows in a pipe. */
function chooseFormat(ctx: Context, flags: ListFlags): ListFormat | 'ids' {
  if (flags.quiet) {
    const others = [...(ctx.out.json ? ['--json'] : []), ...(flags.format === undefined ? [] : ['--format'])];
    if (others.length > 0) throw quietWith(...others);
    return 'ids';
  }
  if (flags.format !== undefined) {
    if (!isOneOf(LIST_FORMATS, flags.format)) throw usage(`--format must be one of ${LIST_FORMATS.join(', ')}, not "${flags.format}".`);
    if (ctx.out.json && flags.format !== 'json') throw usage(`--json and --format ${flags.format} disagree; give one.`);
    return flags.format as ListFormat;
  }
  if (ctx.out.json) return 'json';
  return ctx.out.interactive ? 'table' : 'plain';
}

export async function run(ctx: Context, flags: ListFlags): Promise<void> {
  const format = chooseFormat(ctx, flags);
  const { params, limit } = requestOf(flags);
  // The filter is judged before the client opens the model: a malformed --since creates no ledger.
  const filter = filterOf(flags, await clockForSpan(ctx, flags.since, flags.until));
  const client = await ctx.client();
  if (!flags.all) return printPage(ctx, client, flags, format, params, await firstOffsets(client, params, limit, filter));
  const keepSmall = await keepYoungGenerationSmall();
  return streamAll(ctx, format, matching(client.listPages(params), filter), () => noOffsets(ctx, client, flags, params), keepSmall);
}

/** What to ask the API for, and how many offsets to print (without --all). */
function requestOf(flags: ListFlags): { params: ListParams; limit: number } {
  const params: ListParams = {};
  // --limit is how many offsets to print, across pages (gh's --limit); --page-size is how many
  // each request asks for (the API's `limit`, 1 to 100). Judged here: the API's 422 names its
  // `limit`, which reads as the other flag, the one that takes 250.
  if (flags.all && flags.limit !== undefined) throw usage('--all prints every offset and --limit prints that many; give one.');
  const limit = flags.limit === undefined ? 10 : wholeNumberOption(flags.limit, '--limit', { min: 1 });
  if (flags.pageSize !== undefined) {
    params.limit = wholeNumberOption(flags.pageSize, '--page-size', { min: LIMITS.listLimitMin, max: LIMITS.listLimitMax });
  }
  if (flags.reference !== undefined) params.reference = flags.reference;
  if (flags.startingAfter !== undefined) {
    if (flags.all) throw usage('--all walks every page itself; leave out --starting-after.');
    params.starting_after = flags.startingAfter;
  }
  return { params, limit };
}

/** One page of offsets, in the format; a table ends with the command for the next page. */
async function printPage(
  ctx: Context,
  client: CarbonClient,
  flags: ListFlags,
  format: ListFormat | 'ids',
  params: ListParams,
  page: OffsetList,
): Promise<void> {
  // One page is small: written in one go, without loading chalk or creating process.stdout.
  if (format === 'ids') return void (page.data.length > 0 && ctx.out.data(page.data.map((o) => o.id).join('\n')));
  if (format === 'json') return ctx.out.jsonDocument(page);
  if (format === 'csv') {
    const sandbox = ctx.fromSandbox;
    const terminal = ctx.out.interactive;
    return ctx.out.data(csvHeader(sandbox) + page.data.map((o) => csvRow(o, sandbox, terminal)).join(''));
  }
  if (format === 'plain') return void (page.data.length > 0 && ctx.out.data(page.data.map(offsetRow).join('\n')));
  const paint = await ctx.paint();
  if (page.data.length === 0) return ctx.out.info(await noOffsets(ctx, client, flags, params));
  ctx.out.data(offsetTable(page.data, paint, terminalWidth(ctx.out.stdout, ctx.env)));
  // What goes to stderr is coloured by stderr's own terminal (a `2>log` keeps no escape codes).
  const notePaint = await ctx.paint('stderr');
  if (ctx.fromSandbox) ctx.out.info(sandboxTableNote(page.data[0]!.livemode, notePaint));
  const last = page.data.at(-1);
  if (page.has_more && last) {
    // Fitted to the terminal without splitting the id: the command continues with ` \` when long.
    const width = terminalWidth(ctx.out.stderr, ctx.env) ?? Number.POSITIVE_INFINITY;
    const lines = wrapCommand(nextPageCommand(last.id), width, 'More offsets: ', '  ');
    const end = lines.pop()!;
    lines.push(...(displayWidth(`${end}  (or --all)`) <= width ? [`${end}  (or --all)`] : [end, '(or --all)']));
    ctx.out.info(lines.map((l) => notePaint.dim(l)).join('\n'));
  }
}

/** The first purchase a table with no offsets suggests. */
const FIRST_KG = 500;

/**
 * What a table says when no offset matched: the filters it was given, or how to buy the first
 * ones, with the top-up that purchase needs first when the balance does not cover it (the local
 * sandbox's live balance starts at $0: `carbon buy --kg 500 --live` alone would get 402). The
 * balance is the quote's, the one the purchase would be charged to; a quote that fails leaves
 * the plain suggestion.
 */
async function noOffsets(ctx: Context, client: CarbonClient, flags: ListFlags, params: ListParams): Promise<string> {
  const filtered = [
    params.reference === undefined ? null : withReference(params.reference),
    params.starting_after === undefined ? null : `older than ${params.starting_after}`,
    flags.status === undefined ? null : `with status ${flags.status}`,
    flags.since === undefined ? null : `since ${flags.since}`,
    flags.until === undefined ? null : `until ${flags.until}`,
  ].filter((f) => f !== null);
  const { mode } = ctx.settings;
  if (filtered.length > 0) return `No ${mode} offsets ${filtered.join(' and ')}.`;
  const buy = followUp(['buy', '--kg', String(FIRST_KG), ...(mode === 'live' && !engineFlags().includes('--live') ? ['--live'] : [])]);
  const quote = await client.quote({ kg: FIRST_KG }).catch(() => undefined);
  if (quote === undefined || quote.sufficient_balance) return `No ${mode} offsets yet. Buy some with \`${buy}\`.`;
  const topUp = topUpHint(mode, ctx.settings.engine, quote.available_cents, quote.amount_cents);
  return `No ${mode} offsets yet, and the ${mode} balance (${dollars(quote.available_cents)}) does not cover ${kg(FIRST_KG)} (${dollars(quote.amount_cents)}). ${topUp}, then buy with \`${buy}\`.`;
}

/**
 * --all streams: one page in memory at a time (--page-size sets its size), rows written as they arrive.
 * Backpressure: when the reader is slower than the ledger, wait for it rather than queue every
 * remaining page in memory (constant memory is the point of streaming).
 */
async function streamAll(
  ctx: Context,
  format: ListFormat | 'ids',
  pages: AsyncIterable<Offset[]>,
  none: () => Promise<string>,
  /** Called once a batch: keepYoungGenerationSmall()'s. */
  keepSmall: () => void,
): Promise<void> {
  // The CSV's header once the first page is read: whether a server is a sandbox is said in its
  // answers. Decided there, once, for every row.
  let header = format === 'csv';
  let sandbox = false;
  const terminal = format === 'csv' && ctx.out.interactive;
  const paint = format === 'table' ? await ctx.paint() : undefined;
  const line: (o: Offset) => string =
    format === 'ids'
      ? (o) => `${o.id}\n`
      : format === 'json'
        ? (o) => `${JSON.stringify(o)}\n`
        : format === 'csv'
          ? (o) => csvRow(o, sandbox, terminal)
          : (o) => `${offsetRow(o)}\n`;
  // On a terminal, a table sized by its first batch of rows (the header goes with them).
  const text =
    paint !== undefined ? offsetStream(paint, terminalWidth(ctx.out.stdout, ctx.env)) : (b: readonly Offset[]) => b.map(line).join('');
  const head = (): string => {
    if (!header) return '';
    header = false;
    sandbox = ctx.fromSandbox;
    return csvHeader(sandbox);
  };
  let batch: Offset[] = [];
  // The first offset's mode, once one is written: what a table's sandbox note under it names.
  let livemode: boolean | undefined;
  const flush = async (): Promise<void> => {
    const rows = batch;
    batch = [];
    if (rows.length === 0) return;
    keepSmall();
    await ctx.out.stream(head() + text(rows));
    livemode ??= rows[0]!.livemode;
  };
  try {
    for await (const page of pages) {
      for (const offset of page) {
        batch.push(offset);
        if (batch.length === 100) await flush();
      }
    }
  } catch (error) {
    // A page that fails after others were read: what was read is printed before the error, not dropped.
    await flush();
    throw error;
  }
  if (batch.length > 0) await flush();
  else if (header) await ctx.out.stream(head());
  // A table with no offset says so, as a page's does, rather than drawing a header over nothing.
  else if (format === 'table' && livemode === undefined) ctx.out.info(await none());
  if (paint !== undefined && livemode !== undefined && ctx.fromSandbox) ctx.out.info(sandboxTableNote(livemode, await ctx.paint('stderr')));
}

/**
 * The command for the next page: this one as it was typed (its --live, --profile, --reference,
 * --limit …), with the cursor moved on. Run as printed, it does what the user was doing.
 */
function nextPageCommand(after: string): string {
  const args = shownArgs();
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--starting-after') i++;
    else if (!arg.startsWith('--starting-after=')) kept.push(arg);
  }
  return ['carbon', ...kept, '--starting-after', after].map(shellWord).join(' ');
}
