import { CarbonAnswerError, CarbonApiError, CarbonConnectionError } from '../../client/errors.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { DEFAULT_WAIT_SECONDS, timeoutNamed } from '../offsets/wait.js';
import type { WatchState } from './follow.js';

/** --until-settled's deadline passed: which offsets are still processing. */
export function stillProcessing(ctx: Context, state: WatchState, cursor: string | undefined): CliError {
  const ids = Object.keys(state.pending);
  const seconds = ctx.settings.timeoutSeconds ?? DEFAULT_WAIT_SECONDS;
  const message = `${ids.length} offset${ids.length === 1 ? ' is' : 's are'} still processing after ${seconds} s (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''}).`;
  const again = `Run it again${cursor === undefined ? '' : ` with --cursor ${cursor}`} to go on waiting.`;
  return new CliError(message, EXIT.waitTimeout, 'wait_timeout', again);
}

/** The end of a run whose deadline passed with the server down: thrown on as it is. */
class GivenUp extends CarbonConnectionError {}

/**
 * --until-settled's deadline passed while the server failed or did not answer. One that answered
 * every poll with a failure (a 500) did answer: its last failure is said, not "no answer".
 */
export function givenUp(ctx: Context, last: Error | undefined): GivenUp {
  const server = ctx.settings.baseUrl ?? 'the ledger';
  const by = timeoutNamed(ctx.settings.timeoutSeconds);
  if (last === undefined) return new GivenUp(`No answer from ${server} by ${by}: the poll under way was given up.`);
  const said = last instanceof CarbonApiError ? `was answered ${last.status}` : 'said';
  return new GivenUp(`The polls of ${server} failed until ${by}; the last ${said}: ${last.message}`);
}

/**
 * A poll's failure that a later poll may not meet, returned to be ridden out: no answer (a server
 * restarting), or a 5xx (its ledger stalled). Thrown: an answer of another service's, or any
 * failure once the deadline has passed.
 */
export function ridden(ctx: Context, err: unknown, deadline: number): Error {
  const passing =
    (err instanceof CarbonConnectionError && !(err instanceof CarbonAnswerError)) || (err instanceof CarbonApiError && err.status >= 500);
  if (!passing) throw err;
  if (Date.now() >= deadline) throw err instanceof GivenUp ? err : givenUp(ctx, err);
  return err;
}
