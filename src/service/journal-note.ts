import type { ApiRequest, ApiResponse, Mode } from '../api/types.js';
import type { NewJournalRecord } from '../store/port.js';
import { redactSecrets } from './keys.js';
import { maskSecretFields, maskSecretParams } from './secret-fields.js';

/**
 * An answered request as the request journal keeps it (journal.ts writes it): its bodies and query
 * serialised, API keys and what is named as a secret masked, each bounded to JOURNAL_BODY_LIMIT, so
 * no answer's objects are held while it waits to be written.
 */

/** Each body, and the query, is kept up to this many characters. */
export const JOURNAL_BODY_LIMIT = 8 * 1024;

/** What the service notes of a request while answering it. */
export interface Trace {
  /** When the request started, in microseconds (monotonicUs). */
  started: number;
  keyId: string | null;
  mode: Mode | null;
  /** Model time, once the account is read. */
  now: number | null;
  /** The journal's emptied mark the answer read the ledger under (journal-types.ts, writtenSince); null before it reads any. */
  emptied: number | null;
  offsetId: string | null;
  replayed: boolean;
}

/** An entry as it waits to be written: its model time is null until the account's clock is read. */
export type Note = Omit<NewJournalRecord, 'model_ms'> & { model_ms: number | null };

/**
 * A journal column's text with every secret in it masked, by the column's name: API keys (as every
 * echo of a caller's input is), and in a query or a request body the values of secret-named
 * parameters and fields. What note() records, and what a snapshot's load masks again (its file can
 * be edited by hand), not bounded there: bounding is note()'s, and already done.
 */
export function maskedColumn(name: string, text: string): string {
  if (name === 'query') return redactSecrets(maskSecretParams(text));
  if (name === 'request_body') return redactSecrets(maskSecretFields(text));
  // carbon's own batch keys whole (their digest is a long run of letters), to match the rows they bought; any other masked.
  return redactSecrets(text, { runs: name === 'idempotency_key' ? 'after-mode' : undefined });
}

/** A column's text as the journal keeps it: masked, and bounded (saying how much was left out). */
function journalText(name: string, text: string, more?: string): string {
  const shown = maskedColumn(name, text);
  if (shown.length <= JOURNAL_BODY_LIMIT && more === undefined) return shown;
  return `${shown.slice(0, JOURNAL_BODY_LIMIT)}…[${more ?? `${shown.length - JOURNAL_BODY_LIMIT} more characters`}]`;
}

/**
 * An answer's body as the journal keeps it. A page of a list is serialised an item at a time, and
 * only until the kept length is passed: a `list --all` of a million offsets answers ten thousand
 * pages, and serialising each whole to keep its first 8 KiB cost it half its rate. The items kept
 * are serialised once, and put in the place of `data` in the rest of the body.
 */
function responseText(body: unknown): string {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return journalText('response_body', JSON.stringify(body) ?? '');
  const items: string[] = [];
  let length = 0;
  while (items.length < data.length && length <= JOURNAL_BODY_LIMIT) {
    // As JSON.stringify writes an array's item: `null` for what it would leave out.
    const item = JSON.stringify(data[items.length]) ?? 'null';
    items.push(item);
    length += item.length + 1;
  }
  const text = JSON.stringify({ ...(body as object), data: DATA_HOLE }).replace(DATA_HOLE_JSON, () => `[${items.join(',')}]`);
  const more = data.length - items.length;
  return journalText('response_body', text, more === 0 ? undefined : `${more} more of ${data.length} items`);
}

/** Stands for `data` while the rest of a list's body is serialised: no body holds this string. */
const DATA_HOLE = '\u0000carbon-journal-data\u0000';
const DATA_HOLE_JSON = JSON.stringify(DATA_HOLE);

function queryString(query: ApiRequest['query']): string {
  let any = false;
  for (const _ in query) {
    any = true;
    break;
  }
  if (!any) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(name, v);
  }
  return search.toString();
}

interface ErrorBody {
  error?: { type?: string; code?: string; param?: string; message?: string };
}

/** The entry of one answered request, as it waits to be written. */
export function note(
  id: string,
  request: ApiRequest,
  response: ApiResponse,
  trace: Trace,
  realMs: number,
  durationUs: number,
  instance: string,
): Note {
  const error = response.status >= 400 ? ((response.body as ErrorBody | null)?.error ?? {}) : {};
  const idempotencyKey = request.headers['idempotency-key'];
  return {
    request_id: id,
    model_ms: trace.now,
    real_ms: realMs,
    method: request.method.toUpperCase(),
    path: journalText('path', request.path),
    // As it came over HTTP, when it did ("what did my app send?"); else as the client's parameters make it.
    query: journalText('query', request.rawQuery ?? queryString(request.query)),
    status: response.status,
    error_type: error.type ?? null,
    error_code: error.code ?? null,
    error_param: error.param === undefined ? null : journalText('error_param', error.param),
    error_message: error.message === undefined ? null : journalText('error_message', error.message),
    duration_us: durationUs,
    key_id: trace.keyId,
    mode: trace.mode,
    // The caller's own label, as it was sent (a key in it masked): not its runs of letters and digits, which are its usual alphabet.
    idempotency_key: idempotencyKey === undefined ? null : journalText('idempotency_key', idempotencyKey),
    replayed: trace.replayed,
    offset_id: trace.offsetId,
    instance,
    emptied_read: trace.emptied,
    request_body: journalText('request_body', request.body),
    // A HEAD is answered without its body: none was sent to the caller.
    response_body: request.method.toUpperCase() === 'HEAD' ? '' : responseText(response.body),
  };
}
