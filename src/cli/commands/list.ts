import { once } from 'node:events';
import type { ListParams, Offset } from '../../api/types.js';
import type { Context } from '../context.js';
import { usage } from '../errors.js';
import { numberOption } from '../options.js';
import {
  csvHeader, csvRow, LIST_COLUMNS, offsetCells, offsetRow, offsetStreamRow, streamHeader,
} from '../render/resources.js';

export type ListFormat = 'table' | 'plain' | 'json' | 'csv';
export const LIST_FORMATS: readonly ListFormat[] = ['table', 'plain', 'json', 'csv'];

export interface ListFlags {
  limit?: string;
  startingAfter?: string;
  reference?: string;
  all?: boolean;
  format?: string;
  quiet?: boolean;
}

/** The format: --format if given, --json, else a table on a terminal and plain rows in a pipe. */
function chooseFormat(ctx: Context, flags: ListFlags): ListFormat | 'ids' {
  if (flags.quiet) {
    if (ctx.out.json || flags.format !== undefined) throw usage('--quiet prints ids only: leave out --json and --format.');
    return 'ids';
  }
  if (flags.format !== undefined) {
    if (!LIST_FORMATS.includes(flags.format as ListFormat)) throw usage(`--format must be one of ${LIST_FORMATS.join(', ')}, not "${flags.format}".`);
    if (ctx.out.json && flags.format !== 'json') throw usage(`--json and --format ${flags.format} disagree; give one.`);
    return flags.format as ListFormat;
  }
  if (ctx.out.json) return 'json';
  return ctx.out.interactive ? 'table' : 'plain';
}

export async function run(ctx: Context, flags: ListFlags): Promise<void> {
  const format = chooseFormat(ctx, flags);
  const params: ListParams = {};
  if (flags.limit !== undefined) params.limit = numberOption(flags.limit, '--limit');
  if (flags.reference !== undefined) params.reference = flags.reference;
  if (flags.startingAfter !== undefined) {
    if (flags.all) throw usage('--all walks every page itself; leave out --starting-after.');
    params.starting_after = flags.startingAfter;
  }
  const client = await ctx.client();
  const paint = await ctx.paint();

  if (!flags.all) {
    const page = await client.list(params);
    if (format === 'ids') return void (page.data.length > 0 && ctx.out.stdout.write(page.data.map((o) => `${o.id}\n`).join('')));
    if (format === 'json') return ctx.out.jsonDocument(page);
    if (format === 'csv') return void ctx.out.stdout.write(csvHeader() + page.data.map(csvRow).join(''));
    if (format === 'plain') return void (page.data.length > 0 && ctx.out.stdout.write(page.data.map((o) => `${offsetRow(o)}\n`).join('')));
    if (page.data.length === 0) {
      const filtered = [
        params.reference === undefined ? null : `with reference ${JSON.stringify(params.reference)}`,
        params.starting_after === undefined ? null : `older than ${params.starting_after}`,
      ].filter((f) => f !== null);
      return ctx.out.info(
        filtered.length > 0
          ? `No ${ctx.settings.mode} offsets ${filtered.join(' and ')}.`
          : `No ${ctx.settings.mode} offsets yet. Buy some with \`carbon buy --kg 500${ctx.settings.mode === 'live' ? ' --live' : ''}\`.`,
      );
    }
    const { default: Table } = await import('cli-table3');
    const table = new Table({
      head: LIST_COLUMNS.map((c) => paint.dim(c)),
      style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 2 },
      chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '' },
      colAligns: ['left', 'left', 'right', 'right', 'left', 'left'],
    });
    for (const o of page.data) table.push(offsetCells(o, paint));
    // cli-table3 pads the last column too; trailing blanks are noise in a terminal and in a diff.
    ctx.out.data(table.toString().replace(/ +$/gm, ""));
    const last = page.data.at(-1);
    if (page.has_more && last) ctx.out.info(paint.dim(`More offsets: ${nextPageCommand(last.id)}  (or --all)`));
    return;
  }

  // --all streams: one page in memory at a time (--limit sets the page size), rows written as they arrive.
  // Backpressure: when the reader is slower than the ledger, wait for it rather than queue every
  // remaining page in memory (constant memory is the point of streaming).
  const write = async (text: string): Promise<void> => {
    if (!ctx.out.stdout.write(text)) await once(ctx.out.stdout, 'drain');
  };
  const line: (o: Offset) => string =
    format === 'ids' ? (o) => `${o.id}\n`
    : format === 'json' ? (o) => `${JSON.stringify(o)}\n`
    : format === 'csv' ? csvRow
    : format === 'plain' ? (o) => `${offsetRow(o)}\n`
    : (o) => `${offsetStreamRow(o, paint)}\n`;
  if (format === 'csv') await write(csvHeader());
  if (format === 'table') await write(`${streamHeader(paint)}\n`);
  let batch = '';
  let n = 0;
  for await (const offset of client.listAll(params)) {
    batch += line(offset);
    if (++n % 100 === 0) {
      await write(batch);
      batch = '';
    }
  }
  if (batch) await write(batch);
}

/**
 * The command for the next page: this one as it was typed (its --live, --profile, --reference,
 * --limit …), with the cursor moved on. Run as printed, it does what the user was doing.
 */
export function nextPageCommand(after: string, argv: readonly string[] = process.argv.slice(2)): string {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--starting-after') i++;
    else if (!arg.startsWith('--starting-after=')) kept.push(arg);
  }
  const quote = (word: string) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  return ['carbon', ...kept, '--starting-after', after].map(quote).join(' ');
}

