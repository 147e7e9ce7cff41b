import type { Writable } from 'node:stream';
import type { ErrorEnvelope, ErrorType } from '../api/types.js';
import { CarbonApiError, CarbonConfigError, CarbonConnectionError, WaitTimeoutError } from '../client/errors.js';
import { CarbonPagingError } from '../client/paging.js';
import { LedgerError } from '../engine/ledger.js';
import { ApiError, ERROR_CODES, type ErrorCode } from '../service/errors.js';
import { redactSecrets } from '../service/keys.js';
import { CliError } from './errors.js';
import { EXIT, exitCodeForStatus } from './exit-codes.js';
import { followUp } from './follow-up.js';
import { colorOn } from './output.js';
import { topUpHint } from './purchase/top-up.js';
import { dollars, oneLine } from './render/format.js';
import { mappedStack } from './stack.js';

/** A second sentence for a person, kept apart from the error (whose --json envelope stays the API's). */
const hints = new WeakMap<Error, string>();
export function hinted<E extends Error>(err: E, hint: string): E {
  hints.set(err, hint);
  return err;
}

interface Reported {
  exitCode: number;
  envelope: ErrorEnvelope;
  /** One line for a person; an API error keeps its message and names its param. */
  line: string;
}

/** Where the failed command went: its mode and engine, when settings were resolved. */
export interface ErrorScene {
  mode: 'test' | 'live';
  engine: 'local' | 'remote';
  /** Where the key sent came from (settings.ts keyFrom): the one to check. */
  keyFrom?: string | undefined;
}

/** What to do about an API error, when there is something to say. */
function apiHint(err: CarbonApiError, scene: ErrorScene | undefined): string {
  switch (err.code) {
    case 'api_key_missing':
    case 'api_key_invalid':
    case 'api_key_revoked':
      return scene?.keyFrom === undefined ? ' Check CARBON_API_KEY or `carbon config list`.' : ` Check the key from ${scene.keyFrom}.`;
    default:
      return '';
  }
}

/** 402, in dollars only, with the top-up of the balance that fell short (purchase/top-up.ts). */
function shortBalanceLine(err: CarbonApiError, scene: ErrorScene | undefined): string {
  const { balanceCents: balance, requiredCents: required } = err;
  const which = scene === undefined ? 'The balance' : `The ${scene.mode} balance`;
  // A server that leaves them out (the spec says the error carries both): no figure is made up.
  const known = balance !== undefined && required !== undefined;
  const line = known
    ? `${which} (${dollars(balance)}) does not cover this purchase (${dollars(required)}).`
    : `${which} does not cover this purchase (the API's answer did not say the balance or the cost).`;
  return `${line} ${scene === undefined ? 'Top it up' : topUpHint(scene.mode, scene.engine, balance ?? 0, required ?? 0)}.`;
}

const envelope = (type: ErrorEnvelope['error']['type'], code: string, message: string): ErrorEnvelope => ({
  error: { type, code, message },
});

/** An error the API answered with: its message, its param and any hint; 402 as the balance that fell short. */
function apiReport(err: CarbonApiError, scene: ErrorScene | undefined): Reported {
  const param = err.param === undefined ? '' : ` (param: ${err.param})`;
  const hint = hints.get(err);
  const line =
    err.code === 'insufficient_balance'
      ? shortBalanceLine(err, scene)
      : `${err.message}${param}${apiHint(err, scene)}${hint === undefined ? '' : ` ${hint}`}`;
  return { exitCode: exitCodeForStatus(err.status, err.code), envelope: masked(err.toJSON()), line };
}

/**
 * The envelope with any key in its message or param masked, as carbon serve masks it: a server
 * that does not (or a message carbon wrote about what was typed) must not put a key in a log.
 */
function masked(envelope: ErrorEnvelope): ErrorEnvelope {
  const { message, param } = envelope.error;
  return { error: { ...envelope.error, message: redactSecrets(message), ...(param === undefined ? {} : { param: redactSecrets(param) }) } };
}

/**
 * The sandbox's own operations (top-up, keys, review…) throw the model's errors directly: there
 * is no HTTP response in between, but the same status decides the exit code.
 */
function modelReport(err: ApiError): Reported {
  const body = err.toBody();
  const param = body.param === undefined ? '' : ` (param: ${body.param})`;
  return { exitCode: exitCodeForStatus(err.status, body.code), envelope: { error: body }, line: `${err.message}${param}` };
}

/**
 * The API's types (docs/service-model.md), by the exit code of the status the API would answer
 * with: `api_error` is the service's own fault (5xx), and the CLI's other failures (exit 1, and
 * the outcomes with no API status: 8, 9, 10, 12, 130) stay under it.
 */
const TYPE_OF_EXIT: Partial<Record<number, ErrorType>> = {
  [EXIT.usage]: 'invalid_request_error',
  [EXIT.insufficientBalance]: 'invalid_request_error',
  [EXIT.auth]: 'authentication_error',
  [EXIT.notFound]: 'invalid_request_error',
  [EXIT.conflict]: 'invalid_request_error',
  [EXIT.rateLimited]: 'rate_limit_error',
};

/** A refusal of the CLI's own: typed as the API types its code (insufficient_permissions: permission_error), else by its exit code. */
function cliReport(err: CliError): Reported {
  const type = Object.hasOwn(ERROR_CODES, err.code) ? ERROR_CODES[err.code as ErrorCode].type : (TYPE_OF_EXIT[err.exitCode] ?? 'api_error');
  // The message may repeat what was typed (a path, a URL): keys in it are masked, and so in its
  // fields, as in the line. The Idempotency-Key to retry with is the caller's own label, masked only
  // where it holds a key: a long run of letters and digits in it is shown, or the retry would buy again.
  const message = redactSecrets(err.message);
  const fields = Object.fromEntries(
    Object.entries(err.fields).map(([k, v]) => [
      k,
      typeof v === 'string'
        ? redactSecrets(v, k === 'idempotency_key' ? { runs: 'after-mode' } : {})
        : typeof v === 'number'
          ? v
          : v.map((record) =>
              Object.fromEntries(Object.entries(record).map(([n, x]) => [n, typeof x === 'string' ? redactSecrets(x) : x])),
            ),
    ]),
  );
  return {
    exitCode: err.exitCode,
    envelope: { error: { ...envelope(type, err.code, message).error, ...fields } },
    line: err.hint ? `${message} ${err.hint}` : message,
  };
}

/** The client's and the ledger's own failures: no API answer, each with its code and what to do. */
function localReport(err: unknown): Reported | undefined {
  if (err instanceof WaitTimeoutError) {
    return {
      exitCode: EXIT.waitTimeout,
      envelope: envelope('api_error', 'wait_timeout', err.message),
      line: `${err.message} Follow it with \`${followUp(['show', err.offset.id, '--wait'])}\`.`,
    };
  }
  if (err instanceof CarbonConnectionError) {
    return { exitCode: EXIT.failure, envelope: envelope('api_error', 'connection_error', err.message), line: err.message };
  }
  if (err instanceof CarbonPagingError) {
    const fields: Record<string, string> = err.cursor === null ? {} : { cursor: err.cursor };
    return {
      exitCode: EXIT.failure,
      envelope: { error: { ...envelope('api_error', 'paging_loop', err.message).error, ...fields } },
      line: `${err.message} The server at the base URL does not page as the API does; report it to whoever runs it.`,
    };
  }
  if (err instanceof CarbonConfigError) {
    return { exitCode: EXIT.usage, envelope: envelope('invalid_request_error', 'config_error', err.message), line: err.message };
  }
  if (err instanceof LedgerError) {
    return { exitCode: EXIT.failure, envelope: envelope('api_error', 'storage_error', err.message), line: `${err.message} ${err.hint}` };
  }
  return undefined;
}

function classify(err: unknown, debug: boolean, scene?: ErrorScene): Reported {
  if (err instanceof CarbonApiError) return apiReport(err, scene);
  if (err instanceof ApiError) return modelReport(err);
  if (err instanceof CliError) return cliReport(err);
  const local = localReport(err);
  if (local !== undefined) return local;
  const message = redactSecrets(err instanceof Error ? err.message : String(err));
  return {
    exitCode: EXIT.failure,
    envelope: envelope('api_error', 'unexpected_error', message),
    // With CARBON_DEBUG=1 the details (the stack) follow the line: no hint to ask for them.
    line: `Unexpected error: ${message}${debug ? '' : ' (run with CARBON_DEBUG=1 for details)'}`,
  };
}

/**
 * Reports a failed command on stderr, as one line (or, with --json, the error envelope as one
 * JSON line), and returns its exit code. No stack trace unless CARBON_DEBUG=1.
 */
export function reportError(
  err: unknown,
  io: { json: boolean; env: NodeJS.ProcessEnv; stderr: Writable & { isTTY?: boolean } /** false for --no-color. */; color?: boolean },
  /** The command's mode and engine, when its settings were resolved: hints name the right balance. */
  scene?: ErrorScene,
): number {
  const debug = io.env.CARBON_DEBUG === '1';
  const r = classify(err, debug, scene);
  // Hints too may repeat what was typed (a profile's name in the command they offer): the whole
  // line is masked, but for the Idempotency-Key to retry with (carbon's UUID, or the caller's own),
  // shown whole unless it holds a key (as in the envelope).
  const retryKey = err instanceof CliError ? err.fields.idempotency_key : undefined;
  const keep =
    typeof retryKey === 'string' && retryKey.length > 3 && redactSecrets(retryKey, { runs: 'after-mode' }) === retryKey
      ? retryKey
      : undefined;
  r.line =
    keep === undefined
      ? redactSecrets(r.line)
      : r.line
          .split(keep)
          .map((part) => redactSecrets(part))
          .join(keep);
  if (io.json) io.stderr.write(`${JSON.stringify(r.envelope)}\n`);
  else if (r.exitCode === EXIT.interrupted) {
    // The user's own Ctrl-C is not a failure: one plain line of what was done and what was not.
    io.stderr.write(`${oneLine(r.line.replace(/\s*\n\s*/g, ' '))}\n`);
  } else {
    const color = colorOn(Boolean(io.stderr.isTTY), io.env, io.color);
    // What was typed is quoted in it: its control characters (an escape sequence) are not sent to the terminal.
    io.stderr.write(`${color ? '\u001b[31merror:\u001b[39m' : 'error:'} ${oneLine(r.line.replace(/\s*\n\s*/g, ' '))}\n`);
  }
  // The stack starts with the message as it was thrown: keys in it are masked as in the line above.
  if (debug && err instanceof Error && err.stack) io.stderr.write(`${redactSecrets(mappedStack(err.stack))}\n`);
  return r.exitCode;
}
