import type { Quote } from '../../api/types.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import type { PurchaseFlags } from '../options.js';
import { purchaseParams } from '../options.js';
import { printResource } from '../print.js';
import { dollars, kg } from '../render/format.js';
import { topUpHint } from './top-up.js';

/**
 * `carbon buy --dry-run`: every check a purchase would make, and the exit code it would get,
 * with nothing bought. Validation and pricing (2), `--max-cents` (2), the balance (3) come from a
 * quote; the key's permission (4) from the local sandbox, which knows its keys. The API has no
 * way to ask whether a key may buy without buying, so on the remote engine that one check is
 * named as not made.
 */
export async function dryRun(
  ctx: Context,
  flags: PurchaseFlags & { maxCents?: string; quiet?: boolean },
  maxCents: number | undefined,
): Promise<void> {
  const client = await ctx.client();
  const quote: Quote = await client.quote(purchaseParams(flags));
  // --quiet prints ids, one a line, for xargs: a dry run buys none, so it prints none (the exit code and the line on stderr tell).
  if (!flags.quiet) await printResource(ctx, quote);
  const what = `${kg(quote.kg)} for ${dollars(quote.amount_cents)}`;
  const mode = quote.livemode ? 'live' : 'test';
  if (maxCents !== undefined && quote.amount_cents > maxCents) {
    throw new CliError(
      `Dry run: this purchase would cost ${quote.amount_cents} cents (${dollars(quote.amount_cents)}), more than --max-cents ${maxCents}; it would be refused.`,
      EXIT.usage,
      'max_cents_exceeded',
    );
  }
  if (!quote.sufficient_balance) {
    // The quote's own balance and mode: the balance the purchase would be charged to.
    const { available_cents: balance, amount_cents: required } = quote;
    throw new CliError(
      `Dry run: the ${mode} balance (${dollars(balance)}) does not cover ${what}; the purchase would get 402 insufficient_balance.`,
      EXIT.insufficientBalance,
      'insufficient_balance',
      `${topUpHint(mode, ctx.settings.engine, balance, required)}.`,
      { balance_cents: balance, required_cents: required },
    );
  }
  const access = await keyAccess(ctx);
  if (access.readOnly) {
    throw new CliError(
      'Dry run: this key is read-only; the purchase would get 403 insufficient_permissions.',
      EXIT.auth,
      'insufficient_permissions',
    );
  }
  // Only live offsets wait for review (docs/service-model.md); a test one above the limit is said so, as the quote card says it.
  const review = !quote.requires_review
    ? ''
    : quote.livemode
      ? '; it would wait for review before the credits are retired'
      : '; it is above the review limit, but test offsets are not held for review';
  ctx.out.info(
    `Dry run: ${what} would be bought from the ${mode} balance (${dollars(quote.available_cents)})${review}; ${access.words}. Nothing was bought.`,
  );
}

/** What a dry run says of the key's purchase access where it cannot ask it. */
const UNCHECKED = "the key's purchase access is not checked on the remote engine (the API checks it only when buying)";

/**
 * A dry run's look at the key's purchase access: on the local engine, which knows its keys,
 * whether it is read-only (a purchase would get 403), and else its words for the verdict; on the
 * remote engine it is not asked (the API checks it only when buying), and the words say so.
 */
export async function keyAccess(ctx: Context): Promise<{ readOnly: boolean; words: string }> {
  if (ctx.settings.engine !== 'local') return { readOnly: false, words: UNCHECKED };
  const sandbox = await ctx.sandbox();
  const key = ctx.settings.apiKey === undefined ? undefined : await sandbox.findKey(ctx.settings.apiKey);
  return { readOnly: key?.permission === 'read_only', words: 'the key may buy' };
}
