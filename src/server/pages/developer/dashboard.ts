import type { Mode, Offset } from '../../../api/types.js';
import type { SandboxKey } from '../../../service/sandbox.js';
import { dollars, ratePerKg } from '../../../service/units.js';
import { escapeHtml } from '../html.js';
import { chartHtml } from './chart.js';
import { action, confirmed, csrfField, type DashboardData, date, faultControls, kg, layout } from './views.js';

/**
 * The developer page's dashboard, section by section: the account, its impact, its offsets, the
 * review queue, the keys and the sandbox's controls. Every form is one action's row (actions.ts).
 */

const hiddenId = (id: string) => `<input type="hidden" name="id" value="${escapeHtml(id)}">`;
const offsetLink = (o: Offset) => `<a href="/offsets/${encodeURIComponent(o.id)}">${escapeHtml(o.id)}</a>`;

function offsetRow(o: Offset, d: DashboardData): string {
  const fail = o.status === 'processing' ? action('fail', d, hiddenId(o.id), 'Fail', 'inline') : '';
  const reference = o.reference === null ? '<span class="muted">—</span>' : escapeHtml(o.reference);
  return (
    `<tr><td>${offsetLink(o)}</td><td><span class="status ${escapeHtml(o.status)}">${escapeHtml(o.status)}</span></td>` +
    `<td class="num">${escapeHtml(kg(o.kg))}</td><td class="num">${escapeHtml(dollars(o.amount_cents))}</td>` +
    `<td>${reference}</td><td>${escapeHtml(date(o.created))}</td><td>${fail}</td></tr>`
  );
}

/** The dashboard: the account, its impact, its offsets, the review queue, the keys and the sandbox's controls. */
export function dashboard(d: DashboardData): string {
  const other: Mode = d.mode === 'live' ? 'test' : 'live';
  const role = d.notice?.kind === 'error' ? 'alert' : 'status';
  const notice = d.notice === undefined ? '' : `<p class="notice ${d.notice.kind}" role="${role}">${escapeHtml(d.notice.text)}</p>`;
  const refresh =
    d.refresh > 0 ? `<a href="/?mode=${d.mode}">Stop refreshing</a>` : `<a href="/?mode=${d.mode}&amp;refresh=10">Refresh every 10 s</a>`;
  return layout(
    `carbon sandbox (${d.mode})`,
    `<header>
<h1>carbon sandbox <span class="mode ${d.mode}">${d.mode}</span></h1>
<nav aria-label="Mode"><a href="/?mode=${other}">Switch to ${other}</a> · ${refresh} · <a href="/requests">Requests</a></nav>
<form method="post" action="/logout">${csrfField(d.csrf)}<button type="submit">Sign out</button></form>
</header>
<main>
${notice}${createdKey(d)}
${accountSection(d)}
${impactSection(d)}
${offsetsSection(d)}
<section aria-labelledby="review"><h2 id="review">Review queue (live)</h2>${reviewTable(d)}</section>
${keysSection(d)}
${controlsSection(d)}
</main>`,
    d.refresh,
  );
}

const modeOption = (d: DashboardData, mode: Mode) => `<option value="${mode}"${d.mode === mode ? ' selected' : ''}>${mode}</option>`;
const modeOptions = (d: DashboardData) => `${modeOption(d, 'test')}${modeOption(d, 'live')}`;

function createdKey(d: DashboardData): string {
  if (d.createdKey === undefined) return '';
  return (
    `<section class="secret" aria-labelledby="new-key"><h2 id="new-key">New key ${escapeHtml(d.createdKey.id)}</h2>
<p>Copy it now: it is shown in full only this once.</p>
<p><label for="new-secret">Secret</label> <input id="new-secret" readonly value="${escapeHtml(d.createdKey.secret)}" size="48"> ` +
    `<button type="button" data-copy="new-secret">Copy</button></p></section>`
  );
}

function accountSection(d: DashboardData): string {
  const s = d.status;
  const standing = s.account.status === 'active' ? 'active' : s.account.status === 'suspended' ? 'suspended' : 'not approved';
  const typed = d.typed?.amount === undefined ? '' : ` value="${escapeHtml(d.typed.amount)}"`;
  const topUp =
    `<label for="topup-mode">Mode</label> <select id="topup-mode" name="mode">${modeOptions(d)}</select> ` +
    '<label for="topup-amount">Amount in dollars (at least $250)</label> ' +
    `<input id="topup-amount" name="amount" inputmode="decimal" required placeholder="250.00"${typed}>`;
  return `<section aria-labelledby="account"><h2 id="account">Account</h2>
<dl class="facts"><dt>Standing</dt><dd><span class="standing ${escapeHtml(s.account.status)}">${standing}</span></dd>
<dt>Test balance</dt><dd>${escapeHtml(dollars(s.balances.test))}</dd><dt>Live balance</dt><dd>${escapeHtml(dollars(s.balances.live))}</dd>
<dt>Rate</dt><dd>${escapeHtml(ratePerKg(s.account.rate))}</dd><dt>Review limit</dt><dd>${escapeHtml(dollars(s.account.review_limit_cents))}</dd>
<dt>Model clock</dt><dd>${escapeHtml(date(s.clock.now))}</dd></dl>
${action('topup', d, topUp, 'Top up')}
</section>`;
}

function impactSection(d: DashboardData): string {
  const impact = d.status.impact[d.mode];
  return (
    `<section aria-labelledby="impact"><h2 id="impact">Impact (${d.mode})</h2>
<dl class="facts"><dt>Placed</dt><dd>${escapeHtml(kg(impact.placed_kg))}</dd><dt>Processing</dt><dd>${escapeHtml(kg(impact.processing_kg))}</dd>` +
    `<dt>Offsets</dt><dd>${escapeHtml(impact.offsets.toLocaleString('en-US'))}</dd></dl>
${chartHtml(d.chart, d.mode)}
</section>`
  );
}

const th = (...names: string[]) => names.map((n) => `<th scope="col">${n}</th>`).join('');
const ACTIONS_TH = '<th scope="col"><span class="visually-hidden">Actions</span></th>';

function offsetsSection(d: DashboardData): string {
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
  const offsets =
    d.offsets.data.length === 0
      ? `<p class="muted">No offsets${f.status || f.reference || f.since || f.until ? ' match these filters' : ' yet in this mode'}.</p>`
      : `<div class="scroll"><table><thead><tr>${th('Offset', 'Status', 'kg', 'Amount', 'Reference', 'Created')}${ACTIONS_TH}</tr></thead>` +
        `<tbody>${d.offsets.data.map((o) => offsetRow(o, d)).join('')}</tbody></table></div>`;
  const statusOption = (v: string, label: string) => `<option value="${v}"${f.status === v ? ' selected' : ''}>${label}</option>`;
  const statuses = [statusOption('', 'any'), ...['processing', 'placed', 'refunded'].map((v) => statusOption(v, v))].join('');
  return `<section aria-labelledby="offsets"><h2 id="offsets">Offsets (${d.mode}), newest first</h2>
<form method="get" action="/" class="filters"><input type="hidden" name="mode" value="${d.mode}">
<label for="f-status">Status</label> <select id="f-status" name="status">${statuses}</select>
<label for="f-reference">Reference starts with</label> <input id="f-reference" name="reference" value="${escapeHtml(f.reference)}">
<label for="f-since">From</label> <input id="f-since" name="since" type="date" value="${escapeHtml(f.since)}">
<label for="f-until">Until</label> <input id="f-until" name="until" type="date" value="${escapeHtml(f.until)}">
<button type="submit">Filter</button></form>
${offsets}
<p>${older}</p>
</section>`;
}

function reviewTable(d: DashboardData): string {
  if (d.review.length === 0) return '<p class="muted">Nothing waits for review.</p>';
  const row = (o: Offset) => {
    const id = hiddenId(o.id);
    const decide = `${action('approve', d, id, 'Approve', 'inline')} ${action('reject', d, id, 'Reject', 'inline danger')}`;
    return (
      `<tr><td>${offsetLink(o)}</td><td class="num">${escapeHtml(kg(o.kg))}</td>` +
      `<td class="num">${escapeHtml(dollars(o.amount_cents))}</td><td>${escapeHtml(date(o.created))}</td><td>${decide}</td></tr>`
    );
  };
  return (
    `<div class="scroll"><table><thead><tr>${th('Offset', 'kg', 'Amount', 'Created', 'Decision')}</tr></thead>` +
    `<tbody>${d.review.map(row).join('')}</tbody></table></div>`
  );
}

function keyRow(k: SandboxKey, d: DashboardData): string {
  const state = k.revoked === null ? 'active' : `revoked ${escapeHtml(date(k.revoked))}`;
  const revoke = k.revoked === null ? confirmed('key-revoke', d, hiddenId(k.id), 'Revoke…', `Revoke ${k.id}`) : '';
  const which = k.default === null ? '' : ` <span class="muted">(default ${escapeHtml(k.default.replace('_', '-'))})</span>`;
  return (
    `<tr><td>${escapeHtml(k.id)}</td><td>${escapeHtml(k.mode)}</td><td>${k.permission === 'read_only' ? 'read-only' : 'purchase'}</td>` +
    `<td><code>${escapeHtml(k.masked)}</code></td><td>${escapeHtml(date(k.created))}</td><td>${state}${which}</td><td>${revoke}</td></tr>`
  );
}

function keysSection(d: DashboardData): string {
  const create =
    `<label for="key-mode">Mode</label> <select id="key-mode" name="mode">${modeOptions(d)}</select> ` +
    '<label for="key-access">Access</label> <select id="key-access" name="permission">' +
    '<option value="purchase">purchase</option><option value="read_only">read-only</option></select>';
  return (
    `<section aria-labelledby="keys"><h2 id="keys">API keys</h2>
<div class="scroll"><table><thead><tr>${th('Key', 'Mode', 'Access', 'Key (masked)', 'Created', 'State')}${ACTIONS_TH}</tr></thead>` +
    `<tbody>${d.keys.map((k) => keyRow(k, d)).join('')}</tbody></table></div>
${action('key-create', d, create, 'Create key')}
</section>`
  );
}

function controlsSection(d: DashboardData): string {
  const account = d.status.account;
  const standing =
    '<label for="c-status">Account standing</label> <select id="c-status" name="status">' +
    '<option value="active">active</option><option value="suspended">suspended</option>' +
    '<option value="unapproved">not approved</option></select>';
  const rate = `name="rate" inputmode="numeric" required value="${account.rate}"`;
  const review = `name="amount" inputmode="decimal" required value="${escapeHtml(dollars(account.review_limit_cents).slice(1).replace(/,/g, ''))}"`;
  const limit = `name="requests" required value="${account.rate_limit_requests ?? 'off'}"`;
  const field = (id: string, label: string, input: string) => `<label for="${id}">${label}</label> <input id="${id}" ${input}>`;
  return `<section aria-labelledby="controls"><h2 id="controls">Sandbox controls</h2>
<div class="controls">
${action('status', d, standing, 'Set standing')}
${action('rate', d, field('c-rate', 'Rate (millicents per kg)', rate), 'Set rate')}
${action('review-limit', d, field('c-review', 'Review limit (dollars)', review), 'Set review limit')}
${action('rate-limit', d, field('c-limit', 'Rate limit (requests a second, or off)', limit), 'Set rate limit')}
${action('clock', d, field('c-clock', 'Advance the clock by', 'name="duration" required placeholder="2m, 1h, 30d"'), 'Advance')}
${confirmed('reset', d, '', 'Reset the sandbox…', 'Delete everything and start again')}
</div>
${faultControls(d)}
</section>`;
}
