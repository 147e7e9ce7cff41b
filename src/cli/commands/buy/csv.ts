import type { PurchaseParams } from '../../../api/types.js';
import { CarbonApiError, CarbonConnectionError } from '../../../client/errors.js';
import { buyRows } from '../../batch/buy.js';
import { type BatchTotal, dryRun } from '../../batch/dry-run.js';
import { earlierRows, type Owed, owedOf } from '../../batch/owed.js';
import { type Progress, progress, SILENT } from '../../batch/progress.js';
import { QuoteCache } from '../../batch/quotes.js';
import { BatchInput } from '../../batch/read.js';
import { type RowFault, refuseBatch, SHOWN_FAULTS } from '../../batch/refused.js';
import { ResultPrinter } from '../../batch/results.js';
import { type BatchRow, type Columns, mapHeaders, type NumberStyle, readRow } from '../../batch/rows.js';
import { RowTable } from '../../batch/table.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { quietWith, wholeNumberOption } from '../../options.js';
import { liveBalance } from '../../purchase/live-consent.js';
import { topUpHint } from '../../purchase/top-up.js';
import { dollars, grouped, kg } from '../../render/format.js';
import { hinted } from '../../report-error.js';
import { onStopSignal } from '../../stop-signals.js';
import { keepYoungGenerationSmall } from '../../young-generation.js';
import type { BuyFlags } from './run.js';

/**
 * `carbon buy --from-csv FILE`: one purchase per row. The file is streamed: every row is read and
 * quoted (so the API judges it) before anything is bought, and kept in a compact table between
 * the two. Each row's Idempotency-Key comes from the batch id and the row's identity (its
 * reference, or what it buys; batch/key.ts), never its place in the file or the file's bytes, so
 * running the file again, however it was saved since, buys nothing twice and finishes what an
 * earlier run left (Ctrl-C, a network failure, a full balance).
 */

export interface CsvFlags extends BuyFlags {
  fromCsv?: string;
  batchId?: string;
  partial?: boolean;
  rebuyChanged?: boolean;
}

/** The batch a row belongs to when no --batch-id names one. */
const DEFAULT_BATCH = 'default';
/** Refuses the flags that belong to one purchase: the file says what to buy. */
function checkFlags(flags: CsvFlags): void {
  const single = (['kg', 'amount', 'amountCents', 'reference', 'idempotencyKey', 'wait'] as const).filter((f) => flags[f] !== undefined);
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
  if (flags.quiet && ctx.out.json) throw quietWith('--json');
  const maxCents = flags.maxCents === undefined ? undefined : wholeNumberOption(flags.maxCents, '--max-cents (cents)');
  // Live mode asks once for the whole batch; where nobody can answer, it needs --yes (a batch is too
  // much money to spend on a warning, unlike one `carbon buy`).
  const live = ctx.settings.mode === 'live' && !flags.yes && !flags.dryRun;
  const nobody = flags.fromCsv === '-' ? 'the file is on stdin' : ctx.out.nobodyToAsk;
  if (live && nobody !== undefined)
    throw usage(`A live batch needs --yes where nobody can confirm it (${nobody}). Nothing was bought.`, 'Check it first with --dry-run.');

  const batchId = flags.batchId ?? DEFAULT_BATCH;
  // A batch makes a few short-lived objects a row and keeps none of them; V8 would grow its young
  // generation to the rate they are made at (to about 50 MB over 300,000 rows). Kept at its
  // starting size, a 300,000-row batch peaks near 130 MB RSS instead of 175 (BENCHMARKS.md).
  await keepYoungGenerationSmall();
  const input = await BatchInput.open(flags.fromCsv!);
  try {
    const { table, total, columns } = await checkBatch(ctx, flags, input);
    const rows = rowsAgain(input, columns);
    const what = `${grouped(table.length)} row${table.length === 1 ? '' : 's'}, ${kg(total.kg)} for ${dollars(total.cents)}`;
    if (maxCents !== undefined && total.cents > maxCents) {
      throw new CliError(
        `The batch (${what}) would cost ${total.cents} cents, more than --max-cents ${maxCents}; nothing was bought.`,
        EXIT.usage,
        'max_cents_exceeded',
      );
    }
    // Short as a whole, or a dry run: on the local engine, what an earlier run bought is not charged again (owed.ts).
    const owed =
      flags.dryRun || (total.cents > total.available && !flags.partial)
        ? await owedOf(ctx, rowsAgain(input, columns), table, { id: batchId, total, rebuyChanged: Boolean(flags.rebuyChanged) })
        : undefined;
    if (flags.dryRun)
      return await dryRun(ctx, new ResultPrinter(ctx, Boolean(flags.quiet)), {
        batchId,
        rows,
        table,
        total,
        what,
        partial: Boolean(flags.partial),
        owed,
      });
    if (total.cents > total.available && !flags.partial && (owed?.cents ?? total.cents) > total.available)
      throw shortBalance(ctx, total, what, owed);
    const printer = new ResultPrinter(ctx, Boolean(flags.quiet));
    if (live) {
      const { confirmOrStop } = await import('../../prompt.js');
      await confirmOrStop(
        ctx.out,
        `Buy ${what} from the ${liveBalance(ctx)} (${dollars(total.available)})?`,
        'Cancelled; nothing was bought.',
      );
    }
    const money = { totalCents: total.cents, availableCents: total.available, livemode: total.livemode, partial: Boolean(flags.partial) };
    await buyRows(ctx, rows, table, batchId, printer, { rebuyChanged: Boolean(flags.rebuyChanged), money, capped: maxCents !== undefined });
  } finally {
    await input.close();
  }
}

/** The rows read again from the checked copy: every one was read and quoted, in the same order. */
async function* rowsAgain(input: BatchInput, columns: Columns): AsyncGenerator<BatchRow> {
  const style: NumberStyle = input.style === ',' ? 'point' : 'comma';
  let row = 0;
  let header = true;
  for await (const { cells, line } of input.again()) {
    if (header) {
      header = false;
      continue;
    }
    const params = readRow(cells, columns, style);
    row++;
    if (typeof params === 'string') throw new Error(`row ${row} read differently the second time: ${params}`);
    yield { row, line, params };
  }
}

/**
 * The refusal of a batch the balance does not cover: exit 3, the shortfall in dollars and the top-up that covers it; of the
 * rows not bought before, where the ledger says which were (`owed`).
 */
function shortBalance(ctx: Context, total: BatchTotal, what: string, owed: Owed | undefined): CliError {
  const required = owed?.cents ?? total.cents;
  const short = required - total.available;
  const mode = total.livemode ? 'live' : 'test';
  const topUp = topUpHint(mode, ctx.settings.engine, total.available, required);
  return new CliError(
    `The ${mode} balance (${dollars(total.available)}) does not cover the batch (${what}${earlierRows(owed)}): ${dollars(short)} short. Nothing was bought.`,
    EXIT.insufficientBalance,
    'insufficient_balance',
    `${topUp}, or add --partial to buy the rows that fit, in order (rows an earlier run of this batch bought are not charged again).`,
    { balance_cents: total.available, required_cents: required, shortfall_cents: short },
  );
}

/**
 * The bar while the rows are read and checked. Not for rows typed at the terminal (`--from-csv -`,
 * nothing piped in): it would redraw, and so erase, the line being typed. How to end the rows is
 * said instead; the buying has its bar.
 */
async function checkingBar(ctx: Context, flags: CsvFlags): Promise<Progress> {
  if (flags.fromCsv !== '-' || !ctx.out.stdinTerminal) return progress(ctx.out, flags.dryRun ? 'Checking' : 'Checking before buying');
  const end = process.platform === 'win32' ? 'Ctrl-Z and Enter' : 'Ctrl-D on a line of its own';
  ctx.out.info(`Reading the rows from the terminal: type them (a header line first), then ${end}.`);
  return SILENT;
}

/**
 * Reads and quotes every row, streaming the file: the API judges each row (422s) and prices the
 * batch before any purchase. Any fault refuses the whole batch. Ctrl-C or SIGTERM here buys nothing.
 */
async function checkBatch(
  ctx: Context,
  flags: CsvFlags,
  input: BatchInput,
): Promise<{ table: RowTable; total: BatchTotal; columns: Columns }> {
  const client = await ctx.client();
  const bar = await checkingBar(ctx, flags);
  const total: BatchTotal = { kg: 0, cents: 0, available: 0, livemode: ctx.settings.mode === 'live' };
  const table = new RowTable();
  const quotes = new QuoteCache(client);
  const faults: RowFault[] = [];
  let faultCount = 0;
  let rows = 0;
  let columns: Columns | undefined;
  const fault = (row: number, line: number, message: string) => {
    if (faults.length < SHOWN_FAULTS) faults.push({ row, line, message });
    faultCount++;
  };
  const stop = checkingStop(input, () => rows);
  try {
    for await (const { cells, line } of input.first()) {
      stop.check();
      if (columns === undefined) {
        const mapped = mapHeaders(cells);
        columns = mapped.columns;
        warnIgnored(ctx, mapped.ignored);
        continue;
      }
      const row = ++rows;
      const params = readRow(cells, columns, input.style === ',' ? 'point' : 'comma');
      if (typeof params === 'string') {
        fault(row, line, params);
        continue;
      }
      bar.update(row, row);
      const refused = await stop.race(quoteRow(quotes, params, table, total));
      if (refused !== null) fault(row, line, refused);
    }
    // A signal received in the same turn as the last row's answer is handled before the stop lets
    // go: released first, its handle would be closed with the signal still undelivered, and lost.
    await new Promise((resolve) => setImmediate(resolve));
    stop.check();
  } finally {
    stop.release();
    bar.stop();
  }
  if (columns === undefined)
    throw new CliError('The CSV is empty: it needs a header line and at least one row. Nothing was bought.', EXIT.usage, 'csv_invalid');
  if (rows === 0) throw new CliError('The CSV has a header and no rows. Nothing was bought.', EXIT.usage, 'csv_invalid');
  refuseBatch(ctx, faults, faultCount, rows);
  return { table, total, columns };
}

/**
 * Ctrl-C (or a CI job's SIGTERM, then named) while the batch is checked: nothing has been bought,
 * and nothing will be. The reading stops at once (also while it waits for stdin), and so does the
 * wait for a quote (`race`; the quote, which buys nothing, is left to end on its own). A file read
 * whole before the signal still has rows to go through: the stop is kept, and `check` ends the loop
 * at its next row. `read`: the rows read so far, for the line.
 */
function checkingStop(input: BatchInput, read: () => number): { check(): void; race<T>(p: Promise<T>): Promise<T>; release(): void } {
  let halted: CliError | undefined;
  // The wait under way, to end at the signal: one a row, never one promise every row waits on
  // (each wait would stay attached to it: 300,000 rows held 80 MB more, buy-csv-memory.test.ts).
  let waiting: ((err: CliError) => void) | undefined;
  const release = onStopSignal((signal) => {
    const rows = read();
    halted = new CliError(
      `Interrupted while checking the batch (${signal === 'SIGTERM' ? 'SIGTERM, ' : ''}${grouped(rows)} row${rows === 1 ? '' : 's'} read): nothing was bought.`,
      EXIT.interrupted,
      'interrupted',
    );
    waiting?.(halted);
    input.interrupt(halted);
  });
  return {
    check: () => {
      if (halted !== undefined) throw halted;
    },
    race: <T>(p: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        if (halted !== undefined) return reject(halted);
        waiting = reject;
        p.then(resolve, reject).finally(() => {
          if (waiting === reject) waiting = undefined;
        });
      }),
    release,
  };
}

/** Quotes one row into the table and the totals; why the API refused it (400, 422), if it did. */
async function quoteRow(quotes: QuoteCache, params: PurchaseParams, table: RowTable, total: BatchTotal): Promise<string | null> {
  try {
    const q = await quotes.quote(params);
    if (!table.push(params, { kg: q.kg, cents: q.amount_cents }))
      return `the quote (${q.kg} kg, ${q.amount_cents} cents) is beyond what one purchase can be`;
    total.kg += q.kg;
    total.cents += q.amount_cents;
    total.available = q.available_cents;
    total.livemode = q.livemode;
    return null;
  } catch (err) {
    if (err instanceof CarbonApiError && (err.status === 400 || err.status === 422))
      return `${err.message}${err.param === undefined ? '' : ` (param: ${err.param})`}`;
    // Anything else stops the batch before its first purchase, which its line says (as a single buy's does).
    if (err instanceof CarbonConnectionError) throw new CliError(`${err.message} ${CHECKING}`, EXIT.failure, 'connection_error');
    throw err instanceof CarbonApiError ? hinted(err, CHECKING) : err;
  }
}
const CHECKING = 'The batch was being checked: nothing was bought.';

/** With --json too: a misspelt header (`refrence`) would otherwise buy every row without its reference, unsaid. */
function warnIgnored(ctx: Context, ignored: string[]): void {
  if (ignored.length > 0)
    ctx.out.warn(
      `ignoring column${ignored.length > 1 ? 's' : ''} ${ignored.map((h) => JSON.stringify(h)).join(', ')} ` +
        '(carbon reads kg, amount, amount_cents and reference).',
    );
}
