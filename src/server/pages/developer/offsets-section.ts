import { OFFSET_STATUSES } from '../../../api/types.js';
import { redactKeys } from '../../../service/keys.js';
import { escapeHtml } from '../html.js';
import { cardTable, offsetColumns } from './tables.js';
import { type DashboardData, field } from './views.js';

/**
 * The dashboard's offsets: the filter (a GET form: the address says what is listed), what is wrong
 * with it said above it, a page of offsets, and the links to the pages beside it.
 */

/** A filter field whose value can be none at all: an unknown status, a day that is none. */
type FilterField = DashboardData['filter']['invalid'][number];

export function offsetsSection(d: DashboardData): string {
  const f = d.filter;
  const query = (extra: Record<string, string>) => {
    const filters = {
      ...(f.status ? { status: f.status } : {}),
      ...(f.reference ? { reference: f.reference } : {}),
      ...(f.since ? { since: f.since } : {}),
      ...(f.until ? { until: f.until } : {}),
    };
    return `/?${new URLSearchParams({ mode: d.mode, ...filters, ...extra }).toString()}`;
  };
  const last = d.offsets.data.at(-1);
  const older =
    d.offsets.has_more && last !== undefined ? `<a rel="next" href="${escapeHtml(query({ after: last.id }))}">Older offsets →</a>` : '';
  // A later page leads back to the first, with the same filters (the list is read forwards only).
  const newest = f.after ? `<a rel="first" href="${escapeHtml(query({}))}">← Newest offsets</a>` : '';
  const offsets =
    f.invalid.length > 0
      ? '<p class="muted">The offsets are not listed until the filter above is fixed.</p>'
      : d.offsets.data.length === 0
        ? `<p class="muted">No offsets${f.status || f.reference || f.since || f.until ? ' match these filters' : ' yet in this mode'}.</p>`
        : cardTable('offsets', offsetColumns(d), d.offsets.data);
  const statusOption = (v: string, label: string) => `<option value="${v}"${f.status === v ? ' selected' : ''}>${label}</option>`;
  const statuses = [statusOption('', 'any'), ...OFFSET_STATUSES.map((v) => statusOption(v, v))].join('');
  const labels = { status: 'Status', since: 'From', until: 'Until' } as const;
  const invalid = (name: FilterField) => (f.invalid.includes(name) ? ' aria-invalid="true" aria-describedby="f-problem"' : '');
  // A value that is no date stays in its field to be fixed: as text, since a date input would show it empty.
  // A status that is none cannot: a select shows only what it offers, so no status is chosen; the notice names it.
  const dateInput = (name: 'since' | 'until') =>
    f.invalid.includes(name)
      ? `<input id="f-${name}" name="${name}" type="text" placeholder="YYYY-MM-DD"${invalid(name)} value="${escapeHtml(f[name])}">`
      : `<input id="f-${name}" name="${name}" type="date" value="${escapeHtml(f[name])}">`;
  const said = (name: FilterField) =>
    name === 'status'
      ? `is not a status: choose ${OFFSET_STATUSES.slice(0, -1).join(', ')} or ${OFFSET_STATUSES.at(-1)} (or any).`
      : 'is not a date.';
  const problem =
    f.invalid.length === 0
      ? ''
      : `<p class="notice error" role="alert" id="f-problem">${f.invalid
          .map((name) => escapeHtml(redactKeys(`${labels[name]}: "${f[name].slice(0, 40)}" ${said(name)}`)))
          .join(' ')}${f.invalid.some((name) => name !== 'status') ? ' Give a day as YYYY-MM-DD, such as 2026-01-31.' : ''}</p>`;
  return `<section aria-labelledby="offsets"><h2 id="offsets">Offsets (${d.mode}), newest first</h2>
${problem}<form method="get" action="/" class="filters"><input type="hidden" name="mode" value="${d.mode}">
${field('f-status', labels.status, `<select id="f-status" name="status"${invalid('status')}>${statuses}</select>`)}
${field('f-reference', 'Reference starts with', `<input id="f-reference" name="reference" value="${escapeHtml(f.reference)}">`)}
${field('f-since', labels.since, dateInput('since'))}
${field('f-until', labels.until, dateInput('until'))}
<button type="submit">Filter</button></form>
${offsets}
<p class="pages">${[newest, older].filter(Boolean).join(' ')}</p>
</section>`;
}
