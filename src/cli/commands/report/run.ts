import type { Offset } from '../../../api/types.js';
import { isoTime } from '../../../platform/iso-time.js';
import { shownReference } from '../../../service/keys.js';
import type { Context } from '../../context.js';
import { usage } from '../../errors.js';
import { clockForSpan, isOneOf, parseWhen } from '../../options.js';
import { terminalWidth } from '../../render/fit.js';
import { oneLine } from '../../render/format.js';
import { csvField } from '../../render/resources.js';
import { SANDBOX_CSV_COLUMN, SANDBOX_DETAIL, SANDBOX_HEADLINE, SANDBOX_PURCHASE } from '../../render/sandbox-note.js';
import { type Weight, weight } from '../../render/weight.js';
import { fitNote } from '../../render/wrap.js';
import { REPORT_FORMATS, REPORT_GROUPS, type ReportGroup, WEIGHT_UNITS } from './index.js';
import { periodOf, periodsInUtc, periodsOf } from './periods.js';
import { markdown, printTable } from './render.js';

/**
 * `carbon report`: what a sustainability report needs, for the key's mode: kg and dollars per
 * month, week (ISO, starting Monday), quarter or reference, over a span. It reads every offset once,
 * page by page, newest first, keeping only the running totals (constant memory), and stops at the
 * first offset older than --since. Refunded offsets bought nothing and are left out; placed and
 * processing ones are counted, each in its own column.
 */

export interface ReportFlags {
  by?: string;
  since?: string;
  until?: string;
  prefixSep?: string;
  format?: string;
  unit?: string;
}

export interface ReportRow {
  /** The month, week, quarter or reference; null for the offsets bought without a reference. */
  group: string | null;
  offsets: number;
  kg: number;
  placed_kg: number;
  processing_kg: number;
  amount_cents: number;
}

/** A span's end as reports print it: a day as YYYY-MM-DD (an --until's own, included), an age as an ISO time. */
function spanEnd(text: string | undefined, ms: number | null, end: boolean): string | null {
  if (text === undefined || ms === null) return null;
  if (/^\d+[mhdw]$/.test(text)) return isoTime(ms);
  return isoTime(end ? ms - 86_400_000 : ms).slice(0, 10);
}

function groupOf(o: Offset, by: ReportGroup, prefixSep: string | undefined): string | null {
  if (by === 'reference') {
    // Its own group, whatever a reference reads: "(no reference)" typed as one is another.
    if (o.reference === null) return null;
    // A reference that starts with the separator has no prefix: it counts as itself, never as ''.
    const cut = prefixSep === undefined ? -1 : o.reference.indexOf(prefixSep);
    return cut < 1 ? o.reference : o.reference.slice(0, cut);
  }
  return periodOf(Date.parse(o.created), by);
}

/** What the flags ask for, checked: the grouping, the format, and the span in ms (until excluded). */
interface Query {
  by: ReportGroup;
  weight: Weight;
  format: (typeof REPORT_FORMATS)[number];
  since: number | null;
  until: number | null;
  /** The span as printed: days as YYYY-MM-DD (today named by its date). */
  span: { since: string | null; until: string | null };
}

async function query(ctx: Context, flags: ReportFlags): Promise<Query> {
  const by = (flags.by ?? 'month') as ReportGroup;
  if (!REPORT_GROUPS.includes(by)) throw usage(`--by is one of ${REPORT_GROUPS.join(', ')}, not "${flags.by}".`);
  if (flags.prefixSep !== undefined && by !== 'reference') throw usage('--prefix-sep groups references: it goes with --by reference.');
  if (flags.prefixSep === '') throw usage('--prefix-sep needs a separator such as - or /, not an empty one.');
  const format = flags.format ?? (ctx.out.json ? 'json' : ctx.out.interactive ? 'table' : 'plain');
  if (!isOneOf(REPORT_FORMATS, format)) throw usage(`--format is one of ${REPORT_FORMATS.join(', ')}, not "${format}".`);
  if (ctx.out.json && format !== 'json') throw usage(`--json and --format ${format} disagree; give one.`);
  const unit = flags.unit ?? 'kg';
  if (!isOneOf(WEIGHT_UNITS, unit)) throw usage(`--unit is one of ${WEIGHT_UNITS.join(', ')} (kg, or tonnes), not "${unit}".`);
  // Ages, today and yesterday count back from the model's clock in the sandbox, as in `carbon list`;
  // so does a span's end when --until is not given: today, the model's (a sandbox's clock moved on).
  const now = await clockForSpan(ctx, flags.since, flags.until ?? (flags.since === undefined ? undefined : 'today'));
  const since = flags.since === undefined ? null : parseWhen(flags.since, '--since', now);
  const until = flags.until === undefined ? null : parseWhen(flags.until, '--until', now, true);
  if (since !== null && until !== null && since >= until) throw usage('--since must come before --until.');
  // Without --until the span runs to today: one that starts later would run backwards.
  if (since !== null && until === null && since > now)
    throw usage(
      `--since ${flags.since} is after today (${new Date(now).toISOString().slice(0, 10)}), where the span would end; give --until too for a span to come.`,
    );
  // A span of more periods than a report makes is refused before a page is read.
  if (by !== 'reference' && since !== null && until !== null) periodsOf(since, until - 1, by);
  const span = { since: spanEnd(flags.since, since, false), until: spanEnd(flags.until, until, true) };
  return { by, weight: weight(unit), format, since, until, span };
}

/** The rows, in the order shown, and their total: placed and processing offsets of the span. */
interface Sums {
  list: ReportRow[];
  total: ReportRow;
  /** When the newest offset was bought (ms), whatever the span: a report is not made before it. */
  newest: number;
}

async function sum(ctx: Context, { by, since, until }: Query, prefixSep: string | undefined): Promise<Sums> {
  const rows = new Map<string | null, ReportRow>();
  const client = await ctx.client();
  // The span's first and last purchase: where --since or --until is not given, they bound it.
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let newest = Number.NEGATIVE_INFINITY;
  for await (const o of client.listAll({ limit: 100 })) {
    const created = Date.parse(o.created);
    newest = Math.max(newest, created);
    // Newest first: once older than --since, every later one is too.
    if (since !== null && created < since) break;
    if ((until !== null && created >= until) || o.status === 'refunded') continue;
    first = Math.min(first, created);
    last = Math.max(last, created);
    const key = groupOf(o, by, prefixSep);
    let row = rows.get(key);
    if (row === undefined) rows.set(key, (row = zero(key)));
    row.offsets++;
    row.kg += o.kg;
    row.amount_cents += o.amount_cents;
    if (o.status === 'placed') row.placed_kg += o.kg;
    else row.processing_kg += o.kg;
  }
  // The offsets without a reference after a group of the same kg; references by code point, not
  // by the machine's language (LANG): a CI job's CSV is the same on every machine.
  const byName = (a: ReportRow, b: ReportRow) =>
    a.group === null || b.group === null ? Number(a.group === null) - Number(b.group === null) : byCodePoint(a.group, b.group);
  // Every period of the span is a row, one without purchases too (zeros): from --since, or the
  // first purchase, to --until, or the last; with neither bound nor purchase, there is none.
  const list =
    by === 'reference'
      ? [...rows.values()].sort((a, b) => b.kg - a.kg || byName(a, b))
      : periodsOf(since ?? first, until === null ? last : until - 1, by).map((key) => rows.get(key) ?? zero(key));
  const total = zero('total');
  for (const r of list) for (const k of ['offsets', 'kg', 'placed_kg', 'processing_kg', 'amount_cents'] as const) total[k] += r[k];
  return { list, total, newest };
}

/** Text in the order of its code points (as `LC_ALL=C sort` orders UTF-8), whatever the locale. */
function byCodePoint(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    // Where the first code unit differs, the code points there differ the same way: an astral one
    // (a surrogate pair) is read whole, and compares above every code point of one unit.
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
  }
  return a.length - b.length;
}

const zero = (group: string | null): ReportRow => ({ group, offsets: 0, kg: 0, placed_kg: 0, processing_kg: 0, amount_cents: 0 });

/** A row of `--format json`: its weights in the unit asked for. */
function jsonRow(r: ReportRow, w: Weight) {
  return {
    group: r.group,
    offsets: r.offsets,
    [w.field()]: w.number(r.kg),
    [w.field('placed')]: w.number(r.placed_kg),
    [w.field('processing')]: w.number(r.processing_kg),
    amount_cents: r.amount_cents,
  };
}

export async function run(ctx: Context, flags: ReportFlags): Promise<void> {
  const q = await query(ctx, flags);
  const { by, format, weight: w, span } = q;
  const { list, total, newest } = await sum(ctx, q, flags.prefixSep);
  const mode = ctx.settings.mode;
  // The local engine, or a carbon serve (its answers say so): the purchases were the sandbox's.
  const sandbox = ctx.fromSandbox;
  // What the rows count, under the table and the Markdown: a report read apart from its command says its mode and span.
  const utc = periodsInUtc(by);
  const spanText = `${span.since ? `; from ${span.since}` : ''}${span.until ? `; until ${span.until}` : ''}`;
  const grouping = flags.prefixSep === undefined ? '' : `; references grouped by the part before "${flags.prefixSep}"`;
  const counted = `${mode} mode; placed and processing offsets, refunded ones left out${utc ? `; ${utc}` : ''}${grouping}${spanText}.`;

  if (format === 'json') {
    const weights = (r: ReportRow) => jsonRow(r, w);
    return ctx.out.jsonDocument({
      object: 'report',
      livemode: mode === 'live',
      sandbox,
      unit: w.unit,
      by,
      ...(by === 'reference' ? { prefix_sep: flags.prefixSep ?? null } : {}),
      ...span,
      rows: list.map(weights),
      total: weights(total),
    });
  }
  // What a person reads (the HTML page, the Markdown, the terminal's table) masks a key pasted into a reference, as
  // `carbon list` does; the data (JSON, CSV, a pipe's lines) keeps each reference as it was sent.
  const read = by === 'reference' ? list.map((r) => (r.group === null ? r : { ...r, group: shownReference(r.group) })) : list;
  if (format === 'html') {
    const { reportHtml } = await import('../../render/report-html.js');
    // At the model's time on the local engine, as its "today" is; never before its own purchases (a server's clock moved on).
    const made = isoTime(ctx.settings.engine === 'local' ? await (await ctx.sandbox()).now() : Math.max(Date.now(), newest));
    ctx.out.stdout.write(reportHtml({ by, rows: read, total, mode, sandbox, weight: w, ...span, made, prefixSep: flags.prefixSep }));
    return;
  }
  if (format === 'csv' || format === 'plain')
    return void ctx.out.stdout.write(delimited(format, q, list, mode === 'live', sandbox, ctx.out.interactive));
  if (format === 'md') return void ctx.out.stdout.write(markdown(by, w, read, total, sandbox, counted));
  if (list.length === 0) return ctx.out.info(`No ${mode} purchases${q.since !== null || q.until !== null ? ' in that span' : ' yet'}.`);
  const paint = await ctx.paint();
  printTable(ctx, paint, by, w, read, total);
  // stderr's lines: coloured by stderr's own terminal, broken at spaces to its width.
  const note = await ctx.paint('stderr');
  const width = terminalWidth(ctx.out.stderr, ctx.env);
  ctx.out.info(fitNote(note.dim(counted), width));
  if (sandbox) ctx.out.info(fitNote(`${note.yellow(SANDBOX_HEADLINE)} ${SANDBOX_DETAIL}`, width));
}

/** CSV, each row saying its mode (as list's CSV does) and the sandbox's each what they are; or plain tab-separated rows. */
function delimited(
  format: 'csv' | 'plain',
  { by, weight: w }: Query,
  list: readonly ReportRow[],
  live: boolean,
  sandbox: boolean,
  terminal: boolean,
): string {
  const cells = (r: ReportRow) => [r.group ?? '', r.offsets, w.plain(r.kg), w.plain(r.placed_kg), w.plain(r.processing_kg), r.amount_cents];
  if (format === 'plain')
    return list
      .map(
        (r) =>
          `${cells(r)
            .map((c) => oneLine(String(c)))
            .join('\t')}\n`,
      )
      .join('');
  const header = [by, 'offsets', w.field(), w.field('placed'), w.field('processing'), 'amount_cents', 'livemode'];
  const lines = [
    [...header, ...(sandbox ? [SANDBOX_CSV_COLUMN] : [])],
    ...list.map((r) => [...cells(r), String(live), ...(sandbox ? [SANDBOX_PURCHASE] : [])]),
  ];
  return lines.map((l) => `${l.map((f) => csvField(f, terminal)).join(',')}\r\n`).join('');
}
