import { type Mode, OFFSET_STATUSES, type OffsetStatus } from '../../../api/types.js';
import { isoTime } from '../../../platform/iso-time.js';
import { validationError } from '../../../service/errors.js';
import type { Session } from '../../../service/page-access.js';
import type { Sandbox } from '../../../service/sandbox.js';
import { isUnicodeText } from '../../../service/validation.js';
import type { DashboardData } from './views.js';

/** What the dashboard shows, read in one go: the account, keys, a page of offsets by the filter, the review queue, the chart. */

const STATUSES: ReadonlySet<string> = new Set(OFFSET_STATUSES);
/** The offsets filter's parameters, in the form's order (`after`: the page's cursor). */
const FILTERS = ['status', 'reference', 'since', 'until', 'after'] as const;
/** The filter as the address gives it: a parameter given twice is an array (server/http.ts: parseTarget). */
type Filter = Partial<Record<string, string | string[]>>;

/** The filter and page a form of the offsets was sent from, as its `view` field holds them (tables.ts). */
export function viewOf(f: DashboardData['filter']): string {
  return new URLSearchParams(FILTERS.flatMap((name): Array<[string, string]> => (f[name] ? [[name, f[name]]] : []))).toString();
}

/**
 * A form's `view` field kept to the filter's own parameters, each once: where the redirect after
 * the form returns (actions.ts), so failing an offset of a filtered list, or of a later page,
 * leads back to that list, not to the newest offsets unfiltered.
 */
export function keptView(text: string | null): string {
  const given = new URLSearchParams(text ?? '');
  return new URLSearchParams(
    FILTERS.flatMap((name): Array<[string, string]> => {
      const value = given.get(name);
      return value ? [[name, value.slice(0, 256)]] : [];
    }),
  ).toString();
}

/** A day as the date fields send it (YYYY-MM-DD, UTC): its first millisecond, or null for no such day (2026-02-30 too). */
export function day(text: string): number | null {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  return !Number.isNaN(ms) && isoTime(ms).slice(0, 10) === text ? ms : null;
}

export async function data(sandbox: Sandbox, session: Session, mode: Mode, query: Filter): Promise<DashboardData> {
  const f = Object.fromEntries(FILTERS.map((name) => [name, typeof query[name] === 'string' ? query[name] : ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  // A mode that is none (an edited address: ?mode=LIVE), or two: said, not shown as test mode in silence.
  if (query.mode !== undefined && query.mode !== 'test' && query.mode !== 'live')
    throw validationError('mode', `The mode is test or live, given once, not ${JSON.stringify(query.mode)}: test mode is shown.`);
  // Given twice (an edited address, two forms' fields): which one was meant is not known, so it is said, as the journal's API refuses it.
  const repeated = FILTERS.flatMap((name) => {
    const values = query[name];
    return Array.isArray(values) ? [{ name, values }] : [];
  });
  const sent = { status: f.status, since: f.since, until: f.until };
  const status = STATUSES.has(sent.status) ? (sent.status as OffsetStatus) : null;
  const since = sent.since === '' ? null : day(sent.since);
  const until = sent.until === '' ? null : day(sent.until);
  // A status that is none, a date field that holds no date: said, and the offsets wait for it, not listed as if it were not there.
  // Until before From holds no day: said by Until (offsets-section.ts says which), as a date that is none is.
  // A reference whose bytes are not UTF-8 (`%FF`: parseTarget leaves a lone surrogate) is refused as the API refuses it, not read as U+FFFD.
  const invalid = [
    ...(isUnicodeText(f.reference) ? [] : (['reference'] as const)),
    ...(['status', 'since', 'until'] as const).filter(
      (name) =>
        sent[name] !== '' &&
        (name === 'status' ? status === null : day(sent[name]) === null || (name === 'until' && since !== null && until! < since)),
    ),
  ];
  const now = await sandbox.now();
  const [standing, keys, offsets, review, everyDay] = await Promise.all([
    sandbox.status(),
    sandbox.keys(),
    invalid.length > 0 || repeated.length > 0
      ? { data: [], has_more: false }
      : sandbox.offsets(mode, {
          status,
          reference: f.reference ? f.reference : null,
          since,
          until: until === null ? null : until + 86_400_000,
          startingAfter: f.after ? f.after : null,
          limit: 20,
        }),
    sandbox.reviewQueue(),
    // Every day with purchases (a row a day, not an offset: impact_daily), so the chart knows of older ones too.
    sandbox.kgByPeriod(mode, 'day', null),
  ]);
  const first = isoTime(now - 29 * 86_400_000).slice(0, 10);
  const chart = everyDay.filter((d) => d.period >= first);
  return {
    mode,
    status: standing,
    keys,
    offsets,
    review,
    chart: { days: chart, today: isoTime(now).slice(0, 10), earlier: everyDay.some((d) => d.period < first && d.kg > 0) },
    csrf: session.csrf,
    refresh: 0,
    filter: { ...sent, reference: f.reference, invalid, repeated, after: f.after },
  };
}
