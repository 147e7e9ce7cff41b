import type { Offset, PurchaseParams } from '../../api/types.js';
import type { CarbonClient } from '../../client/client.js';
import { CarbonApiError, CarbonConnectionError } from '../../client/errors.js';
import { LedgerError } from '../../engine/ledger.js';
import type { Context } from '../context.js';
import { mayHaveBought, sentence } from '../purchase/unknown-outcome.js';
import { dollars, kg } from '../render/format.js';
import { onReaderGone } from '../stdio.js';
import { onStopSignal, stopName } from '../stop-signals.js';
import { rebuyKey } from './key.js';
import { boughtAs, matchRow, noteMatched, type RowKeys, rowKeys, type Seen } from './match.js';
import { progress } from './progress.js';
import { type BatchMoney, type Count, newCount, report, type Stop } from './report.js';
import { type ResultPrinter, result } from './results.js';
import type { BatchRow } from './rows.js';
import type { RowTable } from './table.js';

/** Why a failed purchase stops the batch: a cause every later row would meet too. */
function stopsBatch(err: CarbonApiError | CarbonConnectionError | LedgerError): boolean {
  if (!(err instanceof CarbonApiError)) return true;
  return err.status === 402 || err.status === 401 || err.status === 403 || err.status === 429 || err.status >= 500;
}

export interface BuyOptions {
  /** Buy a row whose quantity changed after it was bought, as it is now (a second purchase). */
  rebuyChanged: boolean;
  /** What the check found the batch costs, and the balance it comes from: a cut batch's line says how it resumes. */
  money: BatchMoney;
  /**
   * --max-cents: each row may cost at most what its quote said (checked inside the purchase by a
   * carbon sandbox), so a rate raised while the batch buys cannot take it past the total checked.
   */
  capped: boolean;
}

/** Buys the rows, each with its batch key, prints each row's result, and then what the batch came to. */
export async function buyRows(
  ctx: Context,
  rows: AsyncIterable<BatchRow>,
  table: RowTable,
  batchId: string,
  printer: ResultPrinter,
  options: BuyOptions,
): Promise<void> {
  const client = await ctx.client();
  // Ctrl-C, or a CI job's SIGTERM: the purchase under way finishes (its answer is printed), the
  // rest are skipped, exit 130.
  let interrupted = null as NodeJS.Signals | null;
  const release = onStopSignal((signal) => void (interrupted ??= signal));
  const bar = await progress(ctx.out, 'Buying');
  const count = newCount();
  let stop: Stop | null = null;
  // The results' reader went away (`| head`): the rest are not bought unseen, and the batch is
  // incomplete (exit 10), not the quiet exit 0 of a listing cut short.
  const releaseReader = onReaderGone((err) => void (stop ??= { text: resultsLost(err) }));
  const taken = new Set<string>();
  const seen: Seen = { claimed: new Map(), holding: new Map(), boughtNow: new Set() };
  try {
    let i = -1;
    for await (const row of rows) {
      i++;
      const keys = rowKeys(table, i, batchId, row.params, taken, seen);
      if (row.params.reference !== undefined && table.occurrences.countOf(row.params) > 1) count.sharedCents += table.quote(i).cents;
      const key = keys.own;
      // A turn of the event loop per row (on the local engine nothing else gives a signal one), before
      // the stop is looked at: libuv runs a signal's handler after the I/O of its turn (an answer).
      await new Promise((resolve) => setImmediate(resolve));
      if (interrupted !== null || stop !== null) {
        count.skipped++;
        count.leftCents += table.quote(i).cents;
        printer.add(
          result(row, key, {
            status: 'skipped',
            error_code: interrupted !== null ? 'interrupted' : 'batch_stopped',
            error_message: stop?.text ?? `interrupted (${stopName(interrupted)})`,
          }),
        );
        continue;
      }
      bar.update(i, table.length, `${kg(count.kg)} · ${dollars(count.cents)}`);
      const failed = count.failed;
      const cap = options.capped ? table.quote(i).cents : undefined;
      const stopped = await buyOne(client, { ...row, cap }, keys, count, printer, options, ctx.settings.store.kind === 'postgres');
      if (count.failed > failed) count.leftCents += table.quote(i).cents;
      stop ??= stopped; // (kept if the reader went away meanwhile)
      if (i % 1024 === 1023) await printer.drain();
    }
  } finally {
    release();
    releaseReader();
    bar.stop();
  }
  if (stop?.ledgerFailed) ctx.ledgerFailed = true;
  const money = stop?.balanceShort ? await balanceNow(client, options.money, count) : options.money;
  report(ctx, { count, interrupted, stop }, { rows: table.length, batchId, money }, printer);
}

/**
 * The check's money with the balance as it is now, for how a batch stopped by 402 resumes: another
 * process (a second batch, a purchase elsewhere) spent from it meanwhile, so the check's balance
 * less what this run charged is more than there is. Kept as it was when the balance cannot be read.
 */
async function balanceNow(client: CarbonClient, money: BatchMoney, count: Count): Promise<BatchMoney> {
  try {
    const balance = await client.balance();
    return balance.livemode === money.livemode ? { ...money, availableCents: balance.available_cents + count.charged } : money;
  } catch {
    return money;
  }
}

/** Why the batch stopped when its results could not go on: their reader went away, or a write failed (a full disk). */
const resultsLost = (err: NodeJS.ErrnoException): string =>
  err.code === 'EPIPE' ? 'stdout was closed: the reader of the results went away' : `stdout could not be written: ${err.code}`;

/** Buys one row and prints its result; what stops the batch, if its failure does. */
async function buyOne(
  client: CarbonClient,
  row: BatchRow & { cap: number | undefined },
  keys: RowKeys,
  count: Count,
  printer: ResultPrinter,
  options: BuyOptions,
  /** The ledger is PostgreSQL's, whose failure may hide a commit made (mayHaveBought); SQLite's file says whether one was. */
  postgres: boolean,
): Promise<Stop | null> {
  const key = keys.own;
  let used = key;
  try {
    let { purchase, changed } = await matchRow(client, row, keys);
    if (purchase === null) {
      // Its key taken by another row this run, what it holds may be that row's purchase of now: not cited.
      const found = changed ?? (await boughtAs(client, key, row.params))?.offset ?? null;
      const before = found !== null && keys.seen.boughtNow.has(found.id) ? null : found;
      if (!options.rebuyChanged) {
        count.changed++;
        printer.add(changedResult(row, key, before));
        return null;
      }
      const again = rebuyKey(key, row.params);
      purchase = { ...(await client.buy(row.params, { idempotencyKey: again, maxAmountCents: row.cap })), key: again };
    }
    used = purchase.key;
    noteMatched(keys, row.params, purchase);
    const { offset, replayed } = purchase;
    count[replayed ? 'replayed' : 'bought']++;
    if (!replayed) count.charged += offset.amount_cents;
    count.kg += offset.kg;
    count.cents += offset.amount_cents;
    printer.add(
      result(row, used, { status: offset.status, offset_id: offset.id, kg: offset.kg, amount_cents: offset.amount_cents, replayed }),
    );
  } catch (err) {
    // The local engine's ledger failing (unreachable, its answer lost) is as the network failing
    // a remote one: the row failed, perhaps bought (its key buys it once when run again), and the batch stops.
    if (!(err instanceof CarbonApiError || err instanceof CarbonConnectionError || err instanceof LedgerError)) {
      // Not a refusal: the rows bought so far are printed before the error is reported.
      printer.flush();
      throw err;
    }
    count.failed++;
    const code = err instanceof CarbonApiError ? err.code : err instanceof LedgerError ? 'storage_error' : 'connection_error';
    // No answer, or a 5xx: the row may have been bought all the same, as `carbon buy` says of a purchase.
    const unsure = mayHaveBought(err, postgres);
    if (unsure) count.maybeBought++;
    const said = unsure ? `${sentence(err.message)} ${MAYBE_BOUGHT}` : err.message;
    printer.add(result(row, used, { status: 'failed', error_code: code, error_message: said }));
    // Rows that share a reference are matched among their keys in order (keysOf): one left unused
    // before a later one's purchase is a gap, under which a sorted rerun would buy a row again.
    if (stopsBatch(err) || keys.shared) return stopAt(row.row, err, code);
  }
  return null;
}

/** A failed row's words when its purchase may have been made (its key is the batch's: running it again finds out). */
const MAYBE_BOUGHT = 'The purchase may or may not have been made: running the batch again replays it if it was, and buys it once if not.';

/** What a row's failure that stops the batch says, and what it tells the line on how to resume. */
function stopAt(row: number, err: CarbonApiError | CarbonConnectionError | LedgerError, code: string): Stop {
  // The ledger's own words (damaged, locked, a full disk) and what to do first, as a single purchase says them.
  if (err instanceof LedgerError) {
    // Quoted inside the line: its "The ledger …" in lower case ("PostgreSQL at …" kept as it is).
    const said = err.message.replace(/\.$/, '').replace(/^The /, 'the ');
    return { text: `the batch stopped at row ${row}: ${said}`, ledgerFailed: true, first: err.hint };
  }
  const keyRefused = err instanceof CarbonApiError && (err.status === 401 || err.status === 403);
  const balanceShort = err instanceof CarbonApiError && err.status === 402;
  return { text: `the batch stopped at row ${row}: ${code}`, keyRefused, balanceShort };
}

const asked = (p: PurchaseParams) => (p.kg !== undefined ? kg(p.kg) : dollars(p.amount_cents ?? 0));

/** A changed row's result: what it was bought as (when it can be found), and why nothing was bought now. */
function changedResult(row: BatchRow, key: string, before: Offset | null) {
  const was =
    before === null
      ? 'it was bought before, as another quantity (see `carbon list --reference`)'
      : `it was bought before as ${kg(before.kg)} for ${dollars(before.amount_cents)} (${before.id})`;
  return result(row, key, {
    status: 'changed',
    offset_id: before?.id ?? null,
    kg: before?.kg ?? null,
    amount_cents: before?.amount_cents ?? null,
    error_code: 'row_changed',
    error_message: `${was}; the row now asks ${asked(row.params)}: nothing was bought now (--rebuy-changed buys it as it is now)`,
  });
}
