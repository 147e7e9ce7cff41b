import type { Offset } from '../../api/types.js';
import { dollars } from '../../service/units.js';
import { escapeHtml, htmlDocument } from './html.js';

/**
 * The public certificate page of a placed live offset. It is public, so it shows what the
 * purchase did and never `reference` (the caller's private label, spec part 2). Every value is
 * HTML-escaped even where the model's formats make that look unnecessary: the page must stay
 * safe whatever a future field holds.
 */

export { dollars as formatCents } from '../../service/units.js';
export { escapeHtml } from './html.js';

function formatDate(iso: string): string {
  const d = new Date(iso);
  const date = d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const time = d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
  return `${date}, ${time} UTC`;
}

/** kg as tonnes with up to three decimals, from integers. */
function formatTonnes(kg: number): string {
  const whole = Math.floor(kg / 1000).toLocaleString('en-US');
  const rest = kg % 1000;
  return rest === 0 ? whole : `${whole}.${String(rest).padStart(3, '0').replace(/0+$/, '')}`;
}

const STYLE = `
  :root { color-scheme: light; --ink: #1c2b22; --muted: #5b6b61; --accent: #1f7a4d; --paper: #fbfaf5; --rule: #d9d4c3; }
  * { box-sizing: border-box; }
  body { margin: 0; background: #e9e6da; color: var(--ink); font: 16px/1.5 Georgia, 'Times New Roman', serif; }
  main { max-width: 46rem; margin: 2.5rem auto; padding: 3rem 3.5rem; background: var(--paper);
         border: 1px solid var(--rule); box-shadow: 0 0.5rem 1.5rem rgba(0,0,0,0.08); }
  .seal { width: 5rem; height: 5rem; border-radius: 50%; border: 3px double var(--accent); color: var(--accent);
          display: grid; place-content: center; gap: 0.15rem; font: bold 0.7rem/1 system-ui, sans-serif;
          text-align: center; letter-spacing: 0.08em; float: right; margin: 0 0 1rem 1.5rem; }
  .seal span:first-child { font-size: 1.05rem; letter-spacing: 0; }
  .kicker { font: 600 0.8rem system-ui, sans-serif; letter-spacing: 0.18em; text-transform: uppercase; color: var(--accent); margin: 0; }
  h1 { font-size: 2rem; margin: 0.3rem 0 1.5rem; font-weight: normal; }
  .amount { font-size: 3rem; line-height: 1.1; margin: 0; color: var(--accent); }
  .amount small { font-size: 1.2rem; color: var(--ink); }
  .lede { font-size: 1.1rem; margin: 0.75rem 0 2rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.45rem 1.5rem; margin: 0; padding: 1.25rem 0 0;
       border-top: 1px solid var(--rule); }
  dt { font: 600 0.8rem/1.9 system-ui, sans-serif; text-transform: uppercase; letter-spacing: 0.08em; color: var(--muted); }
  dd { margin: 0; }
  code { font: 0.95rem ui-monospace, 'DejaVu Sans Mono', monospace; word-break: break-all; }
  footer { margin-top: 2rem; font: 0.85rem system-ui, sans-serif; color: var(--muted); }
  @media print {
    @page { size: A4; margin: 2cm; }
    body { background: #fff; font-size: 12pt; }
    main { margin: 0; max-width: none; border: none; box-shadow: none; padding: 0; background: #fff; }
    .screen-only { display: none; }
    a { color: inherit; text-decoration: none; }
  }
`;

function page(title: string, body: string): string {
  return htmlDocument(title, `<style>${STYLE}</style>`, `<main>\n${body}\n</main>`);
}

/** The certificate of a placed offset. `certificateId` is the id in the page's address. */
export function certificatePage(offset: Offset, certificateId: string): string {
  const placed = offset.placed ?? offset.created;
  const kg = offset.kg.toLocaleString('en-US');
  const body = `<div class="seal" aria-hidden="true"><span>CO<sub>2</sub></span><span>RETIRED</span></div>
<p class="kicker">Carbon offset certificate</p>
<h1>Carbon credits bought and retired</h1>
<p class="amount">${escapeHtml(kg)} <small>kg of CO<sub>2</sub></small></p>
<p class="lede">Carbon credits for ${escapeHtml(kg)} kg (${escapeHtml(formatTonnes(offset.kg))} t) of carbon dioxide were bought and retired on
<time datetime="${escapeHtml(placed)}">${escapeHtml(formatDate(placed))}</time>.</p>
<dl>
  <dt>Placed</dt><dd><time datetime="${escapeHtml(placed)}">${escapeHtml(formatDate(placed))}</time></dd>
  <dt>Quantity</dt><dd>${escapeHtml(kg)} kg CO<sub>2</sub></dd>
  <dt>Amount</dt><dd>${escapeHtml(dollars(offset.amount_cents))} ${escapeHtml(offset.currency.toUpperCase())}</dd>
  <dt>Rate</dt><dd>${escapeHtml(dollars(offset.rate_millicents_per_kg))} per tonne</dd>
  <dt>Offset</dt><dd><code>${escapeHtml(offset.id)}</code></dd>
  <dt>Certificate</dt><dd><code>${escapeHtml(certificateId)}</code></dd>
</dl>
<footer>Issued by the carbon offsets service. <span class="screen-only">Use your browser's Print command for a paper copy.</span></footer>`;
  return page(`Carbon offset certificate: ${kg} kg CO2`, body);
}

/** The page for an address that names no certificate. */
export function certificateNotFoundPage(certificateId: string): string {
  const shown = certificateId.length > 80 ? `${certificateId.slice(0, 80)}…` : certificateId;
  const body = `<p class="kicker">Carbon offset certificate</p>
<h1>Certificate not found</h1>
<p class="lede">There is no certificate <code>${escapeHtml(shown)}</code>. Check the address: certificates exist only for placed live offsets.</p>`;
  return page('Certificate not found', body);
}
