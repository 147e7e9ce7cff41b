import { CliError } from '../errors.js';
import type { ExitCode } from '../exit-codes.js';

/**
 * A purchase whose outcome is unknown (no answer, a 5xx, or a refusal after an attempt that may
 * have bought): what happened, and the Idempotency-Key to retry it with, in the hint and in the
 * --json envelope (`carbon buy`, `carbon api POST /offsets`).
 */
export function unknownPurchase(said: string, exitCode: ExitCode, code: string, idempotencyKey: string, earlierAttempt = false): CliError {
  return new CliError(
    `${said} The purchase may or may not have been made${earlierAttempt ? ' (an earlier attempt may have gone through)' : ''}.`,
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
