import { readFileSync } from 'node:fs';
import { CarbonApiError } from '../../../client/errors.js';
import { buyRows } from '../../batch/buy.js';
import { hash, rowKey } from '../../batch/key.js';
import { progress } from '../../batch/progress.js';
import { ResultPrinter, result } from '../../batch/results.js';
import { type BatchRow, decodeCsv, readRows } from '../../batch/rows.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { wholeNumberOption } from '../../options.js';
import { dollars, kg } from '../../render/format.js';
import type { BuyFlags } from './run.js';

/**
 * `carbon buy --from-csv FILE`: one purchase per row. Every row is read and quoted (so the API
 * judges it) before anything is bought; each row's Idempotency-Key comes from the batch id, the
 * row's number and its content, so running the same file again buys nothing twice and finishes
 * what an earlier run left (Ctrl-C, a network failure, a full balance).
 */

export interface CsvFlags extends BuyFlags {
  fromCsv?: string;
  batchId?: string;
}

function readInput(file: string): Buffer {
  try {
    return readFileSync(file === '-' ? 0 : file);
  } catch (err) {
    throw new CliError(
      `Cannot read ${file === '-' ? 'stdin' : file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}. Nothing was bought.`,
      EXIT.usage,
      'csv_unreadable',
    );
  }
}

/** Refuses the flags that belong to one purchase: the file says what to buy. */
function checkFlags(flags: CsvFlags): void {
  const single = (['kg', 'amount', 'amountCents', 'reference', 'idempotencyKey', 'wait', 'quiet'] as const).filter(
    (f) => flags[f] !== undefined,
  );
  if (single.length > 0) {
    const name = (f: string) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw usage(
      `--from-csv buys what the file says: leave out ${single.map(name).join(', ')}.`,
      single.includes('wait') ? 'To wait for the batch, follow it with `carbon watch --until-settled`.' : undefined,
    );
  }
  if (flags.batchId !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(flags.batchId)) {
    throw usage(`--batch-id is 1 to 64 letters, digits, dots, dashes or underscores, not "${flags.batchId}".`);
  }
}

export async function run(ctx: Context, flags: CsvFlags): Promise<void> {
  checkFlags(flags);
  const maxCents = flags.maxCents === undefined ? undefined : wholeNumberOption(flags.maxCents, '--max-cents (cents)');
  // Live mode asks once for the whole batch; where nobody can answer, it needs --yes (a batch is too
  // much money to spend on a warning, unlike one `carbon buy`).
  const live = ctx.settings.mode === 'live' && !flags.yes && !flags.dryRun;
  const canAsk = ctx.out.stderrInteractive && Boolean(process.stdin.isTTY) && flags.fromCsv !== '-';
  if (live && !canAsk)
    throw usage(
      'A live batch needs --yes where nobody can confirm it (no terminal, or the file on stdin). Nothing was bought.',
      'Check it first with --dry-run.',
    );

  const input = readInput(flags.fromCsv!);
  const batchId = flags.batchId ?? (await hash(input)).slice(0, 16);
  const { rows, faults, ignored } = await readRows(decodeCsv(input));
  if (ignored.length > 0 && !ctx.out.json)
    ctx.out.warn(
      `ignoring column${ignored.length > 1 ? 's' : ''} ${ignored.map((h) => JSON.stringify(h)).join(', ')} ` +
        '(carbon reads kg, amount, amount_cents and reference).',
    );
  const { quoted, total, refusals } = await quoteRows(ctx, rows, flags);
  const unreadable = faults.map((f) => `row ${f.row} (line ${f.line}): ${f.message}`);
  refuseBatch(ctx, [...unreadable, ...refusals], rows.length + faults.length);
  const what = `${rows.length} row${rows.length === 1 ? '' : 's'}, ${kg(total.kg)} for ${dollars(total.cents)}`;
  if (maxCents !== undefined && total.cents > maxCents) {
    throw new CliError(
      `The batch (${what}) would cost ${total.cents} cents, more than --max-cents ${maxCents}; nothing was bought.`,
      EXIT.usage,
      'max_cents_exceeded',
    );
  }
  const printer = new ResultPrinter(ctx);
  if (flags.dryRun) return dryRun(ctx, printer, { batchId, rows: rows.length, quoted, total, what });
  if (live) {
    const { confirmPrompt } = await import('../../prompt.js');
    const ok = await confirmPrompt(ctx.out, `Buy ${what} from the LIVE balance (${dollars(total.available)})?`);
    if (!ok) throw new CliError('Cancelled; nothing was bought.', EXIT.failure, 'cancelled');
  }
  await buyRows(
    ctx,
    quoted.map((q) => q.row),
    batchId,
    printer,
  );
}

/** What the quotes say of the batch: its weight, its price, and the balance it would come from. */
interface BatchTotal {
  kg: number;
  cents: number;
  available: number;
  livemode: boolean;
}

type QuotedRow = { row: BatchRow; kg: number; cents: number };

/** Every row quoted: the API judges each one (422s) and prices the batch, before any purchase. */
async function quoteRows(
  ctx: Context,
  rows: BatchRow[],
  flags: CsvFlags,
): Promise<{ quoted: QuotedRow[]; total: BatchTotal; refusals: string[] }> {
  const client = await ctx.client();
  const bar = await progress(ctx.out, flags.dryRun ? 'Checking' : 'Checking before buying');
  const total: BatchTotal = { kg: 0, cents: 0, available: 0, livemode: ctx.settings.mode === 'live' };
  const quoted: QuotedRow[] = [];
  const refusals: string[] = [];
  try {
    for (const row of rows) {
      bar.update(quoted.length, rows.length);
      try {
        const q = await client.quote(row.params);
        quoted.push({ row, kg: q.kg, cents: q.amount_cents });
        total.kg += q.kg;
        total.cents += q.amount_cents;
        total.available = q.available_cents;
        total.livemode = q.livemode;
      } catch (err) {
        if (!(err instanceof CarbonApiError && (err.status === 400 || err.status === 422))) throw err;
        refusals.push(`row ${row.row} (line ${row.line}): ${err.message}${err.param === undefined ? '' : ` (param: ${err.param})`}`);
      }
    }
  } finally {
    bar.stop();
  }
  return { quoted, total, refusals };
}

/** Stops the batch, nothing bought, when any row cannot be bought; lists the first 20 in row order. */
function refuseBatch(ctx: Context, refusals: string[], rowCount: number): void {
  if (refusals.length === 0) return;
  refusals.sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]));
  if (!ctx.out.json) for (const line of refusals.slice(0, 20)) ctx.out.info(`  ${line}`);
  if (!ctx.out.json && refusals.length > 20) ctx.out.info(`  … and ${refusals.length - 20} more`);
  const first = `(first: ${refusals[0]}); nothing was bought.`;
  throw new CliError(`${refusals.length} of ${rowCount} rows cannot be bought ${first}`, EXIT.usage, 'csv_invalid');
}

/** `--dry-run`: each row's quote and the batch's totals, and whether the balance covers them. */
async function dryRun(
  ctx: Context,
  printer: ResultPrinter,
  batch: { batchId: string; rows: number; quoted: QuotedRow[]; total: BatchTotal; what: string },
): Promise<void> {
  const { batchId, quoted, total, what } = batch;
  const covered = total.cents <= total.available;
  for (const q of quoted) printer.add(result(q.row, await rowKey(batchId, q.row), { status: 'quoted', kg: q.kg, amount_cents: q.cents }));
  printer.end({
    batch_id: batchId,
    rows: batch.rows,
    kg: total.kg,
    amount_cents: total.cents,
    available_cents: total.available,
    sufficient_balance: covered,
    livemode: total.livemode,
    dry_run: true,
  });
  const balance = `the ${total.livemode ? 'live' : 'test'} balance (${dollars(total.available)})`;
  if (!covered) {
    throw new CliError(
      `Dry run: ${balance} does not cover the batch (${what}); buying would stop at 402 insufficient_balance. Nothing was bought.`,
      EXIT.insufficientBalance,
      'insufficient_balance',
    );
  }
  if (!ctx.out.json) {
    const earlier = '(rows bought by an earlier run of this batch would not be charged again)';
    ctx.out.info(`Dry run: ${what}, from ${balance}, which covers it ${earlier}. Nothing was bought.`);
  }
}
