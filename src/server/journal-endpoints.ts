import type { RequestEntry } from '../api/journal.js';
import { parseBearer } from '../service/access.js';
import { ApiError, echoed, methodNotAllowed, unknownParameter, validationError } from '../service/errors.js';
import { FILTER_PARAMS, filterFromParams, type RequestFilter } from '../service/journal-view.js';
import { requestId } from '../service/keys.js';
import { decodePathSegment } from '../service/service.js';
import type { Reply } from './reply.js';
import type { Incoming, Served } from './requests.js';

/**
 * The served sandbox's request journal, for `carbon logs` on another machine: beside the API, not
 * in it (`/_sandbox/…`), read with any key of this sandbox that is not revoked (either mode: the
 * journal is the sandbox's, as `carbon sandbox` sees it locally). The live API has no such path,
 * which is how `carbon logs` tells the two apart.
 *
 * - `GET /_sandbox/requests?status=4xx&path=/api/v1/offsets&…&limit=50`: newest first;
 * - with `after=SEQ&wait=SECONDS`: the entries newer than SEQ, oldest first, waiting up to
 *   SECONDS (at most 25) for the first one (`carbon logs --follow`), the key checked again at
 *   each look;
 * - `GET /_sandbox/requests/{request_id}`: one entry, or 404.
 *
 * A query parameter the list does not read is 422 `validation_error` naming it, as on the API's GET /offsets.
 *
 * Any other method on either is the API's 405 `method_not_allowed` with `Allow`, before the key is read.
 */

/** How often a waiting follower's read looks at the ledger again (another instance may have written). */
const POLL_MS = 200;
const MAX_WAIT_S = 25;
/** The filter's parameters and `wait`: any other is 422 validation_error naming it. */
const KNOWN = new Set([...FILTER_PARAMS, 'wait']);

export async function requests(r: Incoming, served: Served): Promise<Reply> {
  try {
    await signedWithKey(r, served);
    // As the API's GET /offsets: a parameter it does not read (a misspelt filter), one given twice,
    // or one given no value (`?limit=`: a script's unset variable) is refused, not ignored.
    for (const [name, value] of Object.entries(r.query)) {
      if (value !== undefined && !KNOWN.has(name)) throw unknownParameter(name);
      if (Array.isArray(value)) throw validationError(name, `${name} may be given only once.`);
      if (value === '') throw validationError(name, `${name} has no value: give it one, or leave it out.`);
    }
    // Each one given once, as checked above.
    const get = (name: string) => r.query[name] as string | undefined;
    const filter = filterFromParams(get);
    const waitText = get('wait') ?? '0';
    if (!/^\d{1,9}$/.test(waitText))
      throw validationError('wait', `wait must be a whole number of seconds (at most ${MAX_WAIT_S} are waited).`);
    const waitS = Math.min(Number(waitText), MAX_WAIT_S);
    const until = Date.now() + waitS * 1000;
    let data = await served.sandbox.journal.entries(filter);
    while (data.length === 0 && filter.after !== null && Date.now() < until && !served.writer.closing) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      // A key revoked while it waits (a reset replaces every key) reads nothing more.
      await signedWithKey(r, served);
      data = await served.sandbox.journal.entries(filter);
      // Numbered from 1 again (a journal emptied by an older carbon; seqs now never go back):
      // answered at once, so the follower starts again from there.
      if (data.length === 0 && (await served.sandbox.journal.newestSeq()) < filter.after) break;
    }
    // newest_seq: where a follower starts (`after=`), an emptied journal's too (service/journal.ts).
    return json(200, {
      object: 'list',
      data,
      has_more: await more(served, filter, data),
      newest_seq: await served.sandbox.journal.newestSeq(),
    });
  } catch (err) {
    return refused(err);
  }
}

export async function request(r: Incoming, served: Served): Promise<Reply> {
  try {
    await signedWithKey(r, served);
    // Decoded as the API's offset ids are, and echoed as they are: bounded, anything shaped like a secret masked.
    const id = decodePathSegment(r.params[0]!);
    const entry = id === null ? undefined : await served.sandbox.journal.entry(id);
    if (entry === undefined)
      throw new ApiError('resource_missing', `No such request in the journal: '${echoed(id ?? r.params[0]!)}'.`, { param: 'id' });
    return json(200, entry);
  } catch (err) {
    return refused(err);
  }
}

/**
 * A GET-only path of the server's own (the journal's, the certificate, /healthz, the JSON index, the
 * page's files) with another method: the API's 405 with Allow, as for its own GET-only paths.
 */
export function wrongMethod(r: Incoming): Reply {
  return refused(methodNotAllowed(r.upper, r.path, 'GET'));
}

/**
 * Whether entries lie beyond a full page (older ones; newer ones when following), as the API's
 * `has_more` says: a last page that is exactly full has none.
 */
async function more(served: Served, filter: RequestFilter, data: readonly RequestEntry[]): Promise<boolean> {
  const last = data.at(-1);
  if (last === undefined || data.length < filter.limit) return false;
  const next = filter.after === null ? { ...filter, before: last.seq, limit: 1 } : { ...filter, after: last.seq, limit: 1 };
  return (await served.sandbox.journal.entries(next)).length > 0;
}

async function signedWithKey(r: Incoming, served: Served): Promise<void> {
  // No key, or no key's shape: the API's own 401 (api_key_missing, api_key_invalid), as callers expect.
  const key = await served.sandbox.findKey(parseBearer(r.headers.authorization).secret);
  if (key === undefined) throw new ApiError('api_key_invalid', 'Invalid API key provided: the journal is read with a key of this sandbox.');
  if (key.revoked) throw new ApiError('api_key_revoked', 'This API key has been revoked.');
}

function json(status: number, body: unknown): Reply {
  return { status, headers: { 'request-id': requestId() }, body };
}

function refused(err: unknown): Reply {
  if (!(err instanceof ApiError)) throw err;
  return { status: err.status, headers: { ...err.headers, 'request-id': requestId() }, body: { error: err.toBody() } };
}
