import type { Offset } from '../../api/types.js';
import { CarbonAnswerError, type CarbonApiError, CarbonConnectionError } from '../../client/errors.js';
import { LedgerError } from '../../engine/ledger.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { followUp } from '../follow-up.js';
import { dollars, kg } from '../render/format.js';
import { sayIfStdoutLost } from '../stdio.js';

/**
 * A purchase made: a stdout that fails now (a full disk under `> offset.json`) must not read as
 * nothing done, or a script buys again. The line names the offset and how to show it (`carbon buy`,
 * `carbon api POST /offsets`).
 */
export function sayBoughtIfStdoutLost(offset: Pick<Offset, 'id' | 'kg' | 'amount_cents'>): void {
  sayIfStdoutLost(
    `${offset.id} was bought (${kg(offset.kg)} for ${dollars(offset.amount_cents)}): \`${followUp(['show', offset.id])}\` shows it.`,
    {
      offset_id: offset.id,
    },
  );
}

/**
 * A purchase whose outcome is unknown (no answer, a 5xx, or a refusal after an attempt that may
 * have bought): what happened, and the Idempotency-Key to retry it with, in the hint and in the
 * --json envelope (`carbon buy`, `carbon api POST /offsets`).
 */
export function unknownPurchase(said: string, exitCode: ExitCode, code: string, idempotencyKey: string, earlierAttempt = false): CliError {
  return new CliError(
    `${sentence(said)} The purchase may or may not have been made${earlierAttempt ? ' (an earlier attempt may have gone through)' : ''}.`,
    exitCode,
    code,
    `Retry safely with --idempotency-key ${idempotencyKey}: a key that bought once returns that purchase and never buys again.`,
    // A --json caller gets no hint line: the envelope carries the key to retry with.
    { idempotency_key: idempotencyKey },
  );
}

/**
 * Whether a refusal may hide a purchase: one the client retries (429, a 409 other than a reused
 * key) after an earlier attempt got no answer or a 5xx, which may have bought.
 */
export function retriedRefusal(status: number, code: string | undefined, earlierMaybeSent: boolean): boolean {
  return earlierMaybeSent && (status === 429 || (status === 409 && code !== 'idempotency_key_reused'));
}

/**
 * `said` as a sentence of its own, for another to follow: a server's own words may end without a
 * full stop ("down"); a question ("is the base URL right?") keeps its mark.
 */
export function sentence(said: string): string {
  const text = said.trimEnd();
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/**
 * Whether a purchase that failed with `err` may have been made all the same: no answer to a request
 * that may have been sent (not one refused before a byte left, nor another server's "no such
 * path"), a 5xx, a refusal the client retried after such an attempt (retriedRefusal), or a ledger
 * failure whose COMMIT PostgreSQL may have carried out with its answer lost (SQLite's file says
 * whether a commit was made). `carbon buy` then says "may or may not", with the key to retry with;
 * `buy --from-csv` says it of the row.
 */
export function mayHaveBought(err: CarbonApiError | CarbonConnectionError | LedgerError, postgres: boolean): boolean {
  if (err instanceof LedgerError) return postgres && !err.unwritten;
  if (err instanceof CarbonConnectionError) return !err.neverSent && !(err instanceof CarbonAnswerError && err.refused);
  return err.status >= 500 || retriedRefusal(err.status, err.code, err.earlierMaybeSent);
}

/**
 * What a purchase the ledger failed under is (`carbon buy`, `carbon api POST /offsets`). On
 * PostgreSQL (the connection lost, a statement past its deadline) its COMMIT may have been carried
 * out with the answer lost, and running the command again would buy anew: its outcome is unknown,
 * with the key to retry with. SQLite's file says whether its commit was made: a failed one was not,
 * nor was one PostgreSQL refused or cancelled before its COMMIT (err.unwritten): said so.
 */
export function ledgerFailedPurchase(ctx: Context, err: LedgerError, idempotencyKey: string): Error {
  ctx.ledgerFailed = true;
  if (mayHaveBought(err, ctx.settings.store.kind === 'postgres'))
    return unknownPurchase(err.message, EXIT.failure, 'storage_error', idempotencyKey);
  return nothingBought(err);
}

/** A ledger failure that came before any purchase was sent (as the ledger opened, or a refused commit): said to have bought nothing. */
export function nothingBought(err: LedgerError): LedgerError {
  return new LedgerError(`${err.message} Nothing was bought.`, err.path, err.hint, err.transient, err.unwritten);
}
