/**
 * The request journal's wire shape: one entry as `carbon logs --json` prints it, the served
 * sandbox's `/_sandbox/requests` returns it, and the developer page's Requests view shows it.
 */
export interface RequestEntry {
  object: 'request';
  /** The Request-Id the answer carried (`req_…`). */
  id: string;
  /** Its place in the journal: higher is newer (`carbon logs --follow` waits for higher ones). */
  seq: number;
  /** Model time (the sandbox clock), and real time beside it. */
  created: string;
  real_time: string;
  method: string;
  path: string;
  /** The query string without `?`; empty when there was none. */
  query: string;
  status: number;
  error: { type: string | null; code: string | null; param: string | null; message: string | null } | null;
  duration_ms: number;
  /** The key's id (never its text) and mode; null when the request named no key we know. */
  key_id: string | null;
  livemode: boolean | null;
  idempotency_key: string | null;
  replayed: boolean;
  /** The offset created or read. */
  offset: string | null;
  /** The process that answered (host:pid). */
  instance: string;
  /** The bodies, bounded, with every API key in them masked. */
  request_body: string;
  response_body: string;
}

/** How many entries one read returns at most. */
export const MAX_REQUESTS_PAGE = 1000;
