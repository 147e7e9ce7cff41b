import type { Mode, Offset } from '../../../api/types.js';
import { describeFaults, FAULT_KINDS, latencyText } from '../../../service/faults.js';
import { ROUTES } from '../../../service/routes.js';
import type { SandboxKey, SandboxStatus } from '../../../service/sandbox.js';
import { grouped } from '../../../service/units.js';
import { escapeHtml, escapeText, escapeWhole, htmlDocument } from '../html.js';
import type { ChartData } from './chart.js';
import { type Notice, noticeAt } from './flash.js';

/**
 * The developer page's HTML: plain server-rendered documents, every form a POST that works
 * without JavaScript (app.js adds a copy button, and keeps a refresh off a field in use). Every
 * value is escaped. The dashboard is in dashboard.ts, an offset's page in offset-page.ts.
 */

export interface DashboardData {
  mode: Mode;
  status: SandboxStatus;
  keys: SandboxKey[];
  offsets: { data: Offset[]; has_more: boolean };
  review: Offset[];
  chart: ChartData;
  /**
   * The offsets' filter as sent; `invalid` names the fields that hold no status or no date, or bytes that are not UTF-8, `repeated` the
   * parameters given more than once, with their values (then no offsets are read, and a repeated one reads as
   * empty); `after`, the page's cursor (a later page than the first).
   */
  filter: {
    status: string;
    reference: string;
    since: string;
    until: string;
    invalid: ReadonlyArray<'status' | 'reference' | 'since' | 'until'>;
    repeated: ReadonlyArray<{ name: 'status' | 'reference' | 'since' | 'until' | 'after'; values: readonly string[] }>;
    after: string;
  };
  csrf: string;
  /** A message after an action, or an error: in the section of the form it answers. */
  notice?: Notice;
  /** Seconds between live refreshes (0: none). */
  refresh: number;
  /** What was typed into a form that was refused (named by its action), shown again to be corrected. */
  typed?: Typed;
  /** A key just created: the one time its full text is shown. */
  createdKey?: { id: string; secret: string };
}

export interface Typed {
  form: string;
  values: Record<string, string[]>;
}

/** What was typed into `form`'s field `name` before it was refused; undefined for any other form. */
const typedIn = (d: DashboardData, form: string, name: string): string[] | undefined =>
  d.typed?.form === form ? (d.typed.values[name] ?? []) : undefined;
/** An input's value: what was typed into it before a refusal, else `now` (the setting now, or nothing). */
export const fieldValue = (d: DashboardData, form: string, name: string, now = ''): string => typedIn(d, form, name)?.[0] ?? now;

export const kg = (n: number) => `${grouped(n)} kg`;
export const date = (iso: string | null) => (iso === null ? '—' : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`);

const HEAD =
  '<link rel="icon" href="/favicon.ico" type="image/svg+xml">\n<link rel="stylesheet" href="/_page/app.css">\n' +
  '<script src="/_page/app.js" defer></script>';

/**
 * Said first on every page, on screen and in print (the watermark, fixed to the page, on every printed one), in words anyone reads:
 * everything here is the sandbox's (sandbox.ts: SANDBOX_NOTICE). A landmark of its own (an unstyled region), so no content is outside one.
 */
const SANDBOX_BAND =
  '<div role="region" aria-label="Sandbox"><p class="sandbox-band" role="note"><strong>Sandbox</strong> — for testing only: nothing here is real. ' +
  'No carbon credits are bought or retired, and no money moves.</p><div class="watermark" aria-hidden="true">SANDBOX</div></div>';

/** A page's title: a browser tab says whose page it is before anything else, as the band does (`carbon sandbox: …`). */
type SandboxTitle = `carbon sandbox${string}`;

/** `refresh`: seconds between reloads (0: none): by app.js, which waits while a field is in use; without JavaScript, by the browser. */
export function layout(title: SandboxTitle, body: string, refresh = 0): string {
  const head = refresh > 0 ? `${HEAD}\n<noscript><meta http-equiv="refresh" content="${refresh}"></noscript>` : HEAD;
  return htmlDocument(title, head, `${SANDBOX_BAND}\n${body}`, refresh > 0 ? ` data-refresh="${refresh}"` : '');
}

/**
 * A label and its control, kept together: side by side on a wide screen (never split across
 * lines), the label above the control on a phone (assets.ts: `.field`).
 */
export function field(id: string, label: string, control: string): string {
  return `<span class="field"><label for="${id}">${label}</label>${control}</span>`;
}

/** An id (an offset's, a key's), in the page's monospace font. */
export const idText = (id: string) => `<code class="id">${escapeHtml(id)}</code>`;

/**
 * Signed in by a link opened from another site (a chat, an email, `carbon sandbox login`'s file):
 * a browser sends no SameSite=Strict cookie on the redirect such a navigation follows, so this page
 * of the site's own goes on to the developer page, and the cookie goes with that.
 */
export function signedInPage(): string {
  return htmlDocument(
    'carbon sandbox: signed in',
    `${HEAD}\n<meta http-equiv="refresh" content="0;url=/">`,
    `${SANDBOX_BAND}\n<main class="narrow">\n<h1>carbon sandbox</h1>\n<p>Signed in. <a href="/">Go on to the developer page</a>.</p>\n</main>`,
  );
}

/** The page for a browser without a session; `signedOut`, the one just after signing out (the link it used is spent). */
export function loginPage(message: string, signedOut = false): string {
  const how = signedOut
    ? 'To sign in again, open a new one-time login link: <code>carbon sandbox login</code> prints a new one (or opens it in a browser)'
    : 'Sign in with a one-time login link: <code>carbon serve</code> prints one on a terminal, and <code>carbon sandbox login</code> opens a new one';
  return layout(
    `carbon sandbox: ${signedOut ? 'signed out' : 'sign in'}`,
    `<main class="narrow">
<h1>carbon sandbox</h1>
<p>${escapeHtml(message)}</p>
<p>${how}; <code>carbon sandbox login --print</code> prints it. Run it with the same <code>CARBON_HOME</code> or database as the server.</p>
</main>`,
  );
}

/**
 * What a signed-in owner gets for an offset or a request that is not there (a 404), or a form
 * from a page of an earlier session (a 403): a page that says so, with the page's own header
 * (back to the page, Requests, sign out), not the sign-in page.
 */
export function missingPage(message: string, csrf: string, heading = 'Not found'): string {
  return layout(
    `carbon sandbox: ${heading.toLowerCase()}`,
    `${pageHeader(escapeHtml(heading), csrf)}
<main class="narrow"><p>${escapeText(message)}</p></main>`,
  );
}

/**
 * The header of every signed-in page but the dashboard (whose own adds the mode and the refresh):
 * `title` (HTML), the way back to the developer page (`home`: an offset's leads to its mode's view), Requests, and Sign out.
 */
export function pageHeader(title: string, csrf: string, home = '/'): string {
  return `<header><h1>${title}</h1><nav aria-label="Pages"><a href="${home}">← Developer page</a> · <a href="/requests">Requests</a></nav>
<form method="post" action="/logout">${csrfField(csrf)}<button type="submit">Sign out</button></form></header>`;
}

export function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
}

/** A POST form to /actions/NAME, with the CSRF token and the mode to come back to. */
export function action(name: string, d: Pick<DashboardData, 'csrf' | 'mode'>, fields: string, button: string, cls = ''): string {
  const back = `<input type="hidden" name="back" value="${d.mode}">`;
  const submit = `<button type="submit">${button}</button>`;
  return `<form method="post" action="/actions/${name}" class="${cls}">${csrfField(d.csrf)}${back}${fields}${submit}</form>`;
}

/** An action that asks first: the form shows only after "…" is opened (no JavaScript needed). */
export function confirmed(name: string, d: Pick<DashboardData, 'csrf' | 'mode'>, fields: string, ask: string, button: string): string {
  return `<details class="confirm"><summary>${escapeHtml(ask)}</summary>${action(name, d, fields, button, 'danger')}</details>`;
}

/** `carbon sandbox faults` on the page: the setting now, a form to replace it, and one to stop it. */
export function faultControls(d: DashboardData): string {
  const f = d.status.faults;
  // The form starts from the setting now, or from what was typed into it before it was refused.
  const was = (name: string, now: string) => escapeHtml(fieldValue(d, 'faults', name, now));
  const option = (value: string, label: string, selected: boolean) =>
    `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  const errors = typedIn(d, 'faults', 'errors') ?? (f === null ? FAULT_KINDS : f.errors);
  const kinds = FAULT_KINDS.map(
    (k) => `<label class="check"><input type="checkbox" name="errors" value="${k}"${errors.includes(k) ? ' checked' : ''}> ${k}</label>`,
  ).join(' ');
  const route = fieldValue(d, 'faults', 'route', f?.route ?? '');
  const routes = [
    option('', 'every route', route === ''),
    ...ROUTES.map((r) => option(`${r.method} ${r.path}`, `${r.method} ${r.path}`, route === `${r.method} ${r.path}`)),
  ].join('');
  const mode = fieldValue(d, 'faults', 'mode', f?.mode ?? '');
  const modes = [
    option('', 'test and live', mode === ''),
    option('test', 'test keys', mode === 'test'),
    option('live', 'live keys', mode === 'live'),
  ].join('');
  const latency = f?.latency_ms == null ? '' : latencyText(f.latency_ms);
  return `<h3 id="faults">Faults</h3>
${noticeAt(d, 'faults')}<p id="faults-now">${f === null ? 'Off: every request is answered as usual.' : `On: ${escapeWhole(describeFaults(f))}.`}</p>
${action(
  'faults',
  d,
  `<fieldset><legend>Inject into API requests</legend>
${field('f-rate', 'Error rate (0 to 1)', `<input id="f-rate" name="error_rate" inputmode="decimal" placeholder="0.3" value="${was('error_rate', f === null ? '' : String(f.error_rate))}">`)}
<span role="group" aria-label="Faults drawn from" class="checks">${kinds}</span>
${field('f-latency', 'Latency', `<input id="f-latency" name="latency" placeholder="50ms-400ms" value="${was('latency', latency)}">`)}
${field('f-route', 'Route', `<select id="f-route" name="route">${routes}</select>`)}
${field('f-mode', 'Mode', `<select id="f-mode" name="mode">${modes}</select>`)}
${field('f-seed', 'Seed', `<input id="f-seed" name="seed" inputmode="numeric" placeholder="random" value="${was('seed', String(f?.seed ?? ''))}">`)}
${field('f-retry', 'Retry-After (s)', `<input id="f-retry" name="retry_after" inputmode="numeric" value="${was('retry_after', String(f?.retry_after_seconds ?? 1))}">`)}
</fieldset>`,
  'Inject faults',
)}
${f === null ? '' : action('faults-off', d, '', 'Stop faults')}`;
}
