import { OFFSET_STATUSES } from '../../../api/types.js';
import { redactSecrets } from '../../../service/keys.js';
import { isUnicodeText } from '../../../service/validation.js';
import { escapeHtml, escapeText } from '../html.js';
import { day } from './dashboard-data.js';
import { noticeAt } from './flash.js';
import { cardTable, offsetColumns } from './tables.js';
import { type DashboardData, field } from './views.js';

/**
 * The dashboard's offsets: the filter (a GET form: the address says what is listed), what is wrong
 * with it said above it, a page of offsets, and the links to the pages beside it.
 */

type Filter = DashboardData['filter'];
/** A parameter of the filter: a field of its form, or the page's cursor (`after`). */
type FilterName = Filter['repeated'][number]['name'];

const LABELS: Record<FilterName, string> = {
  status: 'Status',
  reference: 'Reference starts with',
  since: 'From',
  until: 'Until',
  after: 'Page (after)',
};
const ORDER = Object.keys(LABELS) as FilterName[];

/** "a", "b" and "c": each cut to 40 characters, as a bad value is said. */
const listed = (values: readonly string[]) => {
  const quoted = values.map((v) => `"${v.slice(0, 40)}"`);
  return `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
};

/** What is wrong with the filter, each parameter in the form's order, in one alert above the form (or nothing). */
function problemNotice(f: Filter): string {
  const said = ORDER.flatMap((name) => {
    const repeated = f.repeated.find((r) => r.name === name);
    if (repeated !== undefined)
      return [`${LABELS[name]}: given ${repeated.values.length} times, ${listed(repeated.values)}; a filter takes one value.`];
    if (!(f.invalid as readonly string[]).includes(name)) return [];
    if (name === 'reference') return [`${LABELS.reference}: the address sent bytes that are not UTF-8 text; type it again.`];
    const value = f[name as 'status' | 'since' | 'until'].slice(0, 40);
    if (name === 'status')
      return [
        `${LABELS[name]}: "${value}" is not a status: choose ${OFFSET_STATUSES.slice(0, -1).join(', ')} or ${OFFSET_STATUSES.at(-1)} (or any).`,
      ];
    // A day, but before From's: the range holds none.
    if (day(value) !== null) return [`${LABELS.until}: ${value} is before ${LABELS.since} (${f.since}); no day is in both.`];
    return [`${LABELS[name]}: "${value}" is not a date.`];
  });
  if (said.length === 0) return '';
  const hint = f.invalid.some((name) => (name === 'since' || name === 'until') && day(f[name]) === null)
    ? ' Give a day as YYYY-MM-DD, such as 2026-01-31.'
    : '';
  return `<p class="notice error" role="alert" id="f-problem">${said.map((text) => escapeText(redactSecrets(text))).join(' ')}${hint}</p>`;
}

export function offsetsSection(d: DashboardData): string {
  const f = d.filter;
  const query = (extra: Record<string, string>) => {
    const filters = {
      ...(f.status ? { status: f.status } : {}),
      ...(f.reference ? { reference: f.reference } : {}),
      ...(f.since ? { since: f.since } : {}),
      ...(f.until ? { until: f.until } : {}),
    };
    // At the offsets (#offsets): on a phone they are screens down, and the page would open at its top.
    const refresh: Record<string, string> = d.refresh > 0 ? { refresh: String(d.refresh) } : {};
    return `/?${new URLSearchParams({ mode: d.mode, ...filters, ...refresh, ...extra }).toString()}#offsets`;
  };
  const last = d.offsets.data.at(-1);
  const older =
    d.offsets.has_more && last !== undefined ? `<a rel="next" href="${escapeHtml(query({ after: last.id }))}">Older offsets →</a>` : '';
  // A later page leads back to the first, with the same filters (the list is read forwards only).
  const newest = f.after ? `<a rel="first" href="${escapeHtml(query({}))}">← Newest offsets</a>` : '';
  const offsets =
    f.invalid.length > 0 || f.repeated.length > 0
      ? '<p class="muted">The offsets are not listed until the filter above is fixed.</p>'
      : d.offsets.data.length === 0
        ? `<p class="muted">No offsets${f.status || f.reference || f.since || f.until ? ' match these filters' : ' yet in this mode'}.</p>`
        : cardTable('offsets', offsetColumns(d), d.offsets.data);
  const statusOption = (v: string, label: string) => `<option value="${v}"${f.status === v ? ' selected' : ''}>${label}</option>`;
  const statuses = [statusOption('', 'any'), ...OFFSET_STATUSES.map((v) => statusOption(v, v))].join('');
  const wrong = (name: FilterName) =>
    (f.invalid as readonly string[]).includes(name) || f.repeated.some((r) => r.name === name)
      ? ' aria-invalid="true" aria-describedby="f-problem"'
      : '';
  // A value that is no date stays in its field to be fixed: as text, since a date input would show it empty.
  // A status that is none cannot: a select shows only what it offers, so no status is chosen; the notice names it.
  // A field given twice starts empty: which value was meant is not known; the notice names them.
  const dateInput = (name: 'since' | 'until') =>
    f.invalid.includes(name) && day(f[name]) === null
      ? `<input id="f-${name}" name="${name}" type="text" placeholder="YYYY-MM-DD"${wrong(name)} value="${escapeHtml(f[name])}">`
      : `<input id="f-${name}" name="${name}" type="date"${wrong(name)} value="${escapeHtml(f[name])}">`;
  return `<section aria-labelledby="offsets"><h2 id="offsets">Offsets (${d.mode}), newest first</h2>
${noticeAt(d, 'offsets')}${problemNotice(f)}<form method="get" action="/#offsets" class="filters"><input type="hidden" name="mode" value="${d.mode}">${d.refresh > 0 ? `<input type="hidden" name="refresh" value="${d.refresh}">` : ''}
${field('f-status', LABELS.status, `<select id="f-status" name="status"${wrong('status')}>${statuses}</select>`)}
${field('f-reference', LABELS.reference, `<input id="f-reference" name="reference"${wrong('reference')} value="${escapeHtml(isUnicodeText(f.reference) ? f.reference : '')}">`)}
${field('f-since', LABELS.since, dateInput('since'))}
${field('f-until', LABELS.until, dateInput('until'))}
<button type="submit">Filter</button></form>
${offsets}
<p class="pages">${[newest, older].filter(Boolean).join(' ')}</p>
</section>`;
}
