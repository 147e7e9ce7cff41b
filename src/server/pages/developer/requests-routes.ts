import { ApiError, validationError } from '../../../service/errors.js';
import { filterFromParams } from '../../../service/journal-view.js';
import { redactSecrets } from '../../../service/keys.js';
import type { Reply } from '../../reply.js';
import type { Incoming, Served } from '../../requests.js';
import { html } from './page-reply.js';
import { requestPage, requestsPage } from './requests-view.js';
import { cookie, SESSION_COOKIE } from './session.js';
import { loginPage, missingPage } from './views.js';

/** The Requests view's two pages, `/requests` and `/requests/{request_id}`: for the signed-in owner, as the rest of the page. */

const PAGE_SIZE = 50;
async function session(r: Incoming, served: Served) {
  return served.sandbox.pages.readSession(cookie(r.headers.cookie, SESSION_COOKIE), Date.now());
}

const SIGN_IN = 'This page belongs to the account owner.';
const FILTERS = ['status', 'path', 'before'] as const;

/** A filter given twice (an edited address): which one was meant is not known, so it is refused, as the journal's API does. */
function refuseRepeated(query: Incoming['query']): void {
  for (const name of FILTERS) {
    const values = query[name];
    if (!Array.isArray(values)) continue;
    const quoted = values.map((v) => `"${redactSecrets(v.slice(0, 40))}"`);
    const listed = `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
    throw validationError(name, `${name} may be given only once; it was given ${values.length} times: ${listed}.`);
  }
}

/** GET /requests?status=4xx&path=/api/v1/offsets&before=SEQ */
export async function requestsList(r: Incoming, served: Served): Promise<Reply> {
  const s = await session(r, served);
  if (s === null) return html(401, loginPage(SIGN_IN));
  const get = (name: string) => (typeof r.query[name] === 'string' ? (r.query[name] as string) : undefined);
  // A status class is read in either case (4XX); shown as the select offers it.
  const shown = { status: (get('status') ?? '').toLowerCase(), path: get('path') ?? '' };
  try {
    refuseRepeated(r.query);
    const filter = {
      ...filterFromParams((n) => (n === 'status' || n === 'path' || n === 'before' ? get(n) : undefined)),
      limit: PAGE_SIZE + 1,
    };
    const found = await served.sandbox.journal.entries(filter);
    const entries = found.slice(0, PAGE_SIZE);
    const older = found.length > PAGE_SIZE ? entries.at(-1)!.seq : null;
    return html(200, requestsPage({ entries, filter: shown, older, later: filter.before !== null, csrf: s.csrf }));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // Said above the form, and the requests wait for it: not listed as if the filter were not there (as the dashboard's offsets).
    return html(
      422,
      requestsPage({
        entries: [],
        filter: { status: '', path: shown.path },
        older: null,
        csrf: s.csrf,
        problem: err.message,
        wrong: err.extra.param,
      }),
    );
  }
}

/** GET /requests/{request_id}: one entry whole. */
export async function requestShown(r: Incoming, served: Served): Promise<Reply> {
  const s = await session(r, served);
  if (s === null) return html(401, loginPage(SIGN_IN));
  let id = '';
  try {
    id = decodeURIComponent(r.params[0]!);
  } catch {
    // Not valid percent-encoding: names no request.
  }
  const entry = /^req_[A-Za-z0-9]{1,40}$/.test(id) ? await served.sandbox.journal.entry(id) : undefined;
  if (entry === undefined)
    return html(404, missingPage('There is no such request in the journal (it keeps the newest entries only).', s.csrf));
  return html(200, requestPage(entry, s.csrf));
}
