import type { Mode } from '../api/types.js';

/** The request journal's records, as the port (port.ts) names them. */

/**
 * The named value (meta) the service sets, in the transaction that empties the journal (a reset,
 * a snapshot loaded), to the real time (ms) it did: appendJournal writes no entry answered before
 * it (one an instance still held in memory belongs to the sandbox before).
 */
export const JOURNAL_EMPTIED_META = 'journal.emptied_ms';

/**
 * The named value (meta) each store sets, in the transaction that empties the journal (a reset, a
 * snapshot loaded), to the highest seq handed out until then: seqs go on past it, and a follower
 * starting on an emptied journal starts from it (the journal's newest seq, service/journal.ts).
 */
export const JOURNAL_SEQ_META = 'journal_seq';

/**
 * One request the model answered, as the journal keeps it: what was asked and what was answered,
 * the bodies bounded and every secret in them masked (the service's journal.ts makes it so).
 */
export interface JournalRecord {
  /** Insertion order, assigned by the store: newest is highest. */
  seq: number;
  request_id: string;
  /** Model time (the sandbox clock) and real time, both when the request was answered. */
  model_ms: number;
  real_ms: number;
  method: string;
  path: string;
  /** The query string, without `?`; empty when there is none. */
  query: string;
  status: number;
  error_type: string | null;
  error_code: string | null;
  error_param: string | null;
  error_message: string | null;
  duration_us: number;
  key_id: string | null;
  /** The mode of the key the request named (even one refused), or null when it named none. */
  mode: Mode | null;
  idempotency_key: string | null;
  replayed: boolean;
  /** The offset created or read. */
  offset_id: string | null;
  /** Which process answered (host:pid). */
  instance: string;
  request_body: string;
  response_body: string;
}

export type NewJournalRecord = Omit<JournalRecord, 'seq'> & {
  /**
   * The journal's emptied mark (JOURNAL_EMPTIED_META, 0 before any) as the answer read the ledger,
   * or null (or absent) where it read nothing of it: not stored, only compared (writtenSince).
   */
  emptied_read?: number | null;
};

/**
 * Whether an entry is written to the journal last emptied at `emptied` (0: never): one that read the
 * ledger, when it read it under that very mark (a request answered from the sandbox before a reset
 * or a load, in the same millisecond as its mark or after it, is not); one that read nothing of it,
 * when it was answered at the mark or after.
 */
export function writtenSince(record: NewJournalRecord, emptied: number): boolean {
  const read = record.emptied_read;
  return read === undefined || read === null ? record.real_ms >= emptied : read === emptied;
}

/** Which entries of the journal to read: each filter is left out when null. */
export interface JournalQuery {
  limit: number;
  /** Older than this entry, newest first. */
  beforeSeq: number | null;
  /** Newer than this entry, oldest first (what a follower has not seen yet). */
  afterSeq: number | null;
  /** Status from–to, inclusive. */
  status: readonly [number, number] | null;
  method: string | null;
  pathPrefix: string | null;
  code: string | null;
  /** Real time at or after. */
  sinceMs: number | null;
  requestId: string | null;
  mode: Mode | null;
}

/** The journal's bound, applied as entries are written: the newest `keep`, none older than `maxAgeMs` (real time). */
export interface JournalRetention {
  keep: number;
  maxAgeMs: number;
  now: number;
}
