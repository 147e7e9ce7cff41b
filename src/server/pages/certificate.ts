import type { Offset } from '../../api/types.js';
import { isoTime } from '../../platform/iso-time.js';
import { dollars, grouped, longDay } from '../../service/units.js';
import { escapeHtml, escapeText, htmlDocument } from './html.js';

/**
 * The public certificate page of a placed live offset, as the local model (the sandbox) issues it:
 * served by `carbon serve`, and written by `carbon open` on the local engine. Nothing the sandbox
 * issues may pass for the real thing, so the page says SANDBOX first and throughout, in words a
 * person who never saw carbon reads, on screen and on paper: a band above everything, a seal that
 * says it, a watermark on every printed page, and a heading that says the purchase was simulated.
 * (The remote engine's certificates are the service's own pages, which carbon never renders.)
 * It is public, so it shows what the purchase did and never `reference` (the caller's private
 * label, spec part 2). Every value is HTML-escaped even where the model's formats make that look
 * unnecessary: the page must stay safe whatever a future field holds.
 */

/** The band at the top of every page of the sandbox's certificates, in a landmark of its own (a screen reader's list of them reaches it). */
const SANDBOX_CERTIFICATE_BAND =
  '<div role="region" aria-label="Sandbox"><p class="sandbox-band" role="note"><strong>Sandbox — not a real purchase.</strong> No carbon credits were bought or retired, ' +
  "and no money was paid. This page was made by carbon's sandbox, a stand-in for the carbon offsets service used for testing: it certifies nothing.</p></div>";

export { dollars as formatCents } from '../../service/units.js';
export { escapeHtml } from './html.js';

function formatDate(iso: string): string {
  const d = new Date(iso);
  return `${longDay(d)}, ${isoTime(d.getTime()).slice(11, 16)} UTC`;
}

/** kg as tonnes with up to three decimals, from integers. */
function formatTonnes(kg: number): string {
  const whole = grouped(Math.floor(kg / 1000));
  const rest = kg % 1000;
  return rest === 0 ? whole : `${whole}.${String(rest).padStart(3, '0').replace(/0+$/, '')}`;
}

const STYLE = `
  :root { color-scheme: light; --ink: #1c2b22; --muted: #5b6b61; --accent: #1f7a4d; --paper: #fbfaf5; --rule: #d9d4c3; }
  * { box-sizing: border-box; }
  body { margin: 0; background: #e9e6da; color: var(--ink); font: 16px/1.5 Georgia, 'Times New Roman', serif; }
  main { max-width: 46rem; margin: 2.5rem auto; padding: 3rem 3.5rem; background: var(--paper);
         border: 1px solid var(--rule); box-shadow: 0 0.5rem 1.5rem rgba(0,0,0,0.08); }
  .seal { width: 6.5rem; height: 6.5rem; border-radius: 50%; border: 3px double var(--accent); color: var(--accent);
          display: grid; place-content: center; gap: 0.15rem; font: bold 0.7rem/1 system-ui, sans-serif;
          text-align: center; letter-spacing: 0.08em; float: right; margin: 0 0 1rem 1.5rem; }
  .seal span:first-child { font-size: 0.95rem; letter-spacing: 0; }
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
  .sandbox-band { max-width: 46rem; margin: 1.5rem auto 0; padding: 0.75rem 1rem; background: #fff3c4; color: #3d2e00;
                  border: 3px solid #8a6d00; font: 1rem/1.45 system-ui, sans-serif; print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  .sandbox-band strong { text-transform: uppercase; letter-spacing: 0.05em; }
  .seal.sandbox { border-color: #8a6d00; color: #8a6d00; }
  .watermark { position: fixed; inset: 0; display: grid; place-content: center; pointer-events: none; z-index: 1;
               font: bold 7rem/1 system-ui, sans-serif; letter-spacing: 0.1em; color: rgba(138, 109, 0, 0.10); transform: rotate(-30deg); }
  @media (max-width: 40rem) {
    main { margin: 1rem 0.5rem; padding: 1.5rem 1.25rem; }
    .sandbox-band { margin: 0.5rem 0.5rem 0; }
    .watermark { font-size: 4rem; }
  }
  /* A phone: the seal above the heading, which beside it was left a word a line ("A" alone). */
  @media (max-width: 30rem) {
    .seal { float: none; margin: 0 0 1rem; }
  }
  @media print {
    @page { size: A4; margin: 2cm; }
    body { background: #fff; font-size: 12pt; }
    main { margin: 0; max-width: none; border: none; box-shadow: none; padding: 0; background: #fff; }
    .sandbox-band { max-width: none; margin: 0 0 1.5rem; }
    .watermark { color: rgba(138, 109, 0, 0.14); }
    .screen-only { display: none; }
    a { color: inherit; text-decoration: none; }
  }
`;

function page(title: string, body: string): string {
  const watermark = '<div class="watermark" aria-hidden="true">SANDBOX</div>';
  return htmlDocument(title, `<style>${STYLE}</style>`, `${SANDBOX_CERTIFICATE_BAND}\n${watermark}\n<main>\n${body}\n</main>`);
}

/** The certificate of a placed offset. `certificateId` is the id in the page's address. */
export function certificatePage(offset: Offset, certificateId: string): string {
  const placed = offset.placed ?? offset.created;
  const kg = grouped(offset.kg);
  const placedText = formatDate(placed);
  const body = `<div class="seal sandbox" aria-hidden="true"><span>SANDBOX</span><span>NOT VALID</span></div>
<p class="kicker">Sandbox certificate — for testing only</p>
<h1>A simulated purchase of carbon credits</h1>
<p class="amount">${escapeHtml(kg)} <small>kg of CO<sub>2</sub>, simulated</small></p>
<p class="lede">carbon's sandbox recorded a simulated purchase of carbon credits for ${escapeHtml(kg)} kg (${escapeHtml(formatTonnes(offset.kg))} t) of carbon dioxide on
<time datetime="${escapeHtml(placed)}">${escapeHtml(placedText)}</time>. No credits were bought or retired.</p>
<dl>
  <dt>Placed</dt><dd><time datetime="${escapeHtml(placed)}">${escapeHtml(placedText)}</time></dd>
  <dt>Quantity</dt><dd>${escapeHtml(kg)} kg CO<sub>2</sub></dd>
  <dt>Amount</dt><dd>${escapeHtml(dollars(offset.amount_cents))} ${escapeHtml(offset.currency.toUpperCase())}</dd>
  <dt>Rate</dt><dd>${escapeHtml(dollars(offset.rate_millicents_per_kg))} per tonne</dd>
  <dt>Offset</dt><dd><code>${escapeHtml(offset.id)}</code></dd>
  <dt>Certificate</dt><dd><code>${escapeHtml(certificateId)}</code></dd>
</dl>
<footer>Issued by carbon's sandbox, not by the carbon offsets service: it has no value and proves nothing. <span class="screen-only">Use your browser's Print command for a paper copy.</span></footer>`;
  return page(`SANDBOX certificate (not a real purchase): ${kg} kg CO2`, body);
}

/** The page for an address that names no certificate. */
export function certificateNotFoundPage(certificateId: string): string {
  const shown = certificateId.length > 80 ? `${certificateId.slice(0, 80)}…` : certificateId;
  const body = `<p class="kicker">Sandbox certificate</p>
<h1>Certificate not found</h1>
<p class="lede">There is no certificate <code>${escapeText(shown)}</code>. Check the address: certificates exist only for placed live offsets.</p>`;
  return page('Certificate not found (sandbox)', body);
}
