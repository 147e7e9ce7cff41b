import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { keyAccess } from '../purchase/dry-run.js';
import { topUpHint } from '../purchase/top-up.js';
import { dollars, grouped } from '../render/format.js';
import { onReaderGone } from '../stdio.js';
import { rowKey } from './key.js';
import { CHANGED, earlierRows, type Owed, REPLAYED } from './owed.js';
import { type ResultPrinter, result } from './results.js';
import type { BatchRow } from './rows.js';
import type { RowTable } from './table.js';

/** `carbon buy --from-csv … --dry-run` (commands/buy/csv.ts): the rows as quoted, the totals, and the purchase's verdict. */

/** What the quotes say of the batch: its weight, its price, and the balance it would come from. */
export interface BatchTotal {
  kg: number;
  cents: number;
  available: number;
  livemode: boolean;
}

/**
 * `--dry-run`: each row's quote and the batch's totals, and whether the balance covers them; its
 * exit code the purchase's (README): 3 for a batch the balance does not cover, 10 with --partial
 * when rows would be left.
 */
export async function dryRun(
  ctx: Context,
  printer: ResultPrinter,
  batch: {
    batchId: string;
    rows: AsyncIterable<BatchRow>;
    table: RowTable;
    total: BatchTotal;
    what: string;
    partial: boolean;
    owed?: Owed | undefined;
  },
): Promise<void> {
  const { batchId, table, total, what, partial, owed } = batch;
  // What the balance must cover: the whole file, or (where the ledger says which rows an earlier run bought: owed.ts) the rest.
  const covered = (owed?.cents ?? total.cents) <= total.available;
  await printRows(printer, batch);
  printer.end({
    batch_id: batchId,
    rows: table.length,
    kg: total.kg,
    amount_cents: total.cents,
    // What the batch would charge: without the rows an earlier run bought, where the ledger says (null over HTTP).
    charged_cents: owed === undefined ? null : owed.cents,
    available_cents: total.available,
    sufficient_balance: covered,
    livemode: total.livemode,
    dry_run: true,
  });
  const balance = `the ${total.livemode ? 'live' : 'test'} balance (${dollars(total.available)})`;
  if (!covered && partial) throw partialVerdict(table, total, balance, owed);
  if (!covered) throw shortVerdict(ctx, total, what, owed, balance);
  // A read-only key (the local engine knows its keys): the first row would get 403, and the batch stop there (exit 10).
  const access = await keyAccess(ctx);
  if (access.readOnly) throw refusedKeyVerdict(table.length);
  // Rows changed since an earlier run bought them are not bought: the batch would end incomplete, exit 10.
  if (owed !== undefined && owed.changed > 0) {
    throw new CliError(
      `Dry run: ${what}, from ${balance}, which covers it${earlierRows(owed)}; the batch would end incomplete. Nothing was bought.`,
      EXIT.batchIncomplete,
      'batch_incomplete',
      'Add --rebuy-changed to buy the changed rows as they are now.',
    );
  }
  if (!ctx.out.json) {
    // Over HTTP, which rows an earlier run bought is not known: said as a rule. The ledger says which (owed.ts).
    const earlier =
      owed === undefined
        ? ' (rows bought by an earlier run of this batch would not be charged again)'
        : owed.replayed > 0
          ? ` (${earlierRows(owed).slice(2)})`
          : '';
    ctx.out.info(`Dry run: ${what}, from ${balance}, which covers it${earlier}; ${access.words}. Nothing was bought.`);
  }
}

/**
 * Each row as quoted. Where the ledger says (the local engine: owed.ts), a row an earlier run
 * bought would come back replayed, and a changed one would not be bought.
 */
async function printRows(
  printer: ResultPrinter,
  { batchId, rows, table, owed }: { batchId: string; rows: AsyncIterable<BatchRow>; table: RowTable; owed?: Owed | undefined },
): Promise<void> {
  printer.coalesce = true;
  // A reader that goes away (`| head`) ends the rows, not the verdict: the exit code still says it.
  let gone = false;
  const release = onReaderGone(() => void (gone = true));
  let i = 0;
  try {
    for await (const row of rows) {
      if (gone) break;
      const q = table.quote(i);
      const key = rowKey(batchId, row.params, table.occurrenceOf(i));
      const earlier = owed?.free[i];
      printer.add(
        earlier === CHANGED
          ? result(row, key, { status: 'changed', kg: q.kg, amount_cents: q.cents, ...NOT_REBOUGHT })
          : result(row, key, { status: 'quoted', kg: q.kg, amount_cents: q.cents, replayed: earlier === REPLAYED }),
      );
      // Written as it goes: a pipe that is slower than the rows gets them without the whole batch held.
      if (i++ % 1024 === 1023) await printer.drain();
    }
  } finally {
    release();
  }
}

/** A changed row's dry-run result (as buy.ts's changedResult, without the earlier purchase it would look up). */
const NOT_REBOUGHT = {
  error_code: 'row_changed',
  error_message:
    'it was bought before, as another quantity (see `carbon list --reference`): nothing would be bought now (--rebuy-changed buys it as it is now)',
};

/**
 * A dry run's verdict on a batch the balance does not cover, with --partial: the rows would be
 * bought in order until one does not fit (that one failing, the rest skipped), exit 10 as the
 * purchase's. A row an earlier run bought comes back uncharged: where the ledger says which
 * (`owed`, the local engine), it costs nothing here; elsewhere the quotes cannot know.
 */
function partialVerdict(table: RowTable, total: BatchTotal, balance: string, owed: Owed | undefined): CliError {
  const cost = (i: number) => ((owed?.free[i] ?? 0) > 0 ? 0 : table.quote(i).cents);
  let fit = 0;
  let cents = 0;
  while (fit < table.length && cents + cost(fit) <= total.available) cents += cost(fit++);
  const skipped = table.length - fit - 1;
  const rest = `row ${fit + 1} would fail (insufficient_balance)${skipped > 0 ? ` and ${grouped(skipped)} would be skipped` : ''}`;
  return new CliError(
    `Dry run: with --partial, ${balance} covers the first ${grouped(fit)} of ${grouped(table.length)} rows (${dollars(cents)}${earlierRows(owed, false)}); ${rest}. Nothing was bought.`,
    EXIT.batchIncomplete,
    'batch_incomplete',
    owed === undefined
      ? 'Rows an earlier run of this batch bought are not charged again, so a batch being resumed may fit more rows than this says.'
      : undefined,
  );
}

/** A dry run's verdict on a batch whose key is read-only: as the purchase would, its first row refused (403) and the rest skipped, exit 10. */
function refusedKeyVerdict(rows: number): CliError {
  const skipped = rows - 1;
  return new CliError(
    `Dry run: this key is read-only; row 1 would fail (insufficient_permissions)${skipped > 0 ? ` and ${grouped(skipped)} would be skipped` : ''}. Nothing was bought.`,
    EXIT.batchIncomplete,
    'batch_incomplete',
    'Run it with a key that may buy.',
  );
}

/** A dry run's verdict on a batch the balance does not cover (what an earlier run bought left out, where known: owed.ts), exit 3. */
function shortVerdict(ctx: Context, total: BatchTotal, what: string, owed: Owed | undefined, balance: string): CliError {
  const required = owed?.cents ?? total.cents;
  const short = required - total.available;
  // The fields the purchase's refusal carries (commands/buy/csv.ts), so a script rehearses what it will read.
  return new CliError(
    `Dry run: ${balance} does not cover the batch (${what}${earlierRows(owed)}): ${dollars(short)} short; buying would be refused. Nothing was bought.`,
    EXIT.insufficientBalance,
    'insufficient_balance',
    `${topUpHint(total.livemode ? 'live' : 'test', ctx.settings.engine, total.available, required)}, or add --partial to buy the rows that fit, in order.`,
    { balance_cents: total.available, required_cents: required, shortfall_cents: short },
  );
}
