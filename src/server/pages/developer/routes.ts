import type { ApiRequest, Mode, OffsetStatus } from '../../../api/types.js';
import { ApiError } from '../../../service/errors.js';
import type { FaultInput } from '../../../service/settings.js';
import { parseLatency, parseShare } from '../../../service/faults.js';
import { keyMode, redactKeys } from '../../../service/keys.js';
import type { Sandbox } from '../../../service/sandbox.js';
import { LIMITS } from '../../../api/types.js';
import { MAX_TOP_UP_CENTS } from '../../../service/settings.js';
import { dollars, parseDollars, parseDuration } from '../../../service/units.js';
import { CSS, ICON, JS } from './assets.js';
import {
  csrfOk, endSession, loginTokenValid, newSession, putFlash, readSession, sameSite, type Session, sessionCookie, takeFlash, useLoginToken,
} from './session.js';
import { type DashboardData, dashboard, loginPage, offsetPage } from './views.js';

/**
 * The developer page's routes: `/` (HTML for browsers; the JSON index stays for everything else),
 * `/login`, `/logout`, `/offsets/{id}`, `/actions/{name}` and `/_page/` assets. Every action is one
 * call of the Sandbox, the same the CLI's `carbon sandbox` commands make.
 */

export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  contentType: string;
}

/** No inline script or style; forms post only here; nothing may frame the page. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const SECURITY = { 'content-security-policy': CSP, 'referrer-policy': 'same-origin', 'x-frame-options': 'DENY' };

const html = (status: number, body: string, headers: Record<string, string> = {}): PageResponse => ({
  status,
  headers: { ...SECURITY, ...headers },
  body,
  contentType: 'text/html; charset=utf-8',
});
const redirect = (to: string, headers: Record<string, string> = {}): PageResponse => ({ status: 303, headers: { ...SECURITY, location: to, ...headers }, body: '', contentType: 'text/plain' });

/** Paths the page answers; everything else is the API's or the certificates'. */
export function isPagePath(method: string, path: string, accept: string | undefined): boolean {
  if (path === '/') return method === 'GET' || method === 'HEAD' ? (accept ?? '').includes('text/html') : false;
  return path === '/favicon.ico' || path === '/login' || path === '/logout' || path.startsWith('/actions/') || path.startsWith('/_page/') || /^\/offsets\/[^/]+$/.test(path);
}

/** The notice after each action's redirect (`?done=`): a Map, so `constructor` or `__proto__` names nothing. */
const DONE = new Map(Object.entries({
  topup: 'Topped up.', 'key-revoke': 'The key is revoked: the API now refuses it with 401.', status: 'The account standing is set.',
  rate: 'The rate is set.', 'review-limit': 'The review limit is set.', 'rate-limit': 'The rate limit is set.', approve: 'Approved: the offset is placed.',
  reject: 'Rejected: the offset is refunded.', fail: 'The order could not be placed: the offset is refunded.', clock: 'The model clock moved forward.',
  reset: 'The sandbox starts over: a new account and new keys. Every other signed-in page was signed out.', faults: 'Faults are on: every instance on this ledger applies them from its next request.',
  'faults-off': 'Faults are off.',
}));

export async function handlePage(sandbox: Sandbox, origin: string, req: ApiRequest): Promise<PageResponse> {
  const method = req.method.toUpperCase();
  if (req.path === '/_page/app.css') return { status: 200, headers: { 'cache-control': 'no-cache' }, body: CSS, contentType: 'text/css; charset=utf-8' };
  if (req.path === '/_page/app.js') return { status: 200, headers: { 'cache-control': 'no-cache' }, body: JS, contentType: 'text/javascript; charset=utf-8' };
  if (req.path === '/favicon.ico') return { status: 200, headers: { 'cache-control': 'max-age=86400' }, body: ICON, contentType: 'image/svg+xml' };
  const now = Date.now();
  const store = sandbox.store;

  if (req.path === '/login') {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    if (method !== 'GET' && method !== 'HEAD') return html(405, loginPage('The login link is opened with GET.'), { allow: 'GET' });
    // HEAD (a link preview, a checker) changes nothing: the token is looked at, not used up.
    const valid = method === 'HEAD' ? await loginTokenValid(store, token, now) : await useLoginToken(store, token, now);
    if (!valid) return html(401, loginPage('That login link is not valid: it was used already, or it expired.'));
    return method === 'HEAD' ? redirect('/') : redirect('/', { 'set-cookie': sessionCookie(origin, await newSession(store, now)) });
  }

  const session = await readSession(store, req.headers.cookie, now);
  if (session === null) return html(401, loginPage('This page belongs to the account owner. Sign in with the link carbon serve printed.'));

  if (method === 'POST') {
    const form = new URLSearchParams(req.body);
    // A cross-site post has neither this origin nor the session's token.
    if (!sameSite(req.headers, origin) || !csrfOk(session, form.get('csrf'))) {
      return html(403, loginPage('That form did not come from this page (a cross-site request?). Nothing changed.'));
    }
    if (req.path === '/logout') {
      await endSession(store, session);
      return redirect('/', { 'set-cookie': sessionCookie(origin, '', 0) });
    }
    const name = req.path.slice('/actions/'.length);
    const back: Mode = form.get('back') === 'live' ? 'live' : 'test';
    try {
      if (name === 'key-create') {
        const mode: Mode = form.get('mode') === 'live' ? 'live' : 'test';
        const made = await sandbox.createKey(mode, form.get('permission') === 'read_only' ? 'read_only' : 'purchase');
        // Like every action, a redirect (a reload does not post again). The page it leads to shows
        // the secret once: its key's id waits in the store for this session, never in a URL or cookie.
        await putFlash(store, session, made.id, now);
        return redirect(`/?mode=${back}`);
      }
      await act(sandbox, name, form);
      if (name === 'reset') {
        // The reset ended every session; the owner who asked for it gets a new one.
        await endSession(store, session);
        return redirect(`/?mode=${back}&done=reset`, { 'set-cookie': sessionCookie(origin, await newSession(store, now)) });
      }
      return redirect(`/?mode=${back}&done=${encodeURIComponent(name)}`);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // What was typed stays in its field, to be corrected rather than typed again.
      const typed = name === 'topup' ? { amount: form.get('amount') ?? '' } : {};
      return html(err.status === 404 ? 404 : 422, dashboard({ ...(await data(sandbox, session, back, {})), typed, notice: { kind: 'error', text: err.message } }));
    }
  }
  if (method !== 'GET' && method !== 'HEAD') return html(405, loginPage('Only GET and POST are used here.'), { allow: 'GET, POST' });

  const offsetPath = /^\/offsets\/([^/]+)$/.exec(req.path);
  if (offsetPath) {
    let id = '';
    try {
      id = decodeURIComponent(offsetPath[1]!);
    } catch {
      // Not valid percent-encoding: names no offset.
    }
    const offset = await sandbox.offset(id);
    return offset === undefined ? html(404, loginPage(`There is no offset ${redactKeys(id)}.`)) : html(200, offsetPage(offset, session.csrf));
  }
  const q = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');
  const mode: Mode = q('mode') === 'live' ? 'live' : 'test';
  const done = DONE.get(q('done'));
  try {
    const d = await data(sandbox, session, mode, { status: q('status'), reference: q('reference'), since: q('since'), until: q('until'), after: q('after') });
    const refresh = /^\d{1,3}$/.test(q('refresh')) ? Number(q('refresh')) : 0;
    const created = method === 'GET' ? await createdKey(sandbox, session, now) : undefined;
    if (created !== undefined) return html(200, dashboard({ ...d, refresh, ...created }));
    return html(200, dashboard({ ...d, refresh, ...(done === undefined ? {} : { notice: { kind: 'ok', text: done } }) }));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return html(422, dashboard({ ...(await data(sandbox, session, mode, {})), notice: { kind: 'error', text: err.message } }));
  }
}

/** The key this session just created, taken from the store once (a reload shows it no more). */
async function createdKey(sandbox: Sandbox, session: Session, now: number): Promise<Pick<DashboardData, 'createdKey' | 'notice'> | undefined> {
  const id = await takeFlash(sandbox.store, session, now);
  const secret = id === undefined ? undefined : await sandbox.secret(id);
  if (id === undefined || secret === undefined) return undefined;
  return { createdKey: { id, secret }, notice: { kind: 'ok', text: `Created ${keyMode(secret) ?? 'test'} key ${id}.` } };
}

/** One Sandbox call per action; the inputs checked as the CLI checks them. */
async function act(sandbox: Sandbox, name: string, form: URLSearchParams): Promise<void> {
  const field = (n: string) => (form.get(n) ?? '').trim();
  const id = field('id');
  switch (name) {
    case 'topup': {
      const cents = parseDollars(field('amount'));
      if (cents === null) throw new ApiError('validation_error', `The top-up must be dollars with at most two decimals, such as 250 or 250.00, not "${field('amount')}".`, { param: 'amount_cents' });
      // Said in dollars, as the field asks: the model's own message counts cents.
      if (cents < LIMITS.topUpMinCents || cents > MAX_TOP_UP_CENTS) {
        throw new ApiError('validation_error', `A top-up is from ${dollars(LIMITS.topUpMinCents)} to ${dollars(MAX_TOP_UP_CENTS)}; ${dollars(cents)} is ${cents < LIMITS.topUpMinCents ? 'less' : 'more'}.`, { param: 'amount_cents' });
      }
      await sandbox.topUp(field('mode') === 'live' ? 'live' : 'test', cents);
      return;
    }
    case 'key-revoke':
      return sandbox.revokeKey(id);
    case 'status': {
      const status = field('status');
      if (status !== 'active' && status !== 'suspended' && status !== 'unapproved') throw new ApiError('validation_error', 'The standing is active, suspended or not approved.', { param: 'status' });
      await sandbox.setStatus(status);
      return;
    }
    case 'rate':
      await sandbox.setRate(/^\d{1,8}$/.test(field('rate')) ? Number(field('rate')) : Number.NaN);
      return;
    case 'review-limit': {
      const cents = parseDollars(field('amount'));
      if (cents === null) throw new ApiError('validation_error', `The review limit must be dollars, such as 5000, not "${field('amount')}".`, { param: 'review_limit_cents' });
      await sandbox.setReviewLimit(cents);
      return;
    }
    case 'rate-limit': {
      const text = field('requests');
      await sandbox.setRateLimit(text === 'off' ? null : /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN);
      return;
    }
    case 'approve':
      await sandbox.approve(id);
      return;
    case 'reject':
      await sandbox.reject(id);
      return;
    case 'fail':
      await sandbox.fail(id);
      return;
    case 'clock': {
      const ms = parseDuration(field('duration'));
      if (ms === null) throw new ApiError('validation_error', `The duration is like 90s, 15m, 2h or 1d, not "${field('duration')}".`, { param: 'duration' });
      await sandbox.advanceClock(ms);
      return;
    }
    case 'reset':
      return sandbox.reset();
    case 'faults':
      await sandbox.setFaults(faultForm(field, form.getAll('errors')));
      return;
    case 'faults-off':
      return sandbox.clearFaults();
    default:
      throw new ApiError('route_missing', `There is no action "${name}".`);
  }
}

/** The faults form, read as `carbon sandbox faults set` reads its options; Sandbox.setFaults checks the rest. */
function faultForm(field: (n: string) => string, errors: string[]): FaultInput {
  const invalid = (param: string, text: string) => new ApiError('validation_error', text, { param });
  const rate = field('error_rate') === '' ? 0 : parseShare(field('error_rate'));
  if (rate === null) throw invalid('error_rate', `The error rate is a share from 0 to 1, such as 0.3, not "${field('error_rate')}".`);
  const latency = field('latency') === '' ? null : parseLatency(field('latency'));
  if (latency === null && field('latency') !== '') throw invalid('latency', `The latency is a duration or a range such as 200ms or 50ms-400ms, not "${field('latency')}".`);
  const whole = (name: string) => (/^\d{1,10}$/.test(field(name)) ? Number(field(name)) : Number.NaN);
  return {
    error_rate: rate,
    errors,
    latency_ms: latency,
    route: field('route') === '' ? null : field('route'),
    mode: field('mode') === '' ? null : field('mode'),
    seed: field('seed') === '' ? null : whole('seed'),
    retry_after_seconds: field('retry_after') === '' ? 1 : whole('retry_after'),
  };
}

const STATUSES = new Set(['processing', 'placed', 'refunded']);
const DAY = /^\d{4}-\d{2}-\d{2}$/;

async function data(
  sandbox: Sandbox,
  session: Session,
  mode: Mode,
  f: { status?: string; reference?: string; since?: string; until?: string; after?: string },
): Promise<DashboardData> {
  const status = STATUSES.has(f.status ?? '') ? (f.status as OffsetStatus) : null;
  const day = (text: string | undefined, plus = 0) => (text !== undefined && DAY.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) ? Date.parse(`${text}T00:00:00Z`) + plus : null);
  const now = await sandbox.now();
  const [status_, keys, offsets, review, chart] = await Promise.all([
    sandbox.status(),
    sandbox.keys(),
    sandbox.offsets(mode, {
      status,
      reference: f.reference ? f.reference : null,
      since: day(f.since),
      until: day(f.until, 86_400_000),
      startingAfter: f.after ? f.after : null,
      limit: 20,
    }),
    sandbox.reviewQueue(),
    sandbox.kgByPeriod(mode, 'day', now - 29 * 86_400_000),
  ]);
  return {
    mode,
    status: status_,
    keys,
    offsets,
    review,
    chart: { days: chart, today: new Date(now).toISOString().slice(0, 10) },
    csrf: session.csrf,
    refresh: 0,
    filter: { status: status ?? '', reference: f.reference ?? '', since: day(f.since) === null ? '' : f.since!, until: day(f.until) === null ? '' : f.until! },
  };
}
