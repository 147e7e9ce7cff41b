import type { CarbonClient } from '../../client/client.js';
import { CarbonApiError, CarbonConnectionError } from '../../client/errors.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { dollars, kg } from '../render/format.js';
import { rowKey } from './key.js';
import { progress } from './progress.js';
import { type ResultPrinter, result } from './results.js';
import type { BatchRow } from './rows.js';

/** How the purchases of a batch went, counted as they are made. */
interface Count {
  bought: number;
  replayed: number;
  failed: number;
  skipped: number;
  kg: number;
  cents: number;
}

/** Where the buying loop ended: the counts, whether Ctrl-C cut it short, and what stopped it, if anything did. */
interface Outcome {
  count: Count;
  interrupted: boolean;
  stop: string | null;
}

/** Why a failed purchase stops the batch: a cause every later row would meet too. */
function stopsBatch(err: CarbonApiError | CarbonConnectionError): boolean {
  if (err instanceof CarbonConnectionError) return true;
  return err.status === 402 || err.status === 401 || err.status === 403 || err.status === 429 || err.status >= 500;
}

/** Buys the rows, each with its batch key, and prints each row's result. */
export async function buyRows(ctx: Context, rows: BatchRow[], batchId: string, printer: ResultPrinter): Promise<void> {
  report(ctx, await buyEach(ctx, rows, batchId, printer), rows.length, batchId, printer);
}

async function buyEach(ctx: Context, rows: BatchRow[], batchId: string, printer: ResultPrinter): Promise<Outcome> {
  const client = await ctx.client();
  // Ctrl-C: the purchase under way finishes (its answer is printed), the rest are skipped, exit 130.
  let interrupted = false;
  const onInterrupt = () => void (interrupted = true);
  process.on('SIGINT', onInterrupt);
  const bar = await progress(ctx.out, 'Buying');
  const count: Count = { bought: 0, replayed: 0, failed: 0, skipped: 0, kg: 0, cents: 0 };
  let stop: string | null = null;
  try {
    for (const [i, row] of rows.entries()) {
      const key = await rowKey(batchId, row);
      if (interrupted || stop !== null) {
        count.skipped++;
        printer.add(
          result(row, key, {
            status: 'skipped',
            error_code: interrupted ? 'interrupted' : 'batch_stopped',
            error_message: stop ?? 'interrupted (Ctrl-C)',
          }),
        );
        continue;
      }
      bar.update(i, rows.length, `${kg(count.kg)} · ${dollars(count.cents)}`);
      // A turn of the event loop per row: on the local engine nothing else would give Ctrl-C one.
      await new Promise((resolve) => setImmediate(resolve));
      stop = await buyOne(client, row, key, count, printer);
    }
  } finally {
    process.off('SIGINT', onInterrupt);
    bar.stop();
  }
  return { count, interrupted, stop };
}

/** Buys one row and prints its result; what stops the batch, if its failure does. */
async function buyOne(client: CarbonClient, row: BatchRow, key: string, count: Count, printer: ResultPrinter): Promise<string | null> {
  try {
    const { offset, replayed } = await client.buy(row.params, { idempotencyKey: key });
    count[replayed ? 'replayed' : 'bought']++;
    count.kg += offset.kg;
    count.cents += offset.amount_cents;
    printer.add(
      result(row, key, { status: offset.status, offset_id: offset.id, kg: offset.kg, amount_cents: offset.amount_cents, replayed }),
    );
  } catch (err) {
    if (!(err instanceof CarbonApiError || err instanceof CarbonConnectionError)) {
      // Not a refusal: the rows bought so far are printed before the error is reported.
      printer.flush();
      throw err;
    }
    count.failed++;
    const code = err instanceof CarbonApiError ? err.code : 'connection_error';
    printer.add(result(row, key, { status: 'failed', error_code: code, error_message: err.message }));
    if (stopsBatch(err)) return `the batch stopped at row ${row.row}: ${code}`;
  }
  return null;
}

/** The batch's totals printed, then one line on what was bought; an incomplete batch fails, with how to resume it. */
function report(ctx: Context, outcome: Outcome, rowCount: number, batchId: string, printer: ResultPrinter): void {
  const { count, interrupted, stop } = outcome;
  printer.end({
    batch_id: batchId,
    rows: rowCount,
    bought: count.bought,
    replayed: count.replayed,
    failed: count.failed,
    skipped: count.skipped,
    kg: count.kg,
    amount_cents: count.cents,
  });
  const earlier = count.replayed > 0 ? `; ${count.replayed} by an earlier run, not charged again` : '';
  const done = `${count.bought + count.replayed} of ${rowCount} rows bought (${kg(count.kg)} for ${dollars(count.cents)}${earlier})`;
  const rest = [count.failed > 0 ? `${count.failed} failed` : '', count.skipped > 0 ? `${count.skipped} skipped` : '']
    .filter(Boolean)
    .join(', ');
  const again = `Run the same command again to resume (batch ${batchId}): rows already bought are never bought twice.`;
  if (interrupted) throw new CliError(`Interrupted: ${done}; ${rest}.`, EXIT.interrupted, 'interrupted', again, { batch_id: batchId });
  if (rest !== '')
    throw new CliError(
      `Batch incomplete: ${done}; ${rest}${stop === null ? '' : ` (${stop})`}.`,
      EXIT.batchIncomplete,
      'batch_incomplete',
      again,
      { batch_id: batchId },
    );
  if (!ctx.out.json) ctx.out.info(`✓ ${done}.`);
}
