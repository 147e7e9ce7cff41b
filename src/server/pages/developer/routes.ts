import type { Mode } from '../../../api/types.js';
import { LedgerError } from '../../../engine/ledger.js';
import { ApiError, methodNotAllowed } from '../../../service/errors.js';
import { redactSecrets } from '../../../service/keys.js';
import type { Session } from '../../../service/page-access.js';
import type { Sandbox } from '../../../service/sandbox.js';
import type { Reply } from '../../reply.js';
import type { Incoming, Served } from '../../requests.js';
import { ACTIONS, queryNotice, returnTo, sectionOf, unsureOf } from './actions.js';
import { dashboard } from './dashboard.js';
import { data } from './dashboard-data.js';
import { putFlash, takeFlash } from './flash.js';
import { formMode, formOf, keyAccess } from './form-fields.js';
import { offsetPage } from './offset-page.js';
import { html, redirect } from './page-reply.js';
import { cookie, SESSION_COOKIE, sameSite, sessionCookie } from './session.js';
import { loginPage, missingPage, signedInPage, type Typed } from './views.js';

/**
 * The developer page's handlers, as the request table (src/server/requests.ts) names them: `/`
 * (HTML for browsers; the JSON index stays for everything else), `/login`, `/logout`,
 * `/offsets/{id}`, `/actions/{name}` (the rows of actions.ts) and the `/_page/` assets.
 */

/** GET /login?token=…: the one-time link exchanged for a session cookie. */
export async function login(r: Incoming, served: Served): Promise<Reply> {
  const token = typeof r.query.token === 'string' ? r.query.token : '';
  if (r.upper !== 'GET' && r.upper !== 'HEAD') return html(405, loginPage('The login link is opened with GET.'), { allow: 'GET, HEAD' });
  const pages = served.sandbox.pages;
  const now = Date.now();
  // HEAD (a link preview, a checker) changes nothing: the token is looked at, not used up.
  const valid = r.upper === 'HEAD' ? await pages.loginTokenValid(token, now) : await pages.useLoginToken(token, now);
  if (!valid) {
    // Opened again by the owner it signed in (from the terminal's scrollback, a bookmark): still signed in, so the page.
    if ((await pages.readSession(cookie(r.headers.cookie, SESSION_COOKIE), now)) !== null) return redirect('/');
    return html(401, loginPage('That login link is not valid: it was used, it expired, or the sandbox was reset since.'));
  }
  if (r.upper === 'HEAD') return redirect('/');
  const signedIn = { 'set-cookie': sessionCookie(served.pageOrigin, await pages.newSession(now)) };
  // Opened from another site (a chat, `carbon sandbox login`'s file), a redirect would go without the SameSite=Strict cookie.
  return r.headers['sec-fetch-site'] === 'cross-site' ? html(200, signedInPage(), signedIn) : redirect('/', signedIn);
}

/**
 * A page path asked with a method it does not take: 405 with Allow, in the API's words (errors.ts:
 * methodNotAllowed) but as a page, said before the session is read, as the API does. `GET` for the
 * pages (the dashboard, an offset, the Requests view), `POST` for the forms (an action, signing out).
 */
export const wrongPageMethod =
  (allow: 'GET' | 'POST') =>
  async (r: Incoming, served: Served): Promise<Reply> => {
    const refused = methodNotAllowed(r.upper, redactSecrets(r.path), allow);
    const session = await served.sandbox.pages.readSession(cookie(r.headers.cookie, SESSION_COOKIE), Date.now());
    const page = session === null ? loginPage(refused.message) : missingPage(refused.message, session.csrf, 'Method not allowed');
    return html(405, page, refused.headers);
  };

/** Every other page path: for the signed-in owner only. POST is a form (an action, or signing out); GET (or HEAD) a page. */
export async function signedIn(r: Incoming, served: Served): Promise<Reply> {
  const now = Date.now();
  const session = await served.sandbox.pages.readSession(cookie(r.headers.cookie, SESSION_COOKIE), now).catch((err: unknown) => {
    // A form whose session the ledger did not answer for: a redirect still, as when its action gets no answer (post).
    const unsure =
      r.upper === 'POST' && err instanceof LedgerError
        ? unsureOf(r.path.slice('/actions/'.length), new URLSearchParams(r.body))
        : undefined;
    if (unsure === undefined) throw err;
    return unsure;
  });
  if (typeof session === 'string') return redirect(session);
  if (session === null) {
    // Just signed out (the redirect after POST /logout): said so, with how to sign in again.
    if (r.path === '/' && r.query.signed_out !== undefined) return html(401, loginPage('You signed out.', true));
    // A form another site named itself on (its post comes without the session's SameSite cookie): said as such, not as a session that ended.
    const from = r.headers.origin ?? r.headers.referer;
    if (r.upper === 'POST' && from !== undefined && !sameSite(r.headers, served.pageOrigin)) return crossSite();
    // A form from a page whose session ended (signed out in another tab, a reset, 12 hours): said so, and that it did nothing.
    if (r.upper === 'POST') return html(401, loginPage('You are signed out: the session of that page ended. Nothing changed.', true));
    return html(401, loginPage('This page belongs to the account owner.'));
  }
  // The request table sends POST only for a form's paths, and every other method elsewhere (requests.ts).
  if (r.upper === 'POST') return post(r, served, session, now);
  if (/^\/offsets\/[^/]+$/.test(r.path)) return offset(served.sandbox, r.params[0]!, session);
  // A path that is no page (a browser's typo, `/logout` opened as a link): said so, not the dashboard at a wrong address.
  if (r.path !== '/') return html(404, missingPage(`There is no page at ${redactSecrets(r.path)}.`, session.csrf));
  return home(r, served.sandbox, session, now);
}

async function offset(sandbox: Sandbox, segment: string, session: Session): Promise<Reply> {
  let id = ''; // names no offset where the segment is not valid percent-encoding
  try {
    id = decodeURIComponent(segment);
  } catch {}
  const found = await sandbox.offset(id);
  if (found === undefined) return html(404, missingPage(`There is no offset ${redactSecrets(id)}.`, session.csrf));
  return html(200, offsetPage(found, session.csrf, await sandbox.awaitsReview(found.id)));
}

/** The dashboard, with the notice of the action just done or the key just created. */
async function home(r: Incoming, sandbox: Sandbox, session: Session, now: number): Promise<Reply> {
  const q = (name: string) => (typeof r.query[name] === 'string' ? (r.query[name] as string) : '');
  const mode: Mode = q('mode') === 'live' ? 'live' : 'test';
  const notice = queryNotice(q('done'), q('unsure'));
  try {
    const d = await data(sandbox, session, mode, r.query);
    const refresh = /^\d{1,3}$/.test(q('refresh')) ? Number(q('refresh')) : 0;
    // What the action just done left to say (its flash), shown once; else what `?done=` names.
    const flash = r.upper === 'GET' ? await takeFlash(sandbox, session, now) : undefined;
    // A filter status or date that is none, or a filter given twice: the page says so by the form (422, as /requests for its filter).
    const status = d.filter.invalid.length > 0 || d.filter.repeated.length > 0 ? 422 : 200;
    if (flash !== undefined) return html(status, dashboard({ ...d, refresh, ...flash }));
    return html(status, dashboard({ ...d, refresh, ...(notice === undefined ? {} : { notice }) }));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return html(422, dashboard({ ...(await data(sandbox, session, mode, {})), notice: { kind: 'error', text: err.message } }));
  }
}

const crossSite = () => html(403, loginPage('That form did not come from this page (a cross-site request?). Nothing changed.'));
const otherAddress = (origin: string) =>
  `That form came from another address than this page's, ${origin} (carbon serve's --public-url). Nothing changed: open the page there and retry.`;

/** A form: from this origin with its session's token, then signing out or one action's row. */
async function post(r: Incoming, served: Served, session: Session, now: number): Promise<Reply> {
  const { sandbox, pageOrigin } = served;
  const params = new URLSearchParams(r.body);
  // Signed in, so from this site (the cookie is SameSite), but not this origin: a page opened at another address than its own.
  if (!sameSite(r.headers, pageOrigin)) return html(403, missingPage(otherAddress(pageOrigin), session.csrf, 'Nothing changed'));
  // Its token or its way back sent twice (the page's own forms never do): which was meant is not known.
  const twice = ['csrf', 'back'].find((field) => params.getAll(field).length > 1);
  if (twice !== undefined)
    return html(400, missingPage(`The form sent ${twice} more than once. Nothing changed.`, session.csrf, 'Nothing changed'));
  if (!sandbox.pages.csrfOk(session, params.get('csrf'))) {
    // From this origin, signed in, with an older session's token: a tab open since before a sign-in or a reset.
    const stale =
      'That form was on a page opened before this sign-in (or before a reset). Nothing changed: open the developer page again and retry.';
    return html(403, missingPage(stale, session.csrf, 'Nothing changed'));
  }
  if (r.path === '/logout') {
    await sandbox.pages.endSession(session);
    return redirect('/?signed_out', { 'set-cookie': sessionCookie(pageOrigin, '', 0) });
  }
  // The action is named by what follows the path's first segment (`/actions/{name}`).
  const name = r.path.slice('/actions/'.length);
  const back: Mode = params.get('back') === 'live' ? 'live' : 'test';
  try {
    return await act(served, session, name, params, back, now);
  } catch (err) {
    // No answer from the ledger: done or not is unknown. A redirect still (a 503, reloaded, posted again).
    const unsure = err instanceof LedgerError ? unsureOf(name, params) : undefined;
    if (unsure !== undefined) return redirect(unsure);
    if (!(err instanceof ApiError)) throw err;
    if (err.code === 'route_missing') {
      return html(404, dashboard({ ...(await data(sandbox, session, back, {})), notice: { kind: 'error', text: err.message } }));
    }
    // Refused too, a redirect (post/redirect/get: a reload does not post again). The error, and what
    // was typed (to be corrected, not typed again), wait in the session's flash for the page.
    // Every field (a top-up's mode too: tried again, it must not go to the view's mode), but the form's own.
    const typed: Typed = { form: name, values: {} };
    for (const [field, value] of params) if (field !== 'csrf' && field !== 'back') (typed.values[field] ??= []).push(value);
    await putFlash(sandbox, session, { notice: { kind: 'error', text: err.message, section: sectionOf(name) }, typed }, now);
    return redirect(returnTo(back, sectionOf(name), params));
  }
}

async function act(served: Served, session: Session, name: string, params: URLSearchParams, back: Mode, now: number): Promise<Reply> {
  const { sandbox, pageOrigin } = served;
  const form = formOf(params);
  if (name === 'key-create') {
    const made = await sandbox.createKey(formMode(form), keyAccess(form));
    // Like every action, a redirect (a reload does not post again). The page it leads to shows
    // the secret once: its key's id waits in the store for this session, never in a URL or cookie.
    await putFlash(sandbox, session, { key: made.id }, now);
    return redirect(returnTo(back, 'keys'));
  }
  const action = ACTIONS.get(name);
  if (action === undefined) throw new ApiError('route_missing', `There is no action "${name}".`);
  const result = await action.run(sandbox, form);
  // What happened, shown once after the redirect: in the session's flash, not the address (a reload would say it again).
  const text = action.notice === undefined ? action.done : action.notice(result, form);
  const notice = { kind: 'ok' as const, text, section: action.section };
  if (name === 'reset') {
    // The reset ended every session; the owner who asked for it gets a new one, the notice with it.
    await sandbox.pages.endSession(session);
    const fresh = await sandbox.pages.newSession(now);
    const next = await sandbox.pages.readSession(fresh, now);
    if (next !== null) await putFlash(sandbox, next, { notice }, now);
    return redirect(returnTo(back, action.section), { 'set-cookie': sessionCookie(pageOrigin, fresh) });
  }
  await putFlash(sandbox, session, { notice }, now);
  return redirect(returnTo(back, action.section, params));
}
