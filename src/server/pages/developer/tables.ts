import type { Offset } from '../../../api/types.js';
import { shownReference } from '../../../service/keys.js';
import type { SandboxKey } from '../../../service/sandbox.js';
import { dollars } from '../../../service/units.js';
import { escapeHtml, escapeText } from '../html.js';
import { viewOf } from './dashboard-data.js';
import { confirmed, type DashboardData, date, idText, kg } from './views.js';

/**
 * A table of records (offsets, the review queue, keys): a table on a wide screen; on a phone each
 * row a card (assets.ts: `table.cards`), its cells named by `data-label` and placed by class, so
 * nothing scrolls sideways. A new view's table is one more call, with its own columns.
 */
export interface Column<T> {
  /** The column's heading (plain text). */
  heading: string;
  /** Where the cell goes in a card: `id` and `state` on the first line, `num` on the second, then the rest; `act` holds buttons. */
  cls: 'id' | 'state' | 'num' | 'wide' | 'when' | 'act' | 'plain';
  cell(row: T): string;
}

export function cardTable<T>(name: string, columns: ReadonlyArray<Column<T>>, rows: readonly T[]): string {
  const head = columns.map((c) => `<th scope="col" class="${c.cls}">${escapeHtml(c.heading)}</th>`).join('');
  const row = (r: T) =>
    `<tr>${columns.map((c) => `<td class="${c.cls}" data-label="${escapeHtml(c.heading)}">${c.cell(r)}</td>`).join('')}</tr>`;
  return `<div class="scroll"><table class="cards ${name}"><thead><tr>${head}</tr></thead><tbody>${rows.map(row).join('')}</tbody></table></div>`;
}

export const hiddenId = (id: string) => `<input type="hidden" name="id" value="${escapeHtml(id)}">`;
export const offsetLink = (o: Offset) => `<a href="/offsets/${encodeURIComponent(o.id)}">${idText(o.id)}</a>`;
const status = (s: string) => `<span class="status ${escapeHtml(s)}">${escapeHtml(s)}</span>`;
/** An offset's reference, as the caller typed it but for an API key in it, masked as the journal masks it (— for none). */
export const referenceColumn: Column<Offset> = {
  heading: 'Reference',
  cls: 'wide',
  cell: (o) => (o.reference === null ? '<span class="muted">—</span>' : escapeText(shownReference(o.reference))),
};

export function offsetColumns(d: DashboardData): Array<Column<Offset>> {
  // The list the form is on (its filter and page), for the redirect after it to return to.
  const shown = viewOf(d.filter);
  const view = shown === '' ? '' : `<input type="hidden" name="view" value="${escapeHtml(shown)}">`;
  return [
    { heading: 'Offset', cls: 'id', cell: offsetLink },
    { heading: 'Status', cls: 'state', cell: (o) => status(o.status) },
    { heading: 'kg', cls: 'num', cell: (o) => escapeHtml(kg(o.kg)) },
    { heading: 'Amount', cls: 'num', cell: (o) => escapeHtml(dollars(o.amount_cents)) },
    referenceColumn,
    { heading: 'Created', cls: 'when', cell: (o) => escapeHtml(date(o.created)) },
    {
      heading: 'Action',
      cls: 'act',
      // Failing refunds the purchase, which cannot be undone: asked first, as revoking a key is.
      cell: (o) => (o.status === 'processing' ? confirmed('fail', d, hiddenId(o.id) + view, 'Fail…', `Fail ${o.id}`) : ''),
    },
  ];
}

export function keyColumns(d: DashboardData): Array<Column<SandboxKey>> {
  const state = (k: SandboxKey) => {
    const which = k.default === null ? '' : ` <span class="muted">(default ${escapeHtml(k.default.replace('_', '-'))})</span>`;
    // The date on one line (a desktop row stays one line high; a card puts such a state under the id: assets.ts).
    return `${k.revoked === null ? status('active') : `${status('revoked')} <span class="nw">${escapeHtml(date(k.revoked))}</span>`}${which}`;
  };
  const revoke = (k: SandboxKey) => (k.revoked === null ? confirmed('key-revoke', d, hiddenId(k.id), 'Revoke…', `Revoke ${k.id}`) : '');
  return [
    { heading: 'Key ID', cls: 'id', cell: (k) => idText(k.id) },
    { heading: 'State', cls: 'state', cell: state },
    { heading: 'Mode', cls: 'plain', cell: (k) => escapeHtml(k.mode) },
    { heading: 'Access', cls: 'plain', cell: (k) => (k.permission === 'read_only' ? '<span class="nw">read-only</span>' : 'purchase') },
    { heading: 'Secret (masked)', cls: 'wide', cell: (k) => `<code class="masked">${escapeHtml(k.masked)}</code>` },
    { heading: 'Created', cls: 'when', cell: (k) => escapeHtml(date(k.created)) },
    { heading: 'Action', cls: 'act', cell: revoke },
  ];
}
