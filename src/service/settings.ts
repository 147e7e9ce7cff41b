import { LIMITS } from '../api/types.js';
import { isoTime } from '../platform/iso-time.js';
import type { AccountRecord } from '../store/port.js';
import { validationError } from './errors.js';
import { FAULT_KINDS, type FaultConfig, type FaultKind } from './faults.js';
import { TIMING } from './lifecycle.js';
import { ROUTES } from './routes.js';
import { dollars, grouped } from './units.js';

/**
 * What a fresh account starts with, and the bounds of every setting the developer page (and
 * `carbon sandbox`) can change: plain checks, so no setting can put the model in a state that
 * breaks a later request.
 */

export const DEFAULTS = {
  rate: 4000,
  reviewLimitCents: 500_000,
  testBalanceCents: 100_000,
  /** Off until `carbon sandbox rate-limit` turns it on: a sandbox should not throttle its tests by surprise. */
  rateLimitRequests: null,
  rateLimitWindowMs: 1000,
} as const;

export const FRESH_ACCOUNT: AccountRecord = {
  status: 'active',
  rate: DEFAULTS.rate,
  review_limit_cents: DEFAULTS.reviewLimitCents,
  clock_offset_ms: 0,
  rate_limit_requests: DEFAULTS.rateLimitRequests,
  rate_limit_window_ms: DEFAULTS.rateLimitWindowMs,
};

/** The largest top-up at once, and the largest balance: far above any real account, far below 2^53. */
export const MAX_TOP_UP_CENTS = 100_000_000_000;
export const MAX_RATE = LIMITS.rateMax;
/**
 * The latest model time the model can represent: the end of year 9999 (ISO 8601 timestamps have
 * four-digit years), less the longest placement delay, so every offset's times stay writable.
 */
export const LATEST_MODEL_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999) - TIMING.livePlacementMs;

export function checkTopUp(cents: number, mode: string = 'test'): number {
  // A library caller's `'Live'` or `'nope'`: refused, not read as the test balance.
  if (mode !== 'test' && mode !== 'live')
    throw validationError('mode', `A top-up is to the test or the live balance, not ${JSON.stringify(mode)}.`);
  if (!Number.isSafeInteger(cents) || cents < LIMITS.topUpMinCents || cents > MAX_TOP_UP_CENTS) {
    throw validationError(
      'amount_cents',
      `A top-up is a whole number of cents from ${LIMITS.topUpMinCents} cents (${dollars(LIMITS.topUpMinCents)}) to ${MAX_TOP_UP_CENTS} cents (${dollars(MAX_TOP_UP_CENTS)}).`,
    );
  }
  return cents;
}

/** A top-up given in dollars (the page's field, `carbon sandbox topup 250`) out of range, said in dollars (null: in range); checkTopUp's message counts cents. */
export function topUpOutOfRange(cents: number): string | null {
  if (cents >= LIMITS.topUpMinCents && cents <= MAX_TOP_UP_CENTS) return null;
  const side = cents < LIMITS.topUpMinCents ? 'less' : 'more';
  return `A top-up is from ${dollars(LIMITS.topUpMinCents)} to ${dollars(MAX_TOP_UP_CENTS)}; ${dollars(cents)} is ${side}.`;
}

/** A balance after a top-up stays a safe integer with room for any later refund. */
export function checkBalanceAfter(balance: number, cents: number): void {
  if (balance + cents > Number.MAX_SAFE_INTEGER / 2)
    throw validationError('amount_cents', 'That top-up would take the balance past what the model can hold.');
}

export function checkRate(rate: number): number {
  if (!Number.isSafeInteger(rate) || rate < 1 || rate > MAX_RATE) {
    throw validationError('rate_millicents_per_kg', `The rate is a whole number of millicents per kg from 1 to ${grouped(MAX_RATE)}.`);
  }
  return rate;
}

export function checkReviewLimit(cents: number): number {
  if (!Number.isSafeInteger(cents) || cents < 0)
    throw validationError('review_limit_cents', 'The review limit is a whole number of cents, 0 or more.');
  return cents;
}

export function checkRateLimit(requests: number | null, windowMs: number): void {
  if (requests !== null && (!Number.isSafeInteger(requests) || requests < 0)) {
    throw validationError('requests', 'The rate limit is a whole number of requests, 0 or more, or off.');
  }
  if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > 86_400_000) {
    throw validationError('window', 'The window is a whole number of milliseconds from 1 to 86,400,000 (a day).');
  }
}

/** The clock only moves forward, and never past what the model can represent. */
export function checkClockAdvance(modelNow: number, ms: number): number {
  if (!Number.isSafeInteger(ms) || ms <= 0) throw validationError('duration', 'The clock only moves forward, by a positive duration.');
  if (modelNow + ms > LATEST_MODEL_TIME) {
    throw validationError('duration', `The model clock cannot go past ${isoTime(LATEST_MODEL_TIME)}; it is now ${isoTime(modelNow)}.`);
  }
  return ms;
}

/** What `carbon sandbox faults set` and the developer page hand in; checked into a FaultConfig. */
export interface FaultInput {
  error_rate?: number;
  errors?: readonly string[];
  latency_ms?: { min: number; max: number } | null;
  route?: string | null;
  mode?: string | null;
  seed?: number | null;
  retry_after_seconds?: number;
}

const MAX_FAULT_LATENCY_MS = 60_000;

/** The fault setting, checked: every share, kind, route and bound within what the model can do. */
export function checkFaults(input: FaultInput): FaultConfig {
  const rate = input.error_rate ?? 0;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1)
    throw validationError('error_rate', 'The error rate is a share from 0 to 1, such as 0.3.');
  // None chosen is none to draw: fine for latency alone (the page's form with every box unticked), not with an error rate.
  const chosen = input.errors === undefined || (input.errors.length === 0 && rate === 0) ? FAULT_KINDS : input.errors;
  const errors = [...new Set(chosen)];
  const unknown = errors.find((e) => !(FAULT_KINDS as readonly string[]).includes(e));
  if (unknown !== undefined || errors.length === 0)
    throw validationError(
      'errors',
      `The faults are one or more of ${FAULT_KINDS.join(', ')}${unknown === undefined ? '' : `, not "${unknown}"`}${errors.length === 0 ? ', for the error rate to draw from' : ''}.`,
    );
  const latency = input.latency_ms ?? null;
  if (latency !== null) {
    const { min, max } = latency;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || min > max || max > MAX_FAULT_LATENCY_MS) {
      throw validationError(
        'latency',
        `The latency is a range of milliseconds such as 50ms-400ms, its low end first, at most ${MAX_FAULT_LATENCY_MS / 1000}s.`,
      );
    }
  }
  if (rate === 0 && (latency === null || latency.max === 0))
    throw validationError('error_rate', 'Nothing to inject: give an error rate above 0, or a latency.');
  const mode = input.mode ?? null;
  if (mode !== null && mode !== 'test' && mode !== 'live') throw validationError('mode', 'The mode is test or live.');
  const seed = input.seed ?? null;
  if (seed !== null && (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff))
    throw validationError('seed', 'The seed is a whole number from 0 to 4294967295.');
  const retryAfter = input.retry_after_seconds ?? 1;
  if (!Number.isSafeInteger(retryAfter) || retryAfter < 0 || retryAfter > 60)
    throw validationError('retry_after', 'Retry-After is a whole number of seconds from 0 to 60.');
  return {
    error_rate: rate,
    errors: errors as FaultKind[],
    latency_ms: latency,
    route: checkRoute(input.route ?? null),
    mode,
    seed,
    retry_after_seconds: retryAfter,
  };
}

/** `post /api/v1/offsets/` → `POST /offsets`: one of the API's routes, as its table writes it. */
function checkRoute(route: string | null): string | null {
  if (route === null) return null;
  const m = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(route);
  const path = m === null ? '' : m[2]!.replace(/^\/api\/v1(?=\/)/, '').replace(/(.)\/+$/, '$1');
  const found = m === null ? undefined : ROUTES.find((r) => r.method === m[1]!.toUpperCase() && r.path === path);
  if (found === undefined)
    throw validationError('route', `The route is one of the API's: ${ROUTES.map((r) => `"${r.method} ${r.path}"`).join(', ')}.`);
  return `${found.method} ${found.path}`;
}
