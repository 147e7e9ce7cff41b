import type { Mode } from '../../api/types.js';
import { asTyped, escapeHtml, escapeText, htmlDocument } from '../../server/pages/html.js';
import { NO_REFERENCE } from '../commands/report/index.js';
import { periodsInUtc } from '../commands/report/periods.js';
import type { ReportRow } from '../commands/report/run.js';
import { dollars, grouped } from './format.js';
import { SANDBOX_DETAIL, SANDBOX_HEADLINE } from './sandbox-note.js';
import type { Weight } from './weight.js';

/**
 * `carbon report --format html`: one self-contained page to hand on (no script, no external
 * file; the chart an inline SVG), printable on A4 or Letter and readable on a 390 px phone: the
 * same rows and totals as every other format, in the unit asked for, the span, the mode, and when
 * it was made. Made on the local engine, it says first, in a band that prints, that the purchases
 * were the sandbox's, and a watermark says SANDBOX on every printed page.
 */
export interface HtmlReport {
  by: string;
  rows: readonly ReportRow[];
  total: ReportRow;
  mode: Mode;
  /** Made from the local engine's ledger: the sandbox's purchases, not real ones. */
  sandbox: boolean;
  weight: Weight;
  since: string | null;
  until: string | null;
  /** ISO time the report was made. */
  made: string;
  /** --prefix-sep: the references grouped by the part before it (the page says so). */
  prefixSep?: string | undefined;
}

const PLACED = '#1d6b34';
/** The narrowest a bar that is not zero is drawn, in the chart's units (400 across). */
const MIN_BAR = 4;
const PROCESSING = '#9a5b00';

const STYLE = `<style>
@page { size: auto; margin: 16mm 14mm; }
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a; background: #fff; margin: 2rem auto; max-width: 56rem; padding: 0 1rem; }
.sandbox { margin: 0 0 1.25rem; padding: .6rem .8rem; background: #fff3c4; color: #3d2e00; border: 3px solid #8a6d00; print-color-adjust: exact; -webkit-print-color-adjust: exact; }
.sandbox strong { text-transform: uppercase; letter-spacing: .05em; }
tbody th, tfoot th { white-space: nowrap; }
tbody th.reference { white-space: normal; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
.meta { color: #444; margin: 0 0 1.5rem; }
.meta span + span::before { content: " · "; }
.mode-live { color: #a1001a; font-weight: 600; }
figure { margin: 0 0 1.5rem; }
figcaption { color: #444; margin-top: .25rem; }
figure svg { max-width: 32rem; display: block; }
svg text { font: 11px system-ui, sans-serif; fill: #1a1a1a; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding-bottom: .5rem; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid #d0d0d0; }
th { text-align: left; background: #f2f2f2; }
tbody th, tfoot th { background: none; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tfoot th, tfoot td { font-weight: 700; border-top: 2px solid #1a1a1a; border-bottom: none; }
.note { color: #444; margin-top: 1rem; font-size: .9rem; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: -.05em; print-color-adjust: exact; -webkit-print-color-adjust: exact; }
@media (max-width: 30rem) {
  body { margin: 1rem auto; padding: 0 .5rem; font-size: 13px; }
  table { font-size: 12px; }
  th, td { padding: .3rem .2rem; }
}
/* A row a card: its period, then each figure on a line of its own after its column's name. Six
   columns side by side ran 520 px wide on a phone once a month held 2,000,000,000 kg for
   $80,000,000.00, and 730 px at 40,000,000,000 kg: so up to a tablet's width (a laptop at 200 %). */
@media (max-width: 48rem) {
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table, caption, tbody, tfoot, tr { display: block; }
  tr { padding: .3rem 0; border-bottom: 1px solid #d0d0d0; }
  tfoot tr { border-top: 2px solid #1a1a1a; border-bottom: none; }
  tr > th, tr > td { display: flex; justify-content: space-between; gap: 1rem; padding: .1rem .2rem; border: none; }
  td::before { color: #444; font-weight: 400; }
}
@media print { body { margin: 0; max-width: none; } figure svg, tr { break-inside: avoid; } tfoot { display: table-row-group; } }
/* The band is on the first printed page only; fixed to the page, the watermark is printed on every
   one, as the certificate's is (on screen the band says it where the report starts). */
.watermark { display: none; }
@media print {
  .watermark { display: grid; position: fixed; inset: 0; place-content: center; pointer-events: none; z-index: 1;
               font: bold 7rem/1 system-ui, sans-serif; letter-spacing: .1em; color: rgba(138, 109, 0, .14); transform: rotate(-30deg); }
}
</style>`;

/**
 * A horizontal bar a row: placed kg, then processing kg, scaled to the largest row; values at the
 * end. Either part, when not zero, is at least MIN_BAR wide (3.7 px on a 390 px phone): 1 kg beside
 * 100,000 would be 0.002 units, nothing to see; a period without purchases has no bar. 400 units wide, shown at most 32rem wide: its 11-unit text reads at 10 px or more on a 390 px
 * phone (a 640-unit chart shrank it to 7) and at 14 px on a desktop. The bars leave room for the
 * widest value after them: SVG cannot measure its text, so each character is given 7 units, a
 * digit's width in the widest common sans-serif (DejaVu Sans: 0.64 em of 11); "2,000,000,000 kg"
 * past a full bar ran off the edge.
 */
function chart(rows: readonly ReportRow[], by: string, w: Weight): string {
  const label = 120;
  const width = 400;
  const value = (r: ReportRow) => `${w.text(r.kg)} ${w.unit}`;
  const room = 6 + 7 * Math.max(...rows.map((r) => value(r).length));
  const barMax = width - label - Math.min(180, Math.max(84, room));
  const rowHeight = 24;
  const max = Math.max(1, ...rows.map((r) => r.kg));
  const scale = (kg: number) => (kg === 0 ? 0 : Math.max(MIN_BAR, (kg / max) * barMax));

  const bars = rows.map((r, k) => {
    // 4 units above the first row and below the last, none between the pieces.
    const y = (k % SEGMENT_ROWS) * rowHeight + (k < SEGMENT_ROWS ? 4 : 0);
    const placed = scale(r.placed_kg);
    const processing = scale(r.processing_kg);
    return (
      `<g><text x="${label - 8}" y="${y + 15}" text-anchor="end"${r.group === null ? ' font-style="italic"' : ''}>${escapeHtml(cutLabel(asTyped(r.group ?? NO_REFERENCE), label - 8))}</text>` +
      `<rect x="${label}" y="${y + 2}" width="${placed.toFixed(1)}" height="${rowHeight - 8}" fill="${PLACED}"/>` +
      `<rect x="${(label + placed).toFixed(1)}" y="${y + 2}" width="${processing.toFixed(1)}" height="${rowHeight - 8}" fill="${PROCESSING}"/>` +
      `<text x="${(label + placed + processing + 6).toFixed(1)}" y="${y + 15}">${value(r)}</text></g>`
    );
  });
  const described = rows.map((r) => `${r.group ?? 'bought without a reference'}: ${w.text(r.kg)} ${w.unit}`).join('; ');
  // The chart in pieces of SEGMENT_ROWS rows, one under the other with no gap: a printed page
  // breaks between two pieces, never through a row. One tall SVG was cut through a row where a
  // page ended, and kept whole it moved to page 2 and left page 1 empty. The first names the whole.
  const names = `<title id="chart-title">${w.unit === 'kg' ? 'kg' : 'tonnes'} of CO2 offset per ${escapeHtml(by)}</title>
<desc id="chart-desc">${escapeText(described)}</desc>
`;
  const svgs: string[] = [];
  for (let at = 0; at < bars.length; at += SEGMENT_ROWS) {
    const part = bars.slice(at, at + SEGMENT_ROWS);
    const height = part.length * rowHeight + (at === 0 ? 4 : 0) + (at + SEGMENT_ROWS >= bars.length ? 4 : 0);
    const role = at === 0 ? 'role="img" aria-labelledby="chart-title chart-desc"' : 'aria-hidden="true"';
    svgs.push(`<svg ${role} viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet">
${at === 0 ? names : ''}${part.join('\n')}
</svg>`);
  }
  return svgs.join('\n');
}

/** The rows of one piece of the chart: ten, 240 units tall (about 420 px printed on A4, under half a page). */
const SEGMENT_ROWS = 10;

/**
 * A label cut to `room` units of the chart (its text is 11 units high), by what a reader sees as
 * one character (a flag, an emoji: a cut by UTF-16 unit halved one into '�'), each weighed as it is
 * drawn, since SVG cannot measure: a full-width one (CJK, an emoji, a flag) and M, W, @, % 11 units,
 * another capital, a digit, m or w 8, any other 6.5 (17 of each fitted before; "MARKETING-EVENTS-BERLIN" and CJK were clipped at
 * their start). Isolated (U+2068 … U+2069), so a right-to-left label's "…" ends it on its left.
 */
function cutLabel(text: string, room: number): string {
  const shown = Array.from(GRAPHEMES.segment(text), (s) => s.segment);
  const widths = shown.map((g) => (WIDE.test(g) ? 11 : /[A-Z0-9mw]/.test(g) ? 8 : 6.5));
  if (widths.reduce((sum, w) => sum + w, 0) <= room) return `\u2068${text}\u2069`;
  // What fits with the "…" (11 units) after it.
  let kept = 0;
  for (let used = 11; kept < shown.length && used + widths[kept]! <= room; kept++) used += widths[kept]!;
  return `\u2068${shown.slice(0, kept).join('')}…\u2069`;
}
const WIDE = /[MW@%\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60]|\p{Extended_Pictographic}|\p{Regional_Indicator}/u;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** On a phone each figure's card line starts with its column's heading (STYLE), in the unit asked for. */
function phoneLabels(w: Weight): string {
  const headings = ['offsets', w.heading(), w.heading('placed'), w.heading('processing'), 'amount'];
  const rules = headings.map((h, i) => `td:nth-of-type(${i + 1})::before { content: "${h}"; }`);
  return `<style>@media (max-width: 48rem) { ${rules.join(' ')} }</style>`;
}

/** A span's end for people: a day as it is, an age's moment to the minute (`2026-11-23 13:42 UTC`), as `made` is. */
const readable = (end: string) => end.replace(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d):[\d.]+Z$/, '$1 $2 UTC');

export function reportHtml(r: HtmlReport): string {
  const span =
    r.since === null && r.until === null
      ? 'every purchase'
      : `${r.since === null ? 'the first purchase' : readable(r.since)} to ${r.until === null ? 'today' : readable(r.until)}`;
  const by = r.prefixSep === undefined ? r.by : `${r.by}, the part before "${r.prefixSep}"`;
  const title = `Carbon offsets by ${by}, ${span}`;
  const w = r.weight;
  const cells = (row: ReportRow) =>
    `<td class="n">${grouped(row.offsets)}</td><td class="n">${w.text(row.kg)}</td><td class="n">${w.text(row.placed_kg)}</td><td class="n">${w.text(row.processing_kg)}</td><td class="n">${dollars(row.amount_cents)}</td>`;
  // A month, week or quarter never wraps; a reference may, anywhere.
  const rowClass = r.by === 'reference' ? ' class="reference"' : '';
  // The offsets without a reference in italics, apart from a reference that reads "(no reference)".
  const name = (row: ReportRow) => (row.group === null ? `<em>${escapeHtml(NO_REFERENCE)}</em>` : escapeText(row.group));
  const body = r.rows.map((row) => `<tr><th scope="row"${rowClass}>${name(row)}</th>${cells(row)}</tr>`).join('\n');
  const unitName = w.unit === 'kg' ? 'kg' : 'tonnes';
  const utc = periodsInUtc(r.by);
  const made = r.made.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const figure =
    r.total.offsets === 0
      ? '<p>No purchases in this span.</p>'
      : `<figure>${chart(r.rows, r.by, w)}<figcaption><span class="swatch" style="background:${PLACED}"></span>placed <span class="swatch" style="background:${PROCESSING}"></span>processing: ${unitName} per ${escapeHtml(r.by)}</figcaption></figure>`;
  const band = r.sandbox
    ? `<p class="sandbox" role="note"><strong>${escapeHtml(SANDBOX_HEADLINE)}</strong> ${escapeHtml(SANDBOX_DETAIL)}</p>\n`
    : '';
  const watermark = r.sandbox ? '<div class="watermark" aria-hidden="true">SANDBOX</div>\n' : '';
  return htmlDocument(
    // A tab, and a printed page's header, say whose report it is before anything else.
    r.sandbox ? `Sandbox: ${title}` : title,
    STYLE + phoneLabels(w),
    `${watermark}<main>
${band}<h1>Carbon offsets by ${escapeHtml(by)}</h1>
<p class="meta"><span>Span: ${escapeHtml(span)}</span><span class="mode-${r.mode}">${r.mode === 'live' ? 'Live mode' : 'Test mode (simulated purchases)'}</span><span>Made <time datetime="${escapeHtml(r.made)}">${escapeHtml(made)}</time></span></p>
${figure}
<table>
<caption>${w.text(r.total.kg)} ${w.unit} bought for ${dollars(r.total.amount_cents)} in ${grouped(r.total.offsets)} purchase${r.total.offsets === 1 ? '' : 's'}: ${w.text(r.total.placed_kg)} ${w.unit} placed, ${w.text(r.total.processing_kg)} ${w.unit} processing</caption>
<thead><tr><th scope="col">${escapeHtml(r.by)}</th><th scope="col" class="n">offsets</th><th scope="col" class="n">${w.heading()}</th><th scope="col" class="n">${w.heading('placed')}</th><th scope="col" class="n">${w.heading('processing')}</th><th scope="col" class="n">amount</th></tr></thead>
<tbody>
${body}
</tbody>
<tfoot><tr><th scope="row">Total</th>${cells(r.total)}</tr></tfoot>
</table>
<p class="note">Placed and processing offsets are counted; refunded ones bought nothing and are left out. ${utc ? `${utc[0]!.toUpperCase()}${utc.slice(1)}. ` : ''}Amounts in US dollars; ${unitName} of CO2${w.unit === 't' ? ' (1 t = 1,000 kg)' : ''}. Made by carbon report.</p>
</main>`,
  );
}
