import { isoTime } from '../../../platform/iso-time.js';
import { usage } from '../../errors.js';
import { grouped } from '../../render/format.js';

/**
 * The periods of a report by month, week (ISO, starting Monday) or quarter: what an instant falls
 * in, and every period of a span, in order, so a period without purchases is a row of zeros, as in
 * an accounting report, not a gap a reader takes for one forgotten.
 */

export type Period = 'month' | 'week' | 'quarter';

/** The most rows a report by period makes: 83 years of months, 19 of weeks, 250 of quarters. */
const MAX_PERIODS = 1000;

const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** The first millisecond of the period `ms` falls in. */
function start(ms: number, by: Period): number {
  const d = new Date(ms);
  if (by === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  if (by === 'quarter') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (d.getUTCMonth() % 3), 1);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return day - ((d.getUTCDay() + 6) % 7) * DAY;
}

/** The first millisecond of the period after the one starting at `first`. */
function next(first: number, by: Period): number {
  if (by === 'week') return first + WEEK;
  const d = new Date(first);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + (by === 'month' ? 1 : 3), 1);
}

/**
 * How a report says its periods are UTC's (none for references): a reader in New York would
 * otherwise count a purchase at 23:30 on 31 January (04:30 UTC, 1 February) in January.
 */
export function periodsInUtc(by: string): string | null {
  return by === 'week' ? 'ISO weeks (Monday to Sunday) in UTC' : by === 'month' || by === 'quarter' ? `${by}s in UTC` : null;
}

/** The period `ms` falls in, as a report names it: 2026-03, 2026-W09 (the Thursday of the week names its year), 2026-Q1. */
export function periodOf(ms: number, by: Period): string {
  const d = new Date(ms);
  if (by === 'month') return isoTime(ms).slice(0, 7);
  if (by === 'quarter') return `${d.getUTCFullYear()}-Q${Math.floor(d.getUTCMonth() / 3) + 1}`;
  const thursday = new Date(start(ms, 'week') + 3 * DAY);
  const year = thursday.getUTCFullYear();
  const n = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / WEEK);
  return `${year}-W${String(n).padStart(2, '0')}`;
}

/** How many periods run from the one holding `first` to the one holding `last`, both included. */
function count(first: number, last: number, by: Period): number {
  if (by === 'week') return Math.round((start(last, by) - start(first, by)) / WEEK) + 1;
  const a = new Date(first);
  const b = new Date(last);
  const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
  return by === 'month' ? months + 1 : Math.floor((months + (a.getUTCMonth() % 3)) / 3) + 1;
}

/**
 * Every period from the one holding `first` to the one holding `last` (ms, both included), in
 * order; none when `last` is before `first`. More than MAX_PERIODS is refused (exit 2), before
 * any is made: a span typed by mistake (--since 1900-01-01 --by week) would print thousands of empty rows.
 */
export function periodsOf(first: number, last: number, by: Period): string[] {
  if (last < first) return [];
  const n = count(first, last, by);
  if (n > MAX_PERIODS) {
    // The coarser period named only where it fits the span (1900 to now is too many months too).
    const coarser = (['month', 'quarter'] as const).find(
      (c) => (by === 'week' || (by === 'month' && c === 'quarter')) && count(first, last, c) <= MAX_PERIODS,
    );
    throw usage(
      `${periodOf(first, by)} to ${periodOf(last, by)} is ${grouped(n)} ${by}s; a report has at most ${grouped(MAX_PERIODS)} rows. Give a shorter span with --since and --until${coarser === undefined ? '' : `, or --by ${coarser}`}.`,
    );
  }
  const out: string[] = [];
  for (let p = start(first, by); p <= last; p = next(p, by)) out.push(periodOf(p, by));
  return out;
}
