import type { Mode, Offset } from '../../../api/types.js';
import { FAULT_KINDS, describeFaults } from '../../../service/faults.js';
import { ROUTES } from '../../../service/routes.js';
import type { SandboxKey, SandboxStatus } from '../../../service/sandbox.js';
import { dollars, ratePerKg } from '../../../service/units.js';
import { type ChartData, chartHtml } from './chart.js';
import { escapeHtml as e, htmlDocument } from '../html.js';

/**
 * The developer page's HTML: plain server-rendered documents, every form a POST that works
 * without JavaScript (app.js only adds a copy button and a refresh). Every value is escaped.
 */

export interface DashboardData {
  mode: Mode;
  status: SandboxStatus;
  keys: SandboxKey[];
  offsets: { data: Offset[]; has_more: boolean };
  review: Offset[];
  chart: ChartData;
  filter: { status: string; reference: string; since: string; until: string };
  csrf: string;
  /** A message after an action, or an error. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** Seconds between live refreshes (0: none). */
  refresh: number;
  /** What was typed into a form that failed, shown again (only the top-up's amount). */
  typed?: { amount?: string };
  /** A key just created: the one time its full text is shown. */
  createdKey?: { id: string; secret: string };
}

const kg = (n: number) => `${n.toLocaleString('en-US')} kg`;
const date = (iso: string | null) => (iso === null ? '—' : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`);

function layout(title: string, body: string, refresh = 0): string {
  return htmlDocument(title, '<link rel="icon" href="/favicon.ico" type="image/svg+xml">\n<link rel="stylesheet" href="/_page/app.css">\n<script src="/_page/app.js" defer></script>', body, refresh > 0 ? ` data-refresh="${refresh}"` : '');
}

export function loginPage(message: string): string {
  return layout('carbon sandbox: sign in', `<main class="narrow">
<h1>carbon sandbox</h1>
<p>${e(message)}</p>
<p>Open the address <code>carbon serve</code> printed (it carries a one-time login token), or start the server again for a new one.</p>
</main>`);
}

function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf" value="${e(csrf)}">`;
}

/** A POST form to /actions/NAME, with the CSRF token and the mode to come back to. */
function action(name: string, d: DashboardData, fields: string, button: string, cls = ''): string {
  return `<form method="post" action="/actions/${name}" class="${cls}">${csrfField(d.csrf)}<input type="hidden" name="back" value="${d.mode}">${fields}<button type="submit">${button}</button></form>`;
}

/** An action that asks first: the form shows only after "…" is opened (no JavaScript needed). */
function confirmed(name: string, d: DashboardData, fields: string, ask: string, button: string): string {
  return `<details class="confirm"><summary>${e(ask)}</summary>${action(name, d, fields, button, 'danger')}</details>`;
}

function offsetRow(o: Offset, d: DashboardData): string {
  const fail = o.status === 'processing' ? action('fail', d, `<input type="hidden" name="id" value="${e(o.id)}">`, 'Fail', 'inline') : '';
  return `<tr><td><a href="/offsets/${encodeURIComponent(o.id)}">${e(o.id)}</a></td><td><span class="status ${e(o.status)}">${e(o.status)}</span></td><td class="num">${e(kg(o.kg))}</td><td class="num">${e(dollars(o.amount_cents))}</td><td>${o.reference === null ? '<span class="muted">—</span>' : e(o.reference)}</td><td>${e(date(o.created))}</td><td>${fail}</td></tr>`;
}

export function dashboard(d: DashboardData): string {
  const s = d.status;
  const other: Mode = d.mode === 'live' ? 'test' : 'live';
  const standing = s.account.status === 'active' ? 'active' : s.account.status === 'suspended' ? 'suspended' : 'not approved';
  const impact = s.impact[d.mode];
  const notice = d.notice === undefined ? '' : `<p class="notice ${d.notice.kind}" role="${d.notice.kind === 'error' ? 'alert' : 'status'}">${e(d.notice.text)}</p>`;
  const created =
    d.createdKey === undefined
      ? ''
      : `<section class="secret" aria-labelledby="new-key"><h2 id="new-key">New key ${e(d.createdKey.id)}</h2>
<p>Copy it now: it is shown in full only this once.</p>
<p><label for="new-secret">Secret</label> <input id="new-secret" readonly value="${e(d.createdKey.secret)}" size="48"> <button type="button" data-copy="new-secret">Copy</button></p></section>`;
  const keys = d.keys
    .map((k) => {
      const state = k.revoked === null ? 'active' : `revoked ${e(date(k.revoked))}`;
      const revoke = k.revoked === null ? confirmed('key-revoke', d, `<input type="hidden" name="id" value="${e(k.id)}">`, 'Revoke…', `Revoke ${k.id}`) : '';
      return `<tr><td>${e(k.id)}</td><td>${e(k.mode)}</td><td>${k.permission === 'read_only' ? 'read-only' : 'purchase'}</td><td><code>${e(k.masked)}</code></td><td>${e(date(k.created))}</td><td>${state}${k.default === null ? '' : ` <span class="muted">(default ${e(k.default.replace('_', '-'))})</span>`}</td><td>${revoke}</td></tr>`;
    })
    .join('');
  const review = d.review.length === 0
    ? '<p class="muted">Nothing waits for review.</p>'
    : `<div class="scroll"><table><thead><tr><th scope="col">Offset</th><th scope="col">kg</th><th scope="col">Amount</th><th scope="col">Created</th><th scope="col">Decision</th></tr></thead><tbody>${d.review
        .map((o) => `<tr><td><a href="/offsets/${encodeURIComponent(o.id)}">${e(o.id)}</a></td><td class="num">${e(kg(o.kg))}</td><td class="num">${e(dollars(o.amount_cents))}</td><td>${e(date(o.created))}</td><td>${action('approve', d, `<input type="hidden" name="id" value="${e(o.id)}">`, 'Approve', 'inline')} ${action('reject', d, `<input type="hidden" name="id" value="${e(o.id)}">`, 'Reject', 'inline danger')}</td></tr>`)
        .join('')}</tbody></table></div>`;
  const f = d.filter;
  const query = (extra: Record<string, string>) =>
    `/?${new URLSearchParams({ mode: d.mode, ...(f.status ? { status: f.status } : {}), ...(f.reference ? { reference: f.reference } : {}), ...(f.since ? { since: f.since } : {}), ...(f.until ? { until: f.until } : {}), ...extra }).toString()}`;
  const last = d.offsets.data.at(-1);
  const older = d.offsets.has_more && last !== undefined ? `<a rel="next" href="${e(query({ after: last.id }))}">Older offsets →</a>` : '';
  const offsets = d.offsets.data.length === 0
    ? `<p class="muted">No offsets${f.status || f.reference || f.since || f.until ? ' match these filters' : ' yet in this mode'}.</p>`
    : `<div class="scroll"><table><thead><tr><th scope="col">Offset</th><th scope="col">Status</th><th scope="col">kg</th><th scope="col">Amount</th><th scope="col">Reference</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${d.offsets.data.map((o) => offsetRow(o, d)).join('')}</tbody></table></div>`;
  const statusOption = (v: string, label: string) => `<option value="${v}"${f.status === v ? ' selected' : ''}>${label}</option>`;

  return layout(`carbon sandbox (${d.mode})`, `<header>
<h1>carbon sandbox <span class="mode ${d.mode}">${d.mode}</span></h1>
<nav aria-label="Mode"><a href="/?mode=${other}">Switch to ${other}</a> · <a href="${d.refresh > 0 ? `/?mode=${d.mode}` : `/?mode=${d.mode}&amp;refresh=10`}">${d.refresh > 0 ? 'Stop refreshing' : 'Refresh every 10 s'}</a></nav>
<form method="post" action="/logout">${csrfField(d.csrf)}<button type="submit">Sign out</button></form>
</header>
<main>
${notice}${created}
<section aria-labelledby="account"><h2 id="account">Account</h2>
<dl class="facts"><dt>Standing</dt><dd><span class="standing ${e(s.account.status)}">${standing}</span></dd>
<dt>Test balance</dt><dd>${e(dollars(s.balances.test))}</dd><dt>Live balance</dt><dd>${e(dollars(s.balances.live))}</dd>
<dt>Rate</dt><dd>${e(ratePerKg(s.account.rate))}</dd><dt>Review limit</dt><dd>${e(dollars(s.account.review_limit_cents))}</dd>
<dt>Model clock</dt><dd>${e(date(s.clock.now))}</dd></dl>
${action('topup', d, `<label for="topup-mode">Mode</label> <select id="topup-mode" name="mode"><option value="test"${d.mode === 'test' ? ' selected' : ''}>test</option><option value="live"${d.mode === 'live' ? ' selected' : ''}>live</option></select> <label for="topup-amount">Amount in dollars (at least $250)</label> <input id="topup-amount" name="amount" inputmode="decimal" required placeholder="250.00"${d.typed?.amount === undefined ? '' : ` value="${e(d.typed.amount)}"`}>`, 'Top up')}
</section>
<section aria-labelledby="impact"><h2 id="impact">Impact (${d.mode})</h2>
<dl class="facts"><dt>Placed</dt><dd>${e(kg(impact.placed_kg))}</dd><dt>Processing</dt><dd>${e(kg(impact.processing_kg))}</dd><dt>Offsets</dt><dd>${e(impact.offsets.toLocaleString('en-US'))}</dd></dl>
${chartHtml(d.chart, d.mode)}
</section>
<section aria-labelledby="offsets"><h2 id="offsets">Offsets (${d.mode}), newest first</h2>
<form method="get" action="/" class="filters"><input type="hidden" name="mode" value="${d.mode}">
<label for="f-status">Status</label> <select id="f-status" name="status">${statusOption('', 'any')}${statusOption('processing', 'processing')}${statusOption('placed', 'placed')}${statusOption('refunded', 'refunded')}</select>
<label for="f-reference">Reference starts with</label> <input id="f-reference" name="reference" value="${e(f.reference)}">
<label for="f-since">From</label> <input id="f-since" name="since" type="date" value="${e(f.since)}">
<label for="f-until">Until</label> <input id="f-until" name="until" type="date" value="${e(f.until)}">
<button type="submit">Filter</button></form>
${offsets}
<p>${older}</p>
</section>
<section aria-labelledby="review"><h2 id="review">Review queue (live)</h2>${review}</section>
<section aria-labelledby="keys"><h2 id="keys">API keys</h2>
<div class="scroll"><table><thead><tr><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Access</th><th scope="col">Key (masked)</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${keys}</tbody></table></div>
${action('key-create', d, `<label for="key-mode">Mode</label> <select id="key-mode" name="mode"><option value="test"${d.mode === 'test' ? ' selected' : ''}>test</option><option value="live"${d.mode === 'live' ? ' selected' : ''}>live</option></select> <label for="key-access">Access</label> <select id="key-access" name="permission"><option value="purchase">purchase</option><option value="read_only">read-only</option></select>`, 'Create key')}
</section>
<section aria-labelledby="controls"><h2 id="controls">Sandbox controls</h2>
<div class="controls">
${action('status', d, `<label for="c-status">Account standing</label> <select id="c-status" name="status"><option value="active">active</option><option value="suspended">suspended</option><option value="unapproved">not approved</option></select>`, 'Set standing')}
${action('rate', d, `<label for="c-rate">Rate (millicents per kg)</label> <input id="c-rate" name="rate" inputmode="numeric" required value="${s.account.rate}">`, 'Set rate')}
${action('review-limit', d, `<label for="c-review">Review limit (dollars)</label> <input id="c-review" name="amount" inputmode="decimal" required value="${e(dollars(s.account.review_limit_cents).slice(1).replace(/,/g, ''))}">`, 'Set review limit')}
${action('rate-limit', d, `<label for="c-limit">Rate limit (requests a second, or off)</label> <input id="c-limit" name="requests" required value="${s.account.rate_limit_requests ?? 'off'}">`, 'Set rate limit')}
${action('clock', d, `<label for="c-clock">Advance the clock by</label> <input id="c-clock" name="duration" required placeholder="2m, 1h, 30d">`, 'Advance')}
${confirmed('reset', d, '', 'Reset the sandbox…', 'Delete everything and start again')}
</div>
${faultControls(d)}
</section>
</main>`, d.refresh);
}

/** `carbon sandbox faults` on the page: the setting now, a form to replace it, and one to stop it. */
function faultControls(d: DashboardData): string {
  const f = d.status.faults;
  const option = (value: string, label: string, selected: boolean) => `<option value="${e(value)}"${selected ? ' selected' : ''}>${e(label)}</option>`;
  const kinds = FAULT_KINDS.map((k) => `<label class="check"><input type="checkbox" name="errors" value="${k}"${f === null || f.errors.includes(k) ? ' checked' : ''}> ${k}</label>`).join(' ');
  const routes = [option('', 'every route', f?.route == null), ...ROUTES.map((r) => option(`${r.method} ${r.path}`, `${r.method} ${r.path}`, f?.route === `${r.method} ${r.path}`))].join('');
  const modes = [option('', 'test and live', f?.mode == null), option('test', 'test keys', f?.mode === 'test'), option('live', 'live keys', f?.mode === 'live')].join('');
  const latency = f?.latency_ms == null ? '' : `${f.latency_ms.min}ms-${f.latency_ms.max}ms`;
  return `<h3 id="faults">Faults</h3>
<p id="faults-now">${f === null ? 'Off: every request is answered as usual.' : `On: ${e(describeFaults(f))}.`}</p>
${action('faults', d, `<fieldset><legend>Inject into API requests</legend>
<label for="f-rate">Error rate (0 to 1)</label> <input id="f-rate" name="error_rate" inputmode="decimal" placeholder="0.3" value="${f === null ? '' : f.error_rate}">
<span role="group" aria-label="Faults drawn from">${kinds}</span>
<label for="f-latency">Latency</label> <input id="f-latency" name="latency" placeholder="50ms-400ms" value="${e(latency)}">
<label for="f-route">Route</label> <select id="f-route" name="route">${routes}</select>
<label for="f-mode">Mode</label> <select id="f-mode" name="mode">${modes}</select>
<label for="f-seed">Seed</label> <input id="f-seed" name="seed" inputmode="numeric" placeholder="random" value="${f?.seed ?? ''}">
<label for="f-retry">Retry-After (s)</label> <input id="f-retry" name="retry_after" inputmode="numeric" value="${f?.retry_after_seconds ?? 1}">
</fieldset>`, 'Inject faults')}
${f === null ? '' : action('faults-off', d, '', 'Stop faults')}`;
}

export function offsetPage(o: Offset, csrf: string): string {
  const row = (k: string, v: string) => `<dt>${e(k)}</dt><dd>${v}</dd>`;
  return layout(`Offset ${o.id}`, `<header><h1>Offset <code>${e(o.id)}</code></h1><nav aria-label="Back"><a href="/?mode=${o.livemode ? 'live' : 'test'}">← Developer page</a></nav>
<form method="post" action="/logout">${csrfField(csrf)}<button type="submit">Sign out</button></form></header>
<main><dl class="facts">
${row('Status', `<span class="status ${e(o.status)}">${e(o.status)}</span>`)}${row('Mode', o.livemode ? 'live' : 'test')}${row('kg', e(kg(o.kg)))}
${row('Amount', e(dollars(o.amount_cents)))}${row('Rate', e(ratePerKg(o.rate_millicents_per_kg)))}
${row('Requested', e(o.requested.kg !== null ? kg(o.requested.kg) : dollars(o.requested.amount_cents ?? 0)))}${row('Reference', o.reference === null ? '—' : e(o.reference))}
${row('Created', e(date(o.created)))}${row('Placed', e(date(o.placed)))}
${row('Certificate', o.certificate_url === null ? '<span class="muted">none (only placed live offsets have one)</span>' : `<a href="${e(o.certificate_url)}">${e(o.certificate_url)}</a>`)}
</dl></main>`);
}
