import { requestId } from '../../../service/keys.js';
import type { Reply } from '../../reply.js';
import type { Incoming } from '../../requests.js';
import { tickStep } from './chart.js';
import { REQUESTS_CSS } from './requests-view.js';

/**
 * A date is at most 3.6em wide ("Nov 30"); with a gap, ticks need 4em apart. Where the ticks' row
 * is too narrow for that (a phone, a wide scale beside it), every other tick goes, then every fourth.
 */
function sparseTicks(span: number): string {
  const apart = (ticks: number) => ((4 * span) / (tickStep(span) * ticks)).toFixed(2);
  return `@container (max-width: ${apart(1)}em) { .days${span} .ticks .odd { display: none; } }
@container (max-width: ${apart(2)}em) { .days${span} .ticks .even { display: none; } }`;
}

/**
 * The page's one stylesheet and one script, served from /_page/ (the Content-Security-Policy
 * allows no inline script or style). The script only enhances: copy buttons, a form sent once however
 * often it is clicked, and (with ?refresh=SECONDS) a refresh of the page while the tab is visible and
 * no form field has focus.
 */
const CSS = `
:root { color-scheme: light; --ink: #17221b; --muted: #4d5c53; --accent: #1b6b43; --rule: #d6d9d2; --bg: #f6f7f3; --bad: #a3261b; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; gap: 1rem; align-items: center; justify-content: space-between; padding: 0.75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--rule); flex-wrap: wrap; }
header h1 { font-size: 1.25rem; margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
main.narrow { max-width: 36rem; padding-top: 3rem; }
section { background: #fff; border: 1px solid var(--rule); border-radius: 6px; padding: 0.5rem 1rem 1rem; margin: 1rem 0; }
h2 { font-size: 1.05rem; }
/* A section opened by its address (/#offsets, a filter's answer) shows its top edge, not its heading flush with the screen's. */
h2[id], h3[id] { scroll-margin-top: 1.5rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--rule); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.when { white-space: nowrap; }
details.confirm > summary { white-space: nowrap; } details.confirm button { overflow-wrap: anywhere; } /* its "Fail off_…" breaks in its column */
/* A state keeps its date on its line on a wide desktop only (a revoked key's row one line high); a default's label after a date goes under it: tables fit. */
@media (min-width: 75rem) { td.state { white-space: nowrap; } } td.state .nw { white-space: inherit; } td.state:has(.nw) .muted { display: block; }
td.wide { overflow-wrap: anywhere; }
code { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.9em; }
.sandbox-band { margin: 0; padding: 0.45rem 1.5rem; background: #fff3c4; color: #4a3700; border-bottom: 2px solid #b58900; font-size: 0.95rem; print-color-adjust: exact; -webkit-print-color-adjust: exact; }
.sandbox-band strong { text-transform: uppercase; letter-spacing: 0.06em; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1.5rem; }
.pages { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.mode, .status, .standing { font-size: 0.8rem; padding: 0.05rem 0.45rem; border-radius: 999px; border: 1px solid currentColor; }
.mode.live, .standing.suspended, .standing.unapproved, .status.refunded { color: var(--bad); }
.mode.test, .status.placed, .standing.active { color: var(--accent); }
.status.processing { color: #6b4e00; }
.muted { color: var(--muted); }
.notice { padding: 0.5rem 0.75rem; border-radius: 4px; overflow-wrap: anywhere; }
.nw { white-space: nowrap; }
.notice.ok { background: #e3f1e8; }
.notice.error { background: #f8e1de; color: var(--bad); }
/* Opened at an action's notice (#notice), the heading above it shows too; focused as the page opens, it is outlined. */
.notice[id] { scroll-margin-top: 4.5rem; }
.notice:focus { outline: 2px solid currentColor; outline-offset: 2px; }
form { margin: 0.4rem 0; }
form.inline { display: inline; }
.controls form { padding: 0.25rem 0; border-bottom: 1px dashed var(--rule); }
fieldset { border: 1px solid var(--rule); border-radius: 4px; display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; }
.field { display: inline-flex; align-items: baseline; gap: 0.35rem; white-space: nowrap; margin-right: 0.5rem; }
.field label { white-space: nowrap; }
label.check { white-space: nowrap; }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
button { font: inherit; padding: 0.2rem 0.7rem; border: 1px solid #7a8a80; border-radius: 4px; background: #fff; color: var(--ink); cursor: pointer; }
button:hover, button:focus-visible { border-color: var(--ink); }
.danger button, button.danger { color: var(--bad); border-color: var(--bad); }
input, select { font: inherit; padding: 0.15rem 0.35rem; }
.scroll { overflow-x: auto; max-width: 100%; position: relative; }
code { white-space: nowrap; }
.chart { margin: 0.75rem 0 0.5rem; }
.chart figcaption { font-weight: 600; margin-bottom: 2rem; }
.plot { display: grid; grid-template-columns: max-content 1fr; column-gap: 0.4rem; padding-right: 1.5rem; }
.plot ol { list-style: none; margin: 0; padding: 0; }
.scale { grid-row: 1; grid-column: 1; height: 160px; display: flex; flex-direction: column; justify-content: space-between; font-size: 0.75rem; color: var(--muted); text-align: right; line-height: 1; }
.bars { grid-row: 1; grid-column: 2; height: 160px; display: grid; border-left: 1px solid var(--muted); border-bottom: 1px solid var(--ink); background: linear-gradient(var(--rule) 1px, transparent 1px) 0 0 / 100% 50%; }
.ticks { grid-row: 2; grid-column: 2; display: grid; font-size: 0.75rem; color: var(--muted); padding-top: 0.2rem; container-type: inline-size; }
/* A tick centred under its day's bar, as wide as its date: the plot keeps room beside the bars for half of one. */
.ticks li { grid-row: 1; display: flex; justify-content: center; white-space: nowrap; }
.day { position: relative; height: 160px; min-width: 0; }
.day svg { display: block; width: 100%; height: 160px; }
.day rect { fill: var(--accent); }
.day:hover rect, .day:focus rect { fill: var(--ink); }
.day:focus { outline: 2px solid var(--ink); outline-offset: 1px; }
.day .value { display: none; position: absolute; top: -1.75rem; left: 0; white-space: nowrap; background: var(--ink); color: #fff; font-size: 0.8rem; padding: 0.1rem 0.4rem; border-radius: 3px; z-index: 1; }
.day.end .value { left: auto; right: 0; }
.day:hover .value, .day:focus .value { display: block; }
.first-day { font-size: 1.05rem; }
${Array.from({ length: 24 }, (_, i) => `.days${i + 7} .bars, .days${i + 7} .ticks { grid-template-columns: repeat(${i + 7}, minmax(0, 1fr)); }`).join('\n')}
${Array.from({ length: 30 }, (_, i) => `.at${i + 1} { grid-column: ${i + 1}; }`).join('\n')}
${Array.from({ length: 24 }, (_, i) => sparseTicks(i + 7)).join('\n')}
@media (max-width: 40rem) {
  header, main { padding-left: 0.75rem; padding-right: 0.75rem; }
  .sandbox-band { padding: 0.45rem 0.75rem; }
  section { padding: 0.5rem 0.6rem 0.75rem; }
  .facts { grid-template-columns: 1fr; gap: 0 0.5rem; }
  .facts dd { margin-bottom: 0.3rem; }
  input, select { max-width: 100%; }
  /* Each label above its control, the control the form's width. */
  .field { display: flex; flex-direction: column; align-items: stretch; gap: 0.1rem; margin: 0 0 0.5rem; white-space: normal; }
  .field input, .field select { width: 100%; }
  fieldset { display: block; }
  .checks { display: flex; flex-wrap: wrap; gap: 0.2rem 0.8rem; margin: 0 0 0.5rem; }
}
/* Up to a tablet's width (a laptop at 200 %), the tables' columns do not fit: a record a card. */
@media (max-width: 62rem) {
  /* A record a card: the id and its state, then kg and amount, then the rest, each named. */
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards, table.cards tbody { display: block; }
  table.cards tr { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 0.15rem 0.75rem; padding: 0.5rem 0; border-bottom: 1px solid var(--rule); }
  table.cards td { display: block; padding: 0; border: none; min-width: 0; text-align: left; }
  table.cards td.id { grid-column: 1; overflow-wrap: anywhere; }
  table.cards td.state { grid-column: 2; text-align: right; }
  table.cards td.state .muted { display: block; }
  table.cards td.num { grid-column: 1; text-align: left; }
  table.cards td.num + td.num { grid-column: 2; text-align: right; }
  table.cards td.wide, table.cards td.when, table.cards td.plain { grid-column: 1 / -1; color: var(--muted); font-size: 0.9rem; }
  table.cards td.wide::before, table.cards td.when::before, table.cards td.plain::before { content: attr(data-label) ": "; }
  table.cards td.act { grid-column: 1 / -1; }
  table.cards td.act:empty { display: none; }
  /* A state with a date (a revoked key's) is too wide to share the id's line: it goes under it. */
  table.cards td.state:has(.nw) { grid-column: 1 / -1; text-align: left; }
  .scroll { overflow-x: visible; }
}
@media (max-width: 40rem), (pointer: coarse) {
  /* Tap targets a finger hits (about 44 px high); a checkbox by its label, a record's id link and a fact's link by a hit area that moves nothing. */
  button, select, input, summary, header nav a, a[rel=next], a[rel=first] { min-height: 44px; }
  summary { padding: 0.65rem 0; }
  header nav a, a[rel=next], a[rel=first] { display: inline-flex; align-items: center; }
  label.check { display: inline-flex; align-items: center; gap: 0.3rem; min-height: 44px; }
  label.check input { min-height: 0; width: 1.25rem; height: 1.25rem; margin: 0; }
  table.cards td.id a, .facts dd > a { display: inline-block; padding: 0.7rem 0; margin: -0.7rem 0; }
}
/* A small phone (320 px): an offset's id takes the card's width, its state the line under it. */
@media (max-width: 23rem) {
  table.cards td.id, table.cards td.state { grid-column: 1 / -1; text-align: left; }
}
.watermark { display: none; }
@media print {
  .sandbox-band { border: 2px solid #000; }
  .watermark { display: grid; position: fixed; inset: 0; place-content: center; pointer-events: none; z-index: 1;
               font: bold 7rem/1 system-ui, sans-serif; letter-spacing: .1em; color: rgba(138, 109, 0, .14); transform: rotate(-30deg); }
}
.secret { border-color: var(--accent); }
/* The one showing of a key's secret: a face where I and l, O and 0 differ, for a person copying it by hand. */
#new-secret, .secret h3 { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
a { color: #0b5a8a; }
${REQUESTS_CSS}`;

/** The tab's icon (a leaf): served at /favicon.ico, so no page load ends in a 404. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b6b43"/><path d="M9 23c0-9 6-14 15-14 0 9-5 15-14 15l-1-1zm2 0 8-8" stroke="#fff" stroke-width="2" fill="none" stroke-linecap="round"/></svg>`;

const JS = `
// A copy button is hidden in the HTML (without JavaScript it would do nothing) and shown here.
for (const button of document.querySelectorAll('button[data-copy]')) button.hidden = false;
document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  if (!field) return;
  // No clipboard on a plain-http origin other than localhost (a --public-url): the text is selected instead.
  if (!navigator.clipboard) { field.select(); return; }
  navigator.clipboard.writeText(field.value).then(() => { button.textContent = 'Copied'; }, () => { field.select(); });
});
// A form is sent once: clicked again (or Enter) while its answer is on its way, it would be done
// again (two top-ups). Back on the page from the browser's cache, its forms can be sent again.
document.addEventListener('submit', (event) => {
  if (event.target.dataset.sent) event.preventDefault();
  else event.target.dataset.sent = '1';
});
window.addEventListener('pageshow', (event) => {
  if (event.persisted) for (const form of document.querySelectorAll('form[data-sent]')) delete form.dataset.sent;
});
// Live refresh, when asked for (?refresh=SECONDS), never of a page showing a new key's secret.
const every = Number(document.body.dataset.refresh || 0);
if (every > 0 && !document.querySelector('.secret')) {
  setInterval(() => {
    const busy = document.activeElement && ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement.tagName);
    const open = document.querySelector('details[open]');
    if (document.visibilityState === 'visible' && !busy && !open) location.reload();
  }, every * 1000);
}
`;

const file = (body: string, type: string, cache: string): Reply => ({
  status: 200,
  headers: { 'request-id': requestId(), 'cache-control': cache },
  body,
  type,
});

export const favicon = (): Reply => file(ICON, 'image/svg+xml', 'max-age=86400');
export const asset = (r: Incoming): Reply =>
  r.path === '/_page/app.css' ? file(CSS, 'text/css; charset=utf-8', 'no-cache') : file(JS, 'text/javascript; charset=utf-8', 'no-cache');
