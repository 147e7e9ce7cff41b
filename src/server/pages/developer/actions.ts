import type { Mode } from '../../../api/types.js';
import type { Sandbox } from '../../../service/sandbox.js';
import { dollars, grouped, duration as spokenDuration } from '../../../service/units.js';
import { keptView } from './dashboard-data.js';
import type { Notice, Section } from './flash.js';
import { duration, type Form, faultForm, formMode, requests, reviewCents, standing, topUpCents, whole } from './form-fields.js';
import { date } from './views.js';

/**
 * The developer page's actions (`POST /actions/{name}`): one row each, mapping the form's fields
 * to one call of the Sandbox (the same the CLI's `carbon sandbox` commands make), with the notice
 * shown after the redirect. The inputs are checked as the CLI checks them. Creating a key and
 * resetting, which also touch the session, are handled by the page's routes around these rows.
 */

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
  [
    'status',
    {
      section: 'controls',
      run: (s, f) => s.setStatus(standing(f.field('status'))),
      done: 'The account standing is set.',
      notice: (_, f) =>
        standing(f.field('status')) === 'active'
          ? 'The account is active.'
          : `The account is ${standing(f.field('status'))}: every API request now gets 403 api_access_inactive.`,
    },
  ],
  [
    'rate',
    {
      section: 'controls',
      run: (s, f) => s.setRate(whole(f.field('rate'), 8)),
      done: 'The rate is set.',
      // Millicents a kg are cents a tonne.
      notice: (_, f) =>
        `The rate is ${grouped(whole(f.field('rate'), 8))} millicents per kg: ${dollars(whole(f.field('rate'), 8))} a tonne.`,
    },
  ],
  [
    'review-limit',
    {
      section: 'controls',
      run: (s, f) => s.setReviewLimit(reviewCents(f.field('amount'))),
      done: 'The review limit is set.',
      notice: (_, f) => `The review limit is ${dollars(reviewCents(f.field('amount')))}: a live purchase above it waits for review.`,
    },
  ],
  [
    'rate-limit',
    {
      section: 'controls',
      run: (s, f) => s.setRateLimit(requests(f.field('requests'))),
      done: 'The rate limit is set.',
      notice: (set) => rateLimitNotice(set as RateLimit),
    },
  ],
  ['approve', onId('review', 'approve', 'Approved %s: it is placed.')],
  ['reject', onId('review', 'reject', 'Rejected %s: it is refunded.')],
  ['fail', onId('offsets', 'fail', 'The order of %s could not be placed: it is refunded.')],
  [
    'clock',
    {
      section: 'controls',
      run: (s, f) => s.advanceClock(duration(f.field('duration'))),
      done: 'The model clock moved forward.',
      notice: (now, f) =>
        `The model clock moved forward ${spokenDuration(duration(f.field('duration')))}: it is now ${date(now as string)}.`,
    },
  ],
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

/** What is known of a form the ledger did not answer. */
const UNSURE = 'it may not have been done, or, if only its answer was lost, it was. Check this page before doing it again.';

/**
 * What the page that could not be shown (a 503: the ledger still does not answer) says of the
 * `?unsure=<action>` its address carries, instead of leaving it unsaid: the form sent before it.
 */
export function unsureNote(unsure: unknown): string | undefined {
  return typeof unsure === 'string' && sectionOf(unsure) !== undefined
    ? `The ledger did not answer the form you sent: ${UNSURE}`
    : undefined;
}

/**
 * The notice the page's address asks for: `?done=<action>`, what it did; `?unsure=<action>`, a
 * form the ledger did not answer (routes.ts, post), whose outcome is not known.
 */
export function queryNotice(done: string, unsure: string): Notice | undefined {
  const section = sectionOf(unsure);
  if (section !== undefined) return { kind: 'error', text: `The ledger did not answer that form in time: ${UNSURE}`, section };
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

/** What `setRateLimit` answers, as far as the notice reads it. */
interface RateLimit {
  rate_limit_requests: number | null;
  rate_limit_window_ms: number;
}

function rateLimitNotice({ rate_limit_requests: n, rate_limit_window_ms: window }: RateLimit): string {
  if (n === null) return 'The rate limit is off.';
  if (n === 0) return 'The rate limit is 0: every API request now gets 429 rate_limited, until it is set again.';
  return `The rate limit is set: ${grouped(n)} requests per ${spokenDuration(window)} per key.`;
}

/**
 * Where a form goes when the ledger gives no answer, for its action or for its session: the page,
 * saying the form may not have been done (a 503 page, reloaded, would post it again); undefined for
 * a form that is no action's (signing out).
 */
export function unsureOf(name: string, form: URLSearchParams): string | undefined {
  const section = sectionOf(name);
  if (section === undefined) return undefined;
  return returnTo(form.get('back') === 'live' ? 'live' : 'test', section, form, `&unsure=${name}`);
}
