import { LIMITS, type Mode } from '../../../api/types.js';
import { validationError as invalid } from '../../../service/errors.js';
import { parseLatency, parseShare } from '../../../service/faults.js';
import { type FaultInput, MAX_TOP_UP_CENTS, topUpOutOfRange } from '../../../service/settings.js';
import { DOLLARS, dollars, durationRefusal, parseDollars, parseDuration } from '../../../service/units.js';

/**
 * The developer page's posted forms (actions.ts) and what their fields are read as: each checked
 * as the CLI's `carbon sandbox` commands check theirs, a bad one a 422 naming it, said in the
 * field's own terms (dollars, not cents).
 */

export interface Form {
  /** A field, trimmed; '' when absent. */
  field(name: string): string;
  /** Every value of a repeated field. */
  all(name: string): string[];
}

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

/** Digits up to `most` of them, else NaN (which the Sandbox refuses with its own message). */
export const whole = (text: string, most: number) => (new RegExp(`^\\d{1,${most}}$`).test(text) ? Number(text) : Number.NaN);
/** A rate limit: requests per the window set (a second at first), or `off`. */
export const requests = (text: string) => (text === 'off' ? null : whole(text, 7));

export function topUpCents(amount: string): number {
  const cents = parseDollars(amount);
  const range = `${dollars(LIMITS.topUpMinCents)} to ${dollars(MAX_TOP_UP_CENTS)}`;
  // Dollars written right, but more than a number holds exactly: said as too much, not as badly written.
  const written = DOLLARS.exec(amount.trim());
  if (cents === null && written !== null) throw invalid('amount_cents', `A top-up is from ${range}; ${asDollars(written)} is more.`);
  if (cents === null) {
    throw invalid('amount_cents', `The top-up must be dollars with at most two decimals, such as 250 or 250.00, not "${amount}".`);
  }
  // Said in dollars, as the field asks: the model's own message counts cents.
  const outOfRange = topUpOutOfRange(cents);
  if (outOfRange !== null) throw invalid('amount_cents', outOfRange);
  return cents;
}

/** Dollars as written (DOLLARS' match), too many for cents to count exactly, as `dollars()` writes an amount: `$99,999,999,999,999.00`. */
const asDollars = ([, whole, decimals]: RegExpExecArray) =>
  `$${whole!.replace(/,/g, '').replace(/\B(?=(\d{3})+$)/g, ',')}.${(decimals ?? '').padEnd(2, '0')}`;

export function standing(status: string): 'active' | 'suspended' | 'unapproved' {
  if (status !== 'active' && status !== 'suspended' && status !== 'unapproved') {
    throw invalid('status', 'The standing is active, suspended or not approved.');
  }
  return status;
}

export function reviewCents(amount: string): number {
  const cents = parseDollars(amount);
  if (cents === null) throw invalid('review_limit_cents', `The review limit must be dollars, such as 5000, not "${amount}".`);
  return cents;
}

export function duration(text: string): number {
  const ms = parseDuration(text);
  // The CLI's reasons, word for word: a zero is said as one, not as badly written.
  if (ms === null) throw invalid('duration', durationRefusal(text, 'The duration', true));
  return ms;
}

/** The faults form, read as `carbon sandbox faults set` reads its options; Sandbox.setFaults checks the rest. */
export function faultForm(form: Form): FaultInput {
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
