import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { topUpCommand, topUpHint } from '../purchase/top-up.js';
import { dollars, grouped, kg } from '../render/format.js';
import { SANDBOX_PURCHASE } from '../render/sandbox-note.js';
import { bySigterm } from '../stop-signals.js';
import type { ResultPrinter } from './results.js';

/** How the purchases of a batch went, counted as they are made. */
export interface Count {
  bought: number;
  replayed: number;
  failed: number;
  /** Of the failed rows, those whose purchase may have been made all the same (no answer, a 5xx: mayHaveBought). */
  maybeBought: number;
  skipped: number;
  /** Rows bought earlier whose quantity has changed since: not bought again without --rebuy-changed. */
  changed: number;
  kg: number;
  cents: number;
  /** What this run took from the balance (the rows bought now, not those replayed). */
  charged: number;
  /** What the rows not bought (failed, skipped) were quoted at: what a run that resumes the batch buys. */
  leftCents: number;
  /** What the rows whose reference other rows share were quoted at: counted in full by a local run again (owed.ts). */
  sharedCents: number;
}

/** A batch's counts before its first row. */
export const newCount = (): Count => ({
  bought: 0,
  replayed: 0,
  failed: 0,
  maybeBought: 0,
  skipped: 0,
  changed: 0,
  kg: 0,
  cents: 0,
  charged: 0,
  leftCents: 0,
  sharedCents: 0,
});

/** Where the buying loop ended: the counts, the signal that cut it short (Ctrl-C, SIGTERM), and what stopped it, if anything did. */
export interface Outcome {
  count: Count;
  interrupted: NodeJS.Signals | null;
  stop: Stop | null;
}

/** What stopped the batch, said in its line; `keyRefused`: the key was refused (401, 403), which a run with the same key meets again. */
export interface Stop {
  text: string;
  keyRefused?: boolean;
  /** The ledger failed the row (the local engine's: unreachable, stalled, its answer lost). */
  ledgerFailed?: boolean;
  /** The balance did not cover the row (402): something else spent from it while the batch ran. */
  balanceShort?: boolean;
  /** What to do before the batch is run again (the ledger's hint: free some space, move a damaged file aside). */
  first?: string;
}

/** What the check found: the whole file's quoted cost, the balance then, its mode; and whether this run has --partial. */
export interface BatchMoney {
  totalCents: number;
  availableCents: number;
  livemode: boolean;
  partial: boolean;
}

interface Batch {
  rows: number;
  batchId: string;
  money: BatchMoney;
}

/**
 * How to resume a batch cut short. A run of the same command checks the file against the balance
 * before buying: over HTTP the whole file, on the local engine only the rows not bought yet and
 * those whose reference other rows share (owed.ts). Once this run has spent some of the balance,
 * the rows left may fit what is left while what that run counts no longer does, and it would be
 * refused (exit 3) unless it has --partial; and rows left that cost more than the balance left
 * need a top-up first (on the local engine, at most: that run names the one its rows need).
 */
function howToResume(ctx: Context, outcome: Outcome, batch: Batch): string {
  const { count, stop } = outcome;
  const { totalCents, availableCents, livemode, partial } = batch.money;
  const mode = livemode ? 'live' : 'test';
  const local = ctx.settings.engine === 'local';
  const balance = Math.max(0, availableCents - count.charged);
  // What the run that resumes checks against the balance, at most.
  const counted = local ? count.leftCents + count.sharedCents : totalCents;
  const key = stop?.keyRefused ? ' with a key that may buy (CARBON_API_KEY, --profile), or once the account is active,' : '';
  const withPartial = !partial && counted > balance && count.leftCents <= balance ? ' with --partial' : '';
  const run = `run the same command again${withPartial}${key} to resume (batch ${batch.batchId}): rows already bought are never bought twice`;
  const Run = `${run.charAt(0).toUpperCase()}${run.slice(1)}`;
  const left = `the rows left cost ${local ? 'at most ' : ''}${dollars(count.leftCents)}; the balance is ${dollars(balance)}`;
  if (count.leftCents > balance && local)
    return `${Run} (${left}: where the rows not bought yet need more, that run says so, and names the top-up, at most ${topUpCommand(mode, balance, count.leftCents)}).`;
  if (count.leftCents > balance) return `${topUpHint(mode, ctx.settings.engine, balance, count.leftCents)} (${left}), then ${run}.`;
  const what = local
    ? `what a run counts, the rows whose reference others share in full (${dollars(counted)})`
    : `the whole file (${dollars(totalCents)})`;
  const why =
    withPartial === ''
      ? ''
      : `; the balance left (${dollars(balance)}) covers the rows left (${dollars(count.leftCents)}), not ${what}, which a run without --partial refuses`;
  return `${Run}${why}.`;
}

/** The sentence the line ends with when failed rows may have been bought all the same (their answer lost, or a 5xx). */
function maybeBought({ failed, maybeBought: n }: Count): string {
  if (n === 0) return '';
  const which = failed === 1 ? 'The failed row' : n === failed ? 'Each failed row' : `${grouped(n)} of the failed rows`;
  return ` ${which} may have been bought all the same.`;
}

/** The batch's totals printed, then one line on what was bought; an incomplete batch fails, with how to resume it. */
export function report(ctx: Context, outcome: Outcome, batch: Batch, printer: ResultPrinter): void {
  const { count, interrupted, stop } = outcome;
  const { rows: rowCount, batchId } = batch;
  printer.end({
    batch_id: batchId,
    rows: rowCount,
    bought: count.bought,
    replayed: count.replayed,
    failed: count.failed,
    maybe_bought: count.maybeBought,
    skipped: count.skipped,
    changed: count.changed,
    // Of every row bought, by this run or an earlier one (as the line says); charged_cents: this run's alone.
    kg: count.kg,
    amount_cents: count.cents,
    charged_cents: count.charged,
  });
  const earlier = count.replayed > 0 ? `; ${grouped(count.replayed)} by an earlier run, not charged again` : '';
  // The mode, and the sandbox's, as a single purchase's ✓ line says them: a screenshot of a live batch is read as real money.
  const mode = `${batch.money.livemode ? 'live' : 'test'} mode${ctx.fromSandbox ? `, ${SANDBOX_PURCHASE}` : ''}`;
  const done = `${grouped(count.bought + count.replayed)} of ${grouped(rowCount)} rows bought (${kg(count.kg)} for ${dollars(count.cents)}, ${mode}${earlier})`;
  const rest = [
    count.changed > 0 ? `${grouped(count.changed)} changed since bought, not bought again` : '',
    count.failed > 0 ? `${grouped(count.failed)} failed` : '',
    count.skipped > 0 ? `${grouped(count.skipped)} skipped` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const resume = count.failed + count.skipped > 0 || interrupted !== null;
  const again = [
    stop?.first ?? '',
    resume ? howToResume(ctx, outcome, batch) : '',
    count.changed > 0 ? 'Add --rebuy-changed to buy the changed rows as they are now (the earlier purchases stay).' : '',
  ]
    .filter(Boolean)
    .join(' ');
  // The user's own Ctrl-C goes unnamed; a SIGTERM (a CI job, a service manager) is named.
  const maybe = maybeBought(count);
  const data = { batch_id: batchId };
  if (interrupted !== null)
    throw new CliError(`Interrupted${bySigterm(interrupted)}: ${done}; ${rest}.${maybe}`, EXIT.interrupted, 'interrupted', again, data);
  if (rest !== '')
    throw new CliError(
      `Batch incomplete: ${done}; ${rest}${stop === null ? '' : ` (${stop.text})`}.${maybe}`,
      EXIT.batchIncomplete,
      'batch_incomplete',
      again,
      data,
    );
  if (!ctx.out.json) ctx.out.info(`✓ ${done}.`);
}
