import type { Offset } from '../../../api/types.js';
import { shownReference } from '../../../service/keys.js';
import { dollars, ratePerKg } from '../../../service/units.js';
import { escapeHtml, escapeText } from '../html.js';
import { hiddenId } from './tables.js';
import { action, confirmed, type DashboardData, date, idText, kg, layout, pageHeader } from './views.js';

/**
 * One offset's page (`/offsets/{id}`): what the API answers of it, and what can be done to it
 * here, as on the dashboard: one waiting for review is said to, with Approve and Reject (asked
 * first: it refunds); another still processing can be failed (asked first too).
 */
export function offsetPage(o: Offset, csrf: string, awaitsReview: boolean): string {
  const row = (k: string, v: string) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`;
  const mode = o.livemode ? 'live' : 'test';
  const status = `<span class="status ${escapeHtml(o.status)}">${escapeHtml(o.status)}</span>${awaitsReview ? ' — waits for review (above the review limit)' : ''}`;
  return layout(
    `carbon sandbox: offset ${o.id}`,
    `${pageHeader(`Offset ${idText(o.id)}`, csrf, `/?mode=${mode}`)}
<main><dl class="facts">
${row('Status', status)}${row('Mode', mode)}${row('kg', escapeHtml(kg(o.kg)))}
${row('Amount', escapeHtml(dollars(o.amount_cents)))}${row('Rate', escapeHtml(ratePerKg(o.rate_millicents_per_kg)))}
${row('Requested', escapeHtml(o.requested.kg !== null ? kg(o.requested.kg) : dollars(o.requested.amount_cents ?? 0)))}${row('Reference', o.reference === null ? '—' : escapeText(shownReference(o.reference)))}
${row('Created', escapeHtml(date(o.created)))}${row('Placed', escapeHtml(date(o.placed)))}
${row('Certificate', o.certificate_url === null ? '<span class="muted">none (only placed live offsets have one)</span>' : `<a href="${escapeHtml(o.certificate_url)}">${escapeHtml(o.certificate_url)}</a>`)}
</dl>${decisions(o, { csrf, mode }, awaitsReview)}</main>`,
  );
}

/** What can be done to it: Approve or Reject one waiting for review, Fail one otherwise processing. */
function decisions(o: Offset, d: Pick<DashboardData, 'csrf' | 'mode'>, awaitsReview: boolean): string {
  if (o.status !== 'processing') return '';
  const id = hiddenId(o.id);
  const acts = awaitsReview
    ? `${action('approve', d, id, 'Approve', 'inline')} ${confirmed('reject', d, id, 'Reject…', `Reject ${o.id}`)}`
    : confirmed('fail', d, id, 'Fail…', `Fail ${o.id}`);
  return `<div class="decisions">${acts}</div>`;
}
