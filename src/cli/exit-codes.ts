/**
 * The documented exit codes (README, `carbon --help`). Stable: scripts branch on them.
 */
export const EXIT = {
  ok: 0,
  /** Unexpected failure, server error, or network failure after retries. */
  failure: 1,
  /**
   * Bad options or arguments; a live purchase with nobody to confirm and no --yes; 400; 422
   * validation_error / amount_too_small; a snapshot refused (not one, newer, damaged).
   */
  usage: 2,
  /** 402 insufficient_balance. */
  insufficientBalance: 3,
  /** 401, 403: authentication, permissions, inactive account. */
  auth: 4,
  /** 404 resource_missing. */
  notFound: 5,
  /** 409 idempotency_key_reused. */
  conflict: 6,
  /** 429 rate_limited, after retries. */
  rateLimited: 7,
  /** --wait timed out with the offset still processing. */
  waitTimeout: 8,
  /** --wait ended with the offset refunded (the order could not be placed). */
  refunded: 9,
  /** `buy --from-csv`: some rows were not bought (their results say why); running it again resumes. */
  batchIncomplete: 10,
  /** The Node.js running carbon is older than 22.13: refused by bin/carbon.cjs before the CLI loads. */
  oldNode: 11,
  /** `watch --forward-to`: stopped with events not delivered, at --until-settled's --timeout or by stdout's reader gone (the cursor keeps them). */
  undelivered: 12,
  /**
   * Stopped by the user: Ctrl-C (SIGINT) at a wait, a confirmation or a hidden prompt, a batch, a
   * watch or `logs --follow` (SIGTERM too, as a CI job that times out sends, and the line names
   * it), or no at a confirmation: 128 + 2, as shells report Ctrl-C. Said in one plain line, not as
   * an error.
   */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The exit code for an API status and its error code. A 404 is exit 5 only for what the API says
 * does not exist (`resource_missing`): `route_missing`, an address the API does not serve (a base URL
 * that does not end in /api/v1, a path mistyped in `carbon api`), is exit 1, as another server's 404
 * is, so a script reading 5 as "no such offset" is not misled by a wrong setting.
 */
export function exitCodeForStatus(status: number, code?: string): ExitCode {
  if (status === 400 || status === 413 || status === 422 || status === 405) return EXIT.usage;
  if (status === 402) return EXIT.insufficientBalance;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return code === 'route_missing' ? EXIT.failure : EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status === 429) return EXIT.rateLimited;
  return EXIT.failure;
}

export const EXIT_CODES_HELP = `Exit codes:
    0  success
    1  unexpected failure, server error, or network failure after retries
    2  usage: bad options or arguments, a malformed setting (a key that is no test or live key), a live purchase with nobody to confirm and no --yes, 400, 422 validation_error / amount_too_small, a snapshot refused (the ledger untouched)
    3  402 insufficient_balance
    4  401, 403: authentication, permissions, inactive account; no key at all
    5  404 resource_missing; carbon open of an offset with no certificate
    6  409 idempotency_key_reused
    7  429 rate_limited after retries
    8  --wait timed out with the offset still processing
    9  --wait ended with the offset refunded (the order could not be placed)
   10  buy --from-csv: some rows were not bought (the results say why); run it again to resume
   11  this Node.js is older than 22.13 (carbon needs 22.13 or later)
   12  watch --forward-to: stopped with events not delivered (at --timeout, or its output's reader gone)
  130  stopped by Ctrl-C or SIGTERM (at --wait, a purchase awaiting its answer, a confirmation, buy --from-csv, watch, logs --follow or a snapshot's check), or no at a confirmation: a line says what was done`;
