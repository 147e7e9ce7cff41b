import type { ApiResponse } from '../api/types.js';
import { apiErrorOf, CarbonConfigError, shownValue } from './errors.js';
/**
 * When and how long to wait before trying a request again: stripe-node's rules. Network
 * failures, 409s other than a reused key, 429 and 5xx are retried; everything else is an
 * answer. Each wait doubles from `baseDelayMs` up to `maxDelayMs`, less up to a quarter at
 * random (jitter, so parallel clients do not retry in step); a `Retry-After` is honoured
 * when it is within `maxRetryAfterSeconds`, and a longer one ends the retries.
 */
export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterSeconds: number;
}

/** What a caller gives (ClientOptions.retry): any field, one left out or `undefined` keeping its default. */
export type RetryOptions = { [K in keyof RetryPolicy]?: RetryPolicy[K] | undefined };

export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterSeconds: 60,
});

/**
 * The policy a client was given, over the defaults: a field left undefined keeps its default (an
 * unset variable passed on), and one that is no number of zero or more is refused, as NaN or
 * Infinity retries would go on for ever.
 */
export function retryPolicy(given: RetryOptions | null = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY };
  for (const name of Object.keys(DEFAULT_RETRY) as (keyof RetryPolicy)[]) {
    const value = given?.[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (name === 'maxRetries' && !Number.isInteger(value)))
      throw new CarbonConfigError(
        `retry.${name} must be a ${name === 'maxRetries' ? 'whole number' : 'number'} of 0 or more, not ${shownValue(value)}.`,
      );
    policy[name] = value;
  }
  return policy;
}

export type Outcome = { kind: 'network' } | { kind: 'response'; status: number; code?: string; retryAfter?: number };

/** Milliseconds to wait before retry number `attempt` (1-based), or null to stop. */
export function retryDelay(outcome: Outcome, attempt: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  if (attempt > policy.maxRetries) return null;
  if (outcome.kind === 'response') {
    const { status, code } = outcome;
    const retryable = status === 429 || status >= 500 || (status === 409 && code !== 'idempotency_key_reused');
    if (!retryable) return null;
  }
  const backoff = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs) * (1 - random() * 0.25);
  if (outcome.kind === 'response' && outcome.retryAfter !== undefined) {
    if (outcome.retryAfter > policy.maxRetryAfterSeconds) return null;
    return Math.round(Math.max(outcome.retryAfter * 1000, backoff));
  }
  return Math.round(backoff);
}

/** What retryDelay is told of an answer: its status, error code and Retry-After. */
export function responseOutcome(response: ApiResponse): Outcome {
  const { code, retryAfter } = apiErrorOf(response);
  return { kind: 'response', status: response.status, code, ...(retryAfter === undefined ? {} : { retryAfter }) };
}
