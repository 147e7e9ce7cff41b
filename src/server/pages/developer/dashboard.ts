import type { Mode, Offset } from '../../../api/types.js';
import { dollars, duration, grouped, ratePerKg } from '../../../service/units.js';
import { escapeHtml } from '../html.js';
import { chartHtml } from './chart.js';
import { viewOf } from './dashboard-data.js';
import { noticeAt } from './flash.js';
import { offsetsSection } from './offsets-section.js';
import { type Column, cardTable, hiddenId, keyColumns, offsetLink, referenceColumn } from './tables.js';
import { action, confirmed, csrfField, type DashboardData, date, faultControls, field, fieldValue, kg, layout } from './views.js';

/**
 * The developer page's dashboard, section by section: the account, its impact, its offsets, the
 * review queue, the keys and the sandbox's controls. Every form is one action's row (actions.ts).
 */

/** The dashboard: the account, its impact, its offsets, the review queue, the keys and the sandbox's controls. */
export function dashboard(d: DashboardData): string {
  const other: Mode = d.mode === 'live' ? 'test' : 'live';
  // The offsets' filter and page stay as they are, refreshing or not (and the filter's form keeps the refresh: offsets-section.ts).
  const here = (refresh: string) => escapeHtml(`/?${[`mode=${d.mode}`, viewOf(d.filter), refresh].filter(Boolean).join('&')}`);
  const refresh = d.refresh > 0 ? `<a href="${here('')}">Stop refreshing</a>` : `<a href="${here('refresh=10')}">Refresh every 10 s</a>`;
  return layout(
    `carbon sandbox (${d.mode})`,
    `<header>
<h1>carbon sandbox <span class="mode ${d.mode}">${d.mode}</span></h1>
<nav aria-label="Mode"><a href="/?mode=${other}">Switch to ${other}</a> · ${refresh} · <a href="/requests">Requests</a></nav>
<form method="post" action="/logout">${csrfField(d.csrf)}<button type="submit">Sign out</button></form>
</header>
<main>
${noticeAt(d)}
${accountSection(d)}
${impactSection(d)}
${offsetsSection(d)}
<section aria-labelledby="review"><h2 id="review">Review queue (live)</h2>${noticeAt(d, 'review')}${reviewTable(d)}</section>
${keysSection(d)}
${controlsSection(d)}
</main>`,
    d.refresh,
  );
}

const modeOption = (chosen: Mode, mode: Mode) => `<option value="${mode}"${chosen === mode ? ' selected' : ''}>${mode}</option>`;
const modeOptions = (d: DashboardData, chosen = d.mode) => `${modeOption(chosen, 'test')}${modeOption(chosen, 'live')}`;

function createdKey(d: DashboardData): string {
  if (d.createdKey === undefined) return '';
  return (
    `<section class="secret" aria-labelledby="new-key"><h3 id="new-key">New key ${escapeHtml(d.createdKey.id)}</h3>
<p>Copy it now: it is shown in full only this once.</p>
<p>${field('new-secret', 'Secret', `<input id="new-secret" readonly value="${escapeHtml(d.createdKey.secret)}" size="48">`)} ` +
    `<button type="button" data-copy="new-secret" hidden>Copy</button></p></section>`
  );
}

function accountSection(d: DashboardData): string {
  const s = d.status;
  const standing = s.account.status === 'active' ? 'active' : s.account.status === 'suspended' ? 'suspended' : 'not approved';
  const typed = ` value="${escapeHtml(fieldValue(d, 'topup', 'amount'))}"`;
  const mode: Mode = fieldValue(d, 'topup', 'mode', d.mode) === 'live' ? 'live' : 'test';
  const topUp =
    `${field('topup-mode', 'Mode', `<select id="topup-mode" name="mode">${modeOptions(d, mode)}</select>`)} ` +
    field(
      'topup-amount',
      'Amount in dollars (at least $250)',
      `<input id="topup-amount" name="amount" inputmode="decimal" required placeholder="250.00"${typed}>`,
    );
  return `<section aria-labelledby="account"><h2 id="account">Account</h2>
${noticeAt(d, 'account')}<dl class="facts"><dt>Standing</dt><dd><span class="standing ${escapeHtml(s.account.status)}">${standing}</span></dd>
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
    `<dt>Offsets</dt><dd>${escapeHtml(grouped(impact.offsets))}</dd></dl>
${chartHtml(d.chart, d.mode)}
</section>`
  );
}

function reviewTable(d: DashboardData): string {
  if (d.review.length === 0) return '<p class="muted">Nothing waits for review.</p>';
  const decide = (o: Offset) =>
    // Rejecting refunds the purchase, which cannot be undone: asked first. Approving places it, as the review would.
    `${action('approve', d, hiddenId(o.id), 'Approve', 'inline')} ${confirmed('reject', d, hiddenId(o.id), 'Reject…', `Reject ${o.id}`)}`;
  const columns: Array<Column<Offset>> = [
    { heading: 'Offset', cls: 'id', cell: offsetLink },
    { heading: 'kg', cls: 'num', cell: (o) => escapeHtml(kg(o.kg)) },
    { heading: 'Amount', cls: 'num', cell: (o) => escapeHtml(dollars(o.amount_cents)) },
    referenceColumn,
    { heading: 'Created', cls: 'when', cell: (o) => escapeHtml(date(o.created)) },
    { heading: 'Decision', cls: 'act', cell: decide },
  ];
  return cardTable('review', columns, d.review);
}

function keysSection(d: DashboardData): string {
  const create =
    `${field('key-mode', 'Mode', `<select id="key-mode" name="mode">${modeOptions(d)}</select>`)} ` +
    field(
      'key-access',
      'Access',
      '<select id="key-access" name="permission"><option value="purchase">purchase</option><option value="read_only">read-only</option></select>',
    );
  return `<section aria-labelledby="keys"><h2 id="keys">API keys</h2>
${noticeAt(d, 'keys')}${createdKey(d)}
${cardTable('keys', keyColumns(d), d.keys)}
${action('key-create', d, create, 'Create key')}
</section>`;
}

function controlsSection(d: DashboardData): string {
  const account = d.status.account;
  // Like the other controls, the setting now is what the form starts from.
  const standings = [
    ['active', 'active'],
    ['suspended', 'suspended'],
    ['unapproved', 'not approved'],
  ].map(([v, label]) => `<option value="${v}"${account.status === v ? ' selected' : ''}>${label}</option>`);
  const standing = field('c-status', 'Account standing', `<select id="c-status" name="status">${standings.join('')}</select>`);
  const value = (form: string, name: string, now: string) => `value="${escapeHtml(fieldValue(d, form, name, now))}"`;
  const rate = `name="rate" inputmode="numeric" required ${value('rate', 'rate', String(account.rate))}`;
  const reviewNow = dollars(account.review_limit_cents).slice(1).replace(/,/g, '');
  const review = `name="amount" inputmode="decimal" required ${value('review-limit', 'amount', reviewNow)}`;
  const limit = `name="requests" required ${value('rate-limit', 'requests', String(account.rate_limit_requests ?? 'off'))}`;
  const clock = `name="duration" required placeholder="2m, 1h, 30d" ${value('clock', 'duration', '')}`;
  const input = (id: string, label: string, attributes: string) => field(id, label, `<input id="${id}" ${attributes}>`);
  return `<section aria-labelledby="controls"><h2 id="controls">Sandbox controls</h2>
${noticeAt(d, 'controls')}<div class="controls">
${action('status', d, standing, 'Set standing')}
${action('rate', d, input('c-rate', 'Rate (millicents per kg)', rate), 'Set rate')}
${action('review-limit', d, input('c-review', 'Review limit (dollars)', review), 'Set review limit')}
${action('rate-limit', d, input('c-limit', `Rate limit (requests per ${duration(account.rate_limit_window_ms)}, or off)`, limit), 'Set rate limit')}
${action('clock', d, input('c-clock', 'Advance the clock by', clock), 'Advance')}
${confirmed('reset', d, '', 'Reset the sandbox…', 'Delete everything and start again')}
</div>
${faultControls(d)}
</section>`;
}
