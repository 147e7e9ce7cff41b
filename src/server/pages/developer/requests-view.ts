import type { RequestEntry } from '../../../api/journal.js';
import { escapeHtml, escapeText } from '../html.js';
import { layout, pageHeader } from './views.js';

/**
 * The developer page's Requests view: the journal's newest entries (filtered by status and by a
 * path's start), and one entry opened whole with both bodies. Made for a phone first: the list is
 * one line an entry that wraps rather than a wide table, and bodies wrap inside their box.
 */

export interface RequestsData {
  entries: RequestEntry[];
  filter: { status: string; path: string };
  /** The seq to read older entries from, when there are more. */
  older: number | null;
  /** A later page than the newest (read from `before`): it leads back to the newest. */
  later?: boolean;
  csrf: string;
  /** A filter that could not be read, said; `wrong`, its field (marked invalid, described by what is said). */
  problem?: string;
  wrong?: string;
}

export const REQUESTS_CSS = `
.requests { list-style: none; margin: 0.5rem 0; padding: 0; }
.requests li { border-bottom: 1px solid var(--rule); }
.requests a { display: grid; grid-template-columns: 3.2rem 3.4rem minmax(0, 1fr) auto; gap: 0.1rem 0.6rem; padding: 0.4rem 0.2rem; color: inherit; text-decoration: none; }
.requests a:hover, .requests a:focus-visible { background: var(--bg); }
.requests .path { overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: 0.9rem; }
.requests .when, .requests .code { color: var(--muted); font-size: 0.85rem; }
.requests .code { grid-column: 3 / 5; overflow-wrap: break-word; }
.requests .code.id { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 0.8rem; }
.http { font-variant-numeric: tabular-nums; font-weight: 600; }
.http.s2 { color: var(--accent); } .http.s4 { color: #6b4e00; } .http.s5 { color: var(--bad); }
form.filters { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; }
pre.body { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); border: 1px solid var(--rule); border-radius: 4px; padding: 0.5rem; font-size: 0.85rem; max-height: 30rem; overflow-y: auto; }
.facts dd, .request-whole h2 { overflow-wrap: anywhere; }
@media (max-width: 40rem) { .requests a { grid-template-columns: 3rem 3.2rem minmax(0, 1fr); } .requests .when { grid-column: 3; } .requests .code { grid-column: 2 / -1; } }
`;

const STATUS_OPTIONS = [
  ['', 'any status'],
  ['2xx', '2xx'],
  ['4xx', '4xx'],
  ['5xx', '5xx'],
] as const;

const statusClass = (status: number) => `http s${Math.floor(status / 100)}`;

function item(e: RequestEntry): string {
  // A narrow screen breaks an error's code after an underscore (idempotency_key_<wbr>reused), not inside a word; an offset's id stays whole.
  const error = e.error?.code;
  const code = error != null ? escapeHtml(error).replaceAll('_', '_<wbr>') : escapeHtml(e.replayed ? 'replayed' : (e.offset ?? ''));
  const kind = error == null && !e.replayed && e.offset != null ? 'code id' : 'code';
  const target = e.query === '' ? e.path : `${e.path}?${e.query}`;
  return (
    `<li><a href="/requests/${encodeURIComponent(e.id)}"><span class="${statusClass(e.status)}">${e.status}</span>` +
    `<span class="method">${escapeHtml(e.method)}</span><span class="path">${escapeText(target)}</span>` +
    // Its day too: the model's clock moves by days, and a time alone reads as today's.
    `<span class="when"><time datetime="${escapeHtml(e.created)}">${escapeHtml(`${e.created.slice(0, 10)} ${e.created.slice(11, 19)}`)}</time></span>` +
    `${code === '' ? '' : `<span class="${kind}">${code}</span>`}</a></li>`
  );
}

/** The list, newest first, with its filters (a GET form: the address says what is shown). */
export function requestsPage(d: RequestsData): string {
  const option = ([value, label]: readonly [string, string]) =>
    `<option value="${escapeHtml(value)}"${d.filter.status === value ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  // A status the select does not offer (a code, such as 404, or 3xx, from an address): offered, chosen, so the form says what is listed.
  const offered = STATUS_OPTIONS.some(([value]) => value === d.filter.status);
  const options = offered ? STATUS_OPTIONS : [...STATUS_OPTIONS, [d.filter.status, d.filter.status] as const];
  const problem = d.problem === undefined ? '' : `<p class="notice error" role="alert" id="r-problem">${escapeText(d.problem)}</p>`;
  const wrong = (name: string) => (d.problem !== undefined && d.wrong === name ? ' aria-invalid="true" aria-describedby="r-problem"' : '');
  const query = new URLSearchParams({
    ...(d.filter.status ? { status: d.filter.status } : {}),
    ...(d.filter.path ? { path: d.filter.path } : {}),
  });
  const older =
    d.older === null
      ? ''
      : `<a rel="next" href="/requests?${escapeHtml(new URLSearchParams([...query, ['before', String(d.older)]]).toString())}">Older requests →</a>`;
  // A later page leads back to the newest, with the same filters (the list is read backwards only).
  const newest = d.later
    ? `<a rel="first" href="/requests${query.size > 0 ? `?${escapeHtml(query.toString())}` : ''}">← Newest requests</a>`
    : '';
  const pages = newest || older ? `<p class="pages">${[newest, older].filter(Boolean).join(' ')}</p>` : '';
  const none =
    d.problem !== undefined
      ? 'The requests are not listed until the filter above is fixed.'
      : d.filter.status || d.filter.path
        ? 'No requests match these filters.'
        : 'No requests yet. Every request the API answers shows here.';
  const list =
    d.entries.length === 0
      ? `<p class="muted" id="no-requests">${none}</p>`
      : `<ol class="requests" aria-label="Requests, newest first">${d.entries.map(item).join('')}</ol>`;
  return layout(
    'carbon sandbox: requests',
    `${pageHeader('Requests', d.csrf)}
<main>${problem}
<section aria-labelledby="requests"><h2 id="requests">Requests, newest first</h2>
<form method="get" action="/requests" class="filters" role="search">
<span class="field"><label for="r-status">Status</label> <select id="r-status" name="status"${wrong('status')}>${options.map(option).join('')}</select></span>
<span class="field"><label for="r-path">Path starts with</label> <input id="r-path" name="path"${wrong('path')} placeholder="/api/v1/offsets" value="${escapeHtml(d.filter.path)}"></span>
<button type="submit">Filter</button></form>
${list}${pages}</section></main>`,
  );
}

/** One entry whole: every field, and both bodies. */
export function requestPage(e: RequestEntry, csrf: string): string {
  const row = (k: string, v: string) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`;
  const text = (v: string | null) => (v === null ? '<span class="muted">—</span>' : escapeText(v));
  const error =
    e.error === null
      ? ''
      : `${row('Error', text(`${e.error.type ?? ''} ${e.error.code ?? ''}`.trim()))}${row('Param', text(e.error.param))}${row('Message', text(e.error.message))}`;
  const key = e.key_id === null ? text(null) : `${escapeHtml(e.key_id)} (${e.livemode ? 'live' : 'test'})`;
  // A body taller than its box scrolls inside it: focusable, so a keyboard can scroll it too, and named by its heading.
  const body = (b: string, heading: string) =>
    b === ''
      ? '<p class="muted">(none)</p>'
      : `<pre class="body" tabindex="0" role="region" aria-labelledby="${heading}">${escapeText(pretty(b))}</pre>`;
  return layout(
    `carbon sandbox: request ${e.id}`,
    `${pageHeader(`Request <code>${escapeHtml(e.id)}</code>`, csrf)}
<main><section class="request-whole" aria-labelledby="request"><h2 id="request">${escapeHtml(e.method)} ${escapeText(e.path)}</h2><dl class="facts">
${row('Status', `<span class="${statusClass(e.status)}">${e.status}</span>`)}${error}${row('Query', text(e.query === '' ? null : e.query))}
${row('Time', `${escapeHtml(e.created)} <span class="muted">(model time; real time ${escapeHtml(e.real_time)})</span>`)}${row('Duration', `${e.duration_ms.toFixed(1)} ms`)}
${row('Key', key)}${row('Idempotency-Key', `${text(e.idempotency_key)}${e.replayed ? ' (replayed)' : ''}`)}
${row('Offset', e.offset === null ? text(null) : `<a href="/offsets/${encodeURIComponent(e.offset)}">${escapeHtml(e.offset)}</a>`)}${row('Instance', text(e.instance))}
</dl>
<h3 id="request-body">Request body</h3>${body(e.request_body, 'request-body')}
<h3 id="response-body">Response body</h3>${body(e.response_body, 'response-body')}</section></main>`,
  );
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
