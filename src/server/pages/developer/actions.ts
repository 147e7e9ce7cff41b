import { LIMITS, type Mode } from '../../../api/types.js';
import { ApiError } from '../../../service/errors.js';
import { parseLatency, parseShare } from '../../../service/faults.js';
import type { Sandbox } from '../../../service/sandbox.js';
import { type FaultInput, MAX_TOP_UP_CENTS, topUpOutOfRange } from '../../../service/settings.js';
import { DOLLARS, dollars, parseDollars, parseDuration } from '../../../service/units.js';
import { keptView } from './dashboard-data.js';
import type { Notice, Section } from './flash.js';

/**
 * The developer page's actions (`POST /actions/{name}`): one row each, mapping the form's fields
 * to one call of the Sandbox (the same the CLI's `carbon sandbox` commands make), with the notice
 * shown after the redirect. The inputs are checked as the CLI checks them. Creating a key and
 * resetting, which also touch the session, are handled by the page's routes around these rows.
 */

export interface Form {
  /** A field, trimmed; '' when absent. */
  field(name: string): string;
  /** Every value of a repeated field. */
  all(name: string): string[];
}

export interface Action {
  run(sandbox: Sandbox, form: Form): Promise<unknown>;
  /** The section its form is in: the redirect returns there, and the notice shows under its heading. */
  section: Section;
  /** Shown once after the redirect (and for `?done=NAME`, the address an older carbon redirected to). */
  done: string;
  /** A notice that says what was done, from what `run` answered: shown once after the redirect, in place of `done`. */
  notice?(result: unknown, form: Form): string;
}

/** An action on one record by its id: its notice names it (`%s`); `?done=` (no id) says it of its kind. */
function onId(section: Section, method: 'revokeKey' | 'approve' | 'reject' | 'fail', said: string, kind = 'the offset'): Action {
  const done = said.replace(/(?:Key )?%s/, kind);
  return { section, run: (s, f) => s[method](f.field('id')), done, notice: (_, f) => said.replace('%s', f.field('id')) };
}

const invalid = (param: string, text: string) => new ApiError('validation_error', text, { param });
/** A posted form. A field sent twice (`amount=250&amount=999999`: the page's own forms never do) is refused, as a filter given twice is. */
export function formOf(params: URLSearchParams): Form {
  return {
    field: (name) => {
      const sent = params.getAll(name);
      if (sent.length > 1) throw invalid(name, `The form sent ${name} more than once; send it once.`);
      return (sent[0] ?? '').trim();
    },
    all: (name) => params.getAll(name),
  };
}

/** A new key's access: purchase or read_only. */
export function keyAccess(form: Form): 'purchase' | 'read_only' {
  const sent = form.field('permission');
  if (sent !== 'purchase' && sent !== 'read_only') throw invalid('permission', `The access is purchase or read_only, not "${sent}".`);
  return sent;
}

/** The form's mode: test or live, nothing else (a hand-made post's `mode=x` is refused, not taken for test). */
export function formMode(form: Form): Mode {
  const sent = form.field('mode');
  if (sent !== 'test' && sent !== 'live') throw invalid('mode', `The mode is test or live, not "${sent}".`);
  return sent;
}

/** A Map, so `constructor` or `__proto__` names nothing. */
export const ACTIONS = new Map<string, Action>([
  [
    'topup',
    {
      section: 'account',
      run: (s, f) => s.topUp(formMode(f), topUpCents(f.field('amount'))),
      done: 'Topped up.',
      notice: (balance, f) =>
        `Topped up ${formMode(f)} mode with ${dollars(topUpCents(f.field('amount')))}: the ${formMode(f)} balance is now ${dollars(balance as number)}.`,
    },
  ],
  ['key-revoke', onId('keys', 'revokeKey', 'Key %s is revoked: the API now refuses it with 401.', 'The key')],
  ['status', { section: 'controls', run: (s, f) => s.setStatus(standing(f.field('status'))), done: 'The account standing is set.' }],
  ['rate', { section: 'controls', run: (s, f) => s.setRate(whole(f.field('rate'), 8)), done: 'The rate is set.' }],
  [
    'review-limit',
    { section: 'controls', run: (s, f) => s.setReviewLimit(reviewCents(f.field('amount'))), done: 'The review limit is set.' },
  ],
  ['rate-limit', { section: 'controls', run: (s, f) => s.setRateLimit(requests(f.field('requests'))), done: 'The rate limit is set.' }],
  ['approve', onId('review', 'approve', 'Approved %s: it is placed.')],
  ['reject', onId('review', 'reject', 'Rejected %s: it is refunded.')],
  ['fail', onId('offsets', 'fail', 'The order of %s could not be placed: it is refunded.')],
  ['clock', { section: 'controls', run: (s, f) => s.advanceClock(duration(f.field('duration'))), done: 'The model clock moved forward.' }],
  [
    'reset',
    {
      section: 'controls',
      run: (s) => s.reset(),
      done: 'The sandbox starts over: a new account and new keys. Every other signed-in page was signed out.',
    },
  ],
  [
    'faults',
    {
      section: 'faults',
      run: (s, f) => s.setFaults(faultForm(f)),
      done: 'Faults are on: every instance on this ledger applies them from its next request.',
    },
  ],
  ['faults-off', { section: 'faults', run: (s) => s.clearFaults(), done: 'Faults are off.' }],
]);

/** The section of the form `name`: an action's row, or creating a key (which the routes handle). */
export const sectionOf = (name: string): Section | undefined => (name === 'key-create' ? 'keys' : ACTIONS.get(name)?.section);

/**
 * The notice the page's address asks for: `?done=<action>`, what it did; `?unsure=<action>`, a
 * form the ledger did not answer (routes.ts, post), whose outcome is not known.
 */
export function queryNotice(done: string, unsure: string): Notice | undefined {
  const section = sectionOf(unsure);
  if (section !== undefined) {
    const text =
      'The ledger did not answer that form in time: it may not have been done, or, if only its answer was lost, it was. Check this page before doing it again.';
    return { kind: 'error', text, section };
  }
  const said = ACTIONS.get(done)?.done;
  return said === undefined ? undefined : { kind: 'ok', text: said };
}

/**
 * Where an action's redirect leads: the page in the mode it was sent from, at its notice (`#notice`),
 * which shows under the heading of the form's section: the browser scrolls there and focuses it, so
 * the result shows (and a screen reader says it) where the person was, not screens up at the top of a
 * phone's page; for the offsets, with the filter and page the form was sent from (its `view`).
 */
export function returnTo(mode: Mode, section: Section | undefined, form?: URLSearchParams, also = ''): string {
  const view = section === 'offsets' && form !== undefined ? keptView(form.get('view')) : '';
  return `/?mode=${mode}${view === '' ? '' : `&${view}`}${also}${section === undefined ? '' : '#notice'}`;
}

/** Digits up to `most` of them, else NaN (which the Sandbox refuses with its own message). */
const whole = (text: string, most: number) => (new RegExp(`^\\d{1,${most}}$`).test(text) ? Number(text) : Number.NaN);
/** A rate limit: requests per the window set (a second at first), or `off`. */
const requests = (text: string) => (text === 'off' ? null : whole(text, 7));

function topUpCents(amount: string): number {
  const cents = parseDollars(amount);
  const range = `${dollars(LIMITS.topUpMinCents)} to ${dollars(MAX_TOP_UP_CENTS)}`;
  // Dollars written right, but more than a number holds exactly: said as too much, not as badly written.
  if (cents === null && DOLLARS.test(amount.trim())) throw invalid('amount_cents', `A top-up is from ${range}; ${amount.trim()} is more.`);
  if (cents === null) {
    throw invalid('amount_cents', `The top-up must be dollars with at most two decimals, such as 250 or 250.00, not "${amount}".`);
  }
  // Said in dollars, as the field asks: the model's own message counts cents.
  const outOfRange = topUpOutOfRange(cents);
  if (outOfRange !== null) throw invalid('amount_cents', outOfRange);
  return cents;
}

function standing(status: string): 'active' | 'suspended' | 'unapproved' {
  if (status !== 'active' && status !== 'suspended' && status !== 'unapproved') {
    throw invalid('status', 'The standing is active, suspended or not approved.');
  }
  return status;
}

function reviewCents(amount: string): number {
  const cents = parseDollars(amount);
  if (cents === null) throw invalid('review_limit_cents', `The review limit must be dollars, such as 5000, not "${amount}".`);
  return cents;
}

function duration(text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw invalid('duration', `The duration is like 90s, 15m, 2h or 1d, not "${text}".`);
  return ms;
}

/** The faults form, read as `carbon sandbox faults set` reads its options; Sandbox.setFaults checks the rest. */
function faultForm(form: Form): FaultInput {
  const field = form.field;
  const rate = field('error_rate') === '' ? 0 : parseShare(field('error_rate'));
  if (rate === null) throw invalid('error_rate', `The error rate is a share from 0 to 1, such as 0.3, not "${field('error_rate')}".`);
  const latency = field('latency') === '' ? null : parseLatency(field('latency'));
  if (latency === null && field('latency') !== '') {
    throw invalid('latency', `The latency is a duration or a range such as 200ms or 50ms-400ms, not "${field('latency')}".`);
  }
  return {
    error_rate: rate,
    errors: form.all('errors'),
    latency_ms: latency,
    route: field('route') === '' ? null : field('route'),
    mode: field('mode') === '' ? null : field('mode'),
    seed: field('seed') === '' ? null : whole(field('seed'), 10),
    retry_after_seconds: field('retry_after') === '' ? 1 : whole(field('retry_after'), 10),
  };
}
