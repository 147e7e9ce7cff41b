import { MAX_REQUESTS_PAGE, type RequestEntry } from '../api/journal.js';
import type { Mode } from '../api/types.js';
import { isoTime } from '../platform/iso-time.js';
import type { JournalQuery, JournalRecord } from '../store/port.js';
import { validationError } from './errors.js';
import { mustBeText } from './validation.js';

/**
 * The journal as people and programs ask for it: a filter (from `carbon logs`'s flags, the page's
 * form, or `/_sandbox/requests`'s query, all the same names) and an entry in its wire shape.
 */

export interface RequestFilter {
  /** `2xx`, `4xx`, `5xx` or one code. */
  status: string | null;
  method: string | null;
  /** A prefix of the path. */
  path: string | null;
  code: string | null;
  /** Real time, ms. */
  since: number | null;
  requestId: string | null;
  mode: Mode | null;
  limit: number;
  /** Older than this seq (a page), or newer than it (following). */
  before: number | null;
  after: number | null;
}

export const NO_FILTER: RequestFilter = {
  status: null,
  method: null,
  path: null,
  code: null,
  since: null,
  requestId: null,
  mode: null,
  limit: 50,
  before: null,
  after: null,
};

/** The status range of `2xx`/`4xx`/`5xx` or an exact code; a bad one is a validation error naming `param`. */
export function statusRange(text: string, param = 'status'): readonly [number, number] {
  const cls = /^([1-5])xx$/i.exec(text);
  if (cls) return [Number(cls[1]) * 100, Number(cls[1]) * 100 + 99];
  if (/^[1-5]\d\d$/.test(text)) return [Number(text), Number(text)];
  throw validationError(param, `${param} must be 2xx, 4xx, 5xx or a status code such as 404, not "${text.slice(0, 40)}".`);
}

/** The store's query for a filter. */
export function journalQuery(f: RequestFilter): JournalQuery {
  return {
    limit: Math.min(Math.max(1, f.limit), MAX_REQUESTS_PAGE),
    beforeSeq: f.before,
    afterSeq: f.after,
    status: f.status === null ? null : statusRange(f.status),
    method: f.method === null ? null : f.method.toUpperCase(),
    pathPrefix: f.path,
    code: f.code,
    sinceMs: f.since,
    requestId: f.requestId,
    mode: f.mode,
  };
}

/** The filter as query parameters (what `/_sandbox/requests` reads with filterFromParams). */
export function filterParams(f: RequestFilter): URLSearchParams {
  const p = new URLSearchParams();
  const put = (name: string, value: string | number | null) => {
    if (value !== null) p.set(name, String(value));
  };
  put('status', f.status);
  put('method', f.method);
  put('path', f.path);
  put('code', f.code);
  put('since', f.since);
  put('request_id', f.requestId);
  put('livemode', f.mode === null ? null : String(f.mode === 'live'));
  put('limit', f.limit);
  put('before', f.before);
  put('after', f.after);
  return p;
}

/** The names filterParams writes and filterFromParams reads. */
export const FILTER_PARAMS: readonly string[] = [
  'status',
  'method',
  'path',
  'code',
  'since',
  'request_id',
  'livemode',
  'limit',
  'before',
  'after',
];

/** `since`: real time in epoch milliseconds (`carbon logs --since 2h` sends it so), said as such when it is not. */
function sinceMs(v: string | null): number | null {
  if (v === null) return null;
  if (!/^\d{1,16}$/.test(v) || Number(v) > Number.MAX_SAFE_INTEGER)
    throw validationError('since', `since is a time in milliseconds since 1970 (${Date.UTC(2026, 0, 31)} is 2026-01-31), not "${v}".`);
  return Number(v);
}

/** A filter from query parameters (or a form); what is not a filter's value is a validation error. */
export function filterFromParams(get: (name: string) => string | undefined): RequestFilter {
  const text = (name: string) => {
    const v = get(name);
    return v === undefined || v === '' ? null : mustBeText(v, name);
  };
  const whole = (name: string, max: number, min = 0): number | null => {
    const v = text(name);
    if (v === null) return null;
    if (!/^\d{1,16}$/.test(v) || Number(v) > max || Number(v) < min) {
      throw validationError(name, `${name} must be a whole number ${min === 0 ? 'up to' : `from ${min} to`} ${max}.`);
    }
    return Number(v);
  };
  const status = text('status');
  if (status !== null) statusRange(status);
  const livemode = text('livemode');
  if (livemode !== null && livemode !== 'true' && livemode !== 'false')
    throw validationError('livemode', 'livemode must be true or false.');
  // Every path the journal keeps begins with `/`: a prefix without it would match nothing, silently
  // (carbon logs --path refuses it too).
  const path = text('path');
  if (path !== null && !path.startsWith('/')) throw validationError('path', 'path is the start of a path, such as /api/v1/offsets.');
  return {
    status,
    method: text('method'),
    path,
    code: text('code'),
    since: sinceMs(text('since')),
    requestId: text('request_id'),
    mode: livemode === null ? null : livemode === 'true' ? 'live' : 'test',
    // As the API's own limit: 0 is refused, not read as 1.
    limit: whole('limit', MAX_REQUESTS_PAGE, 1) ?? NO_FILTER.limit,
    before: whole('before', Number.MAX_SAFE_INTEGER),
    after: whole('after', Number.MAX_SAFE_INTEGER),
  };
}

/** An entry in its wire shape. */
export function requestEntry(r: JournalRecord): RequestEntry {
  const failed = r.error_type !== null || r.error_code !== null;
  return {
    object: 'request',
    id: r.request_id,
    seq: r.seq,
    created: isoTime(r.model_ms),
    real_time: isoTime(r.real_ms),
    method: r.method,
    path: r.path,
    query: r.query,
    status: r.status,
    error: failed ? { type: r.error_type, code: r.error_code, param: r.error_param, message: r.error_message } : null,
    duration_ms: r.duration_us / 1000,
    key_id: r.key_id,
    livemode: r.mode === null ? null : r.mode === 'live',
    idempotency_key: r.idempotency_key,
    replayed: r.replayed,
    offset: r.offset_id,
    instance: r.instance,
    request_body: r.request_body,
    response_body: r.response_body,
  };
}
