import type { PurchaseParams } from '../../../api/types.js';
import type { CarbonClient, Purchase } from '../../../client/client.js';
import { CarbonAnswerError, CarbonApiError, CarbonConnectionError } from '../../../client/errors.js';
import { LedgerError } from '../../../engine/ledger.js';
import { randomUUID } from '../../../platform/random.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT, exitCodeForStatus } from '../../exit-codes.js';
import { printOffset } from '../../offsets/wait.js';
import { type PurchaseFlags, purchaseParams, quietWith, wholeNumberOption } from '../../options.js';
import { liveBalance, liveNeedsYes, liveShortBalance } from '../../purchase/live-consent.js';
import {
  ledgerFailedPurchase,
  mayHaveBought,
  nothingBought,
  retriedRefusal,
  sayBoughtIfStdoutLost,
  unknownPurchase,
} from '../../purchase/unknown-outcome.js';
import { dollars, kg } from '../../render/format.js';
import { SANDBOX_PURCHASE } from '../../render/sandbox-note.js';
import { bySigterm, untilStopped } from '../../stop-signals.js';

/** What a purchase above the review limit does, said wherever it is shown. */
const REVIEW_NOTE = 'It is above the review limit: it will wait for review before it is placed';

export interface BuyFlags extends PurchaseFlags {
  idempotencyKey?: string;
  wait?: boolean;
  maxCents?: string;
  yes?: boolean;
  quiet?: boolean;
  dryRun?: boolean;
}

/**
 * Buys offsets. The purchase itself is one API call; a quote comes first only when something
 * must be known before spending: a --max-cents ceiling, or a person confirming a live purchase.
 */
/** A purchase, and whether the quote before it said it waits for review (known for live purchases). */
type BuyResult = Purchase & { requiresReview: boolean; maxCents?: number };

async function buy(ctx: Context, flags: BuyFlags): Promise<BuyResult> {
  const params = purchaseParams(flags);
  const maxCents = flags.maxCents === undefined ? undefined : wholeNumberOption(flags.maxCents, '--max-cents (cents)');
  // One rule: real money is spent only when a person said so (live-consent.ts). A live purchase
  // asks when a person can answer (stdin and stderr are terminals, and no CI job), and needs --yes
  // when nobody can.
  const live = ctx.settings.mode === 'live' && !flags.yes;
  const nobody = live ? ctx.out.nobodyToAsk : undefined;
  const confirm = live && nobody === undefined;
  if (nobody !== undefined) throw liveNeedsYes(ctx, nobody, 'nothing was bought');
  // The ledger failing as it opens (a lock, a stalled database) comes before any purchase: said so.
  const client = await ctx.client().catch((err: unknown) => {
    throw err instanceof LedgerError ? nothingBought(err) : err;
  });
  const requiresReview = await checkBeforeBuying(ctx, client, params, maxCents, confirm, flags.idempotencyKey !== undefined);
  // Generated here rather than in the client so that a failure can tell the user the key to
  // retry with: the same key can never buy twice.
  const idempotencyKey = flags.idempotencyKey ?? randomUUID();
  try {
    const bought = await unlessStopped(
      // The header takes 15 digits; no purchase costs near that (5,000,000 cents at most), so a larger cap is the same cap.
      client.buy(params, {
        idempotencyKey,
        ...(maxCents === undefined ? {} : { maxAmountCents: Math.min(maxCents, 999_999_999_999_999) }),
      }),
      idempotencyKey,
    );
    return { ...bought, requiresReview, ...(maxCents === undefined ? {} : { maxCents }) };
  } catch (err) {
    if (err instanceof LedgerError) throw ledgerFailedPurchase(ctx, err, idempotencyKey);
    if (!(err instanceof CarbonConnectionError || err instanceof CarbonApiError)) throw err;
    throw failedPurchase(err, idempotencyKey, maxCents);
  }
}

/**
 * The purchase, unless Ctrl-C or SIGTERM (a CI job that times out) comes before its answer: then it
 * may have been made, so the stop says so and names the key to retry with (exit 130), where Node's
 * own end would have said nothing and lost the generated key.
 */
function unlessStopped(purchase: Promise<Purchase>, idempotencyKey: string): Promise<Purchase> {
  return untilStopped(purchase, (signal) =>
    unknownPurchase(`Stopped${bySigterm(signal)} before the purchase was answered.`, EXIT.interrupted, 'interrupted', idempotencyKey),
  );
}

/**
 * The quote before a purchase, when something must be known before spending: it holds the purchase to
 * --max-cents and asks the person confirming a live one. Says whether the purchase will wait for review.
 */
async function checkBeforeBuying(
  ctx: Context,
  client: CarbonClient,
  params: PurchaseParams,
  maxCents: number | undefined,
  confirm: boolean,
  retry: boolean,
): Promise<boolean> {
  // Live purchases are quoted first too: the quote says whether the purchase will wait for review.
  if (maxCents === undefined && ctx.settings.mode !== 'live') return false;
  // Stopped while quoted, nothing was bought: the line says so (a CI job's log), where Node's own end says nothing.
  const quote = await untilStopped(
    client.quote(params),
    (signal) => new CliError(`Stopped${bySigterm(signal)} before buying; nothing was bought.`, EXIT.interrupted, 'interrupted'),
  );
  const requiresReview = quote.livemode && quote.requires_review;
  // A key given may have bought already, at the rate then: a service that checks the ceiling in the
  // purchase (its quote says so) is asked, and replays that purchase or refuses a new one above it.
  if (maxCents !== undefined && quote.amount_cents > maxCents && !(retry && client.checksMaxAmount))
    throw overMax(quote.amount_cents, maxCents);
  if (confirm) {
    // Nobody is asked to confirm what would fail: as a batch, a purchase the balance does not cover is refused first.
    if (!quote.sufficient_balance) throw liveShortBalance(ctx, quote, 'nothing was bought');
    const { confirmOrStop } = await import('../../prompt.js');
    await confirmOrStop(
      ctx.out,
      `Buy ${kg(quote.kg)} for ${dollars(quote.amount_cents)} from the ${liveBalance(ctx)} (${dollars(quote.available_cents)})?${requiresReview ? ` ${REVIEW_NOTE}.` : ''}`,
      'Cancelled; nothing was bought.',
    );
  }
  return requiresReview;
}

/** A purchase --max-cents refused: at the quote, or (a carbon sandbox) inside the purchase itself. */
function overMax(cents: number, maxCents: number | undefined): CliError {
  return new CliError(
    `This purchase would cost ${cents} cents (${dollars(cents)}), more than --max-cents ${maxCents}; nothing was bought.`,
    EXIT.usage,
    'max_cents_exceeded',
  );
}

/** The error a failed purchase reports: whether anything can have been bought, and if so the key to retry with. */
function failedPurchase(err: CarbonConnectionError | CarbonApiError, idempotencyKey: string, maxCents?: number): Error {
  // The outcome is unknown when the last attempt got no answer or a 5xx; and also when it was
  // refused for a reason the client retries (429, a 409 other than a reused key) after an earlier
  // attempt got no answer or a 5xx: that one may have bought. Either way, say the key to retry
  // with. Refused every time, nothing was bought.
  const refusedAfter = err instanceof CarbonApiError && retriedRefusal(err.status, err.code, err.earlierMaybeSent);
  if (err instanceof CarbonConnectionError && err.neverSent) {
    // Every attempt failed before sending anything: nothing can have been bought.
    return new CliError(
      `${err.message} Nothing was sent, so nothing was bought.`,
      EXIT.failure,
      'connection_error',
      'Check the base URL and that the server is running, then run the command again.',
    );
  }
  // Another server's "no such path" (a wrong base URL), the only answer there was: nothing was bought.
  if (err instanceof CarbonAnswerError && err.refused)
    return new CliError(`${err.message} Nothing was bought.`, EXIT.failure, 'connection_error');
  // A carbon sandbox priced it above --max-cents inside the purchase (the rate rose after the quote).
  if (err instanceof CarbonApiError && err.code === 'amount_above_max') return overMax(err.requiredCents ?? 0, maxCents);
  if (!mayHaveBought(err, false)) return err;
  return unknownPurchase(
    err.message,
    err instanceof CarbonApiError ? exitCodeForStatus(err.status, err.code) : EXIT.failure,
    err instanceof CarbonApiError ? err.code : 'connection_error',
    idempotencyKey,
    refusedAfter,
  );
}

export async function run(
  ctx: Context,
  flags: BuyFlags & { fromCsv?: string; batchId?: string; partial?: boolean; rebuyChanged?: boolean },
): Promise<void> {
  if (flags.fromCsv !== undefined) return (await import('./csv.js')).run(ctx, flags);
  const batchOnly = (['batchId', 'partial', 'rebuyChanged'] as const).find((f) => flags[f] !== undefined);
  if (batchOnly !== undefined) {
    const name = { batchId: '--batch-id', partial: '--partial', rebuyChanged: '--rebuy-changed' }[batchOnly];
    throw usage(`${name} belongs to a --from-csv batch: give --from-csv FILE too.`);
  }
  if (flags.quiet && ctx.out.json) throw quietWith('--json');
  // Not ignored: a script that waits for the offset to be placed must not take a dry run's 0 for it.
  if (flags.dryRun && flags.wait) throw usage('--dry-run buys nothing, so --wait would wait for nothing; leave out --wait.');
  if (flags.dryRun) {
    const maxCents = flags.maxCents === undefined ? undefined : wholeNumberOption(flags.maxCents, '--max-cents (cents)');
    const { dryRun } = await import('../../purchase/dry-run.js');
    return dryRun(ctx, flags, maxCents);
  }
  const purchase = await buy(ctx, flags);
  const { offset } = purchase;
  // A replay is said on stderr in every format (--json and --quiet too), so a script's log tells a
  // purchase from the first one's answer returned again; stdout stays the offset, as the API gave it.
  if (purchase.replayed || (!ctx.out.json && !flags.quiet)) {
    const paint = await ctx.paint('stderr');
    const what = `${kg(offset.kg)} for ${dollars(offset.amount_cents)}`;
    ctx.out.info(
      purchase.replayed
        ? `${paint.yellow('↺')} Already bought with this idempotency key: ${what} (${offset.id}); nothing new was charged.`
        : `${paint.green('✓')} Bought ${what} (${offset.livemode ? paint.red('live') : paint.cyan('test')} mode${ctx.fromSandbox ? `, ${SANDBOX_PURCHASE}` : ''}).${purchase.requiresReview ? ` ${REVIEW_NOTE}.` : ''}`,
    );
  }
  sayBoughtIfStdoutLost(offset);
  await printOffset(ctx, await ctx.client(), offset, { wait: flags.wait, quiet: flags.quiet, review: purchase.requiresReview });
  // A service that does not check Carbon-Max-Amount-Cents (carbon's sandbox does) may have charged
  // more, its rate risen after the quote: bought, and printed, but not a success.
  if (purchase.maxCents !== undefined && !purchase.replayed && offset.amount_cents > purchase.maxCents) {
    throw new CliError(
      `${offset.id} cost ${offset.amount_cents} cents (${dollars(offset.amount_cents)}), more than --max-cents ${purchase.maxCents}: the price rose after the quote, and the service does not check the ceiling inside the purchase. It was bought.`,
      EXIT.failure,
      'max_cents_exceeded',
      undefined,
      { offset_id: offset.id },
    );
  }
}
