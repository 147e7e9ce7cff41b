import type { Quote } from '../../api/types.js';
import { isSandboxKey } from '../../service/keys.js';
import type { Context } from '../context.js';
import { CliError, usage } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { dollars } from '../render/format.js';
import { topUpHint } from './top-up.js';

/**
 * One rule for real money (README, "A live purchase spends real money only when someone said
 * so"): a live purchase is asked about when a person can answer, and needs --yes when nobody can
 * (a script, CI, input piped in), as gh and terraform do for what cannot be undone. This is the
 * refusal, a usage error (exit 2): `buy` and `api POST /offsets` alike. `outcome` says what did not
 * happen ("nothing was bought").
 */
export function liveNeedsYes(ctx: Context, nobody: string, outcome: string): CliError {
  return usage(
    `A live purchase needs --yes when nobody can confirm it (${nobody}); ${outcome}.`,
    // The local model rehearses the rule (a script that works here works against the API), but spends no money; so does a served sandbox.
    ctx.settings.engine === 'local'
      ? 'Add --yes to buy without being asked (the local sandbox asks as the API would; no real money is spent here).'
      : isSandboxKey(ctx.settings.apiKey ?? '')
        ? "Add --yes to buy without being asked (a carbon sandbox's live key, which asks as the API would; no real money is spent)."
        : 'Add --yes to buy with real money without being asked.',
  );
}

/** Whose LIVE balance a confirmation names: a sandbox's says so (the local engine, or a server whose answers say it). */
export const liveBalance = (ctx: Context): string => (ctx.fromSandbox ? "sandbox's LIVE balance" : 'LIVE balance');

/**
 * A live purchase the quote says the balance does not cover, refused before the question (`buy`,
 * `api POST /offsets`): the 402's line and the top-up, exit 3; `outcome` says what did not happen.
 */
export function liveShortBalance(ctx: Context, quote: Quote, outcome: string): CliError {
  const { available_cents: balance, amount_cents: required } = quote;
  return new CliError(
    `The live balance (${dollars(balance)}) does not cover this purchase (${dollars(required)}); ${outcome}.`,
    EXIT.insufficientBalance,
    'insufficient_balance',
    `${topUpHint('live', ctx.settings.engine, balance, required)}.`,
    { balance_cents: balance, required_cents: required },
  );
}
