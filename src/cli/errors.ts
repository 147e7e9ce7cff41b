import { EXIT, type ExitCode } from './exit-codes.js';

/** A field of the `--json` error envelope: a value, or a list of records (a batch's refused rows). */
export type EnvelopeField = string | number | ReadonlyArray<Readonly<Record<string, string | number>>>;

/**
 * An error the CLI reports itself (bad flags, missing configuration): one line on stderr and
 * its exit code. API errors keep their own class; reportError() maps both.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.usage,
    /** The envelope code used for `--json` errors. */
    readonly code = exitCode === EXIT.usage ? 'usage_error' : 'cli_error',
    /** A second line: what to do about it. */
    readonly hint?: string,
    /** Extra fields of the `--json` error envelope, for a script to act on (e.g. `idempotency_key`, a batch's refused `rows`). */
    readonly fields: Record<string, EnvelopeField> = {},
  ) {
    super(message);
  }
}

export function usage(message: string, hint?: string): CliError {
  return new CliError(message, EXIT.usage, 'usage_error', hint);
}
