import type { Mode, OffsetStatus } from '../api/types.js';
import type { Health } from './health.js';
import type { JournalQuery, JournalRecord, JournalRetention, NewJournalRecord } from './journal-types.js';
import type { SnapshotTable } from './snapshot-tables.js';

/**
 * The storage port: everything the model keeps, in the model's own terms. The service decides
 * (its rules are plain functions: src/service/access.ts, purchase.ts, lifecycle.ts, pricing.ts,
 * validation.ts), a store stores. No SQL and no driver type crosses this file, so a store
 * is chosen at run time (SQLite in the data directory, or PostgreSQL by URL) and the same
 * service, server and contract suite run on each.
 *
 * Two rules every implementation keeps:
 * - `transaction(fn)` runs `fn` with every read and write it makes as one atomic unit that no
 *   other writer, in this process or another, interleaves with: concurrent transactions end as
 *   some serial order of them would have, on every store (docs/reliability.md says how each keeps it).
 *   It may run `fn` again from the start (a serialization failure, a lost connection before commit),
 *   so `fn` must do nothing outside `tx` that cannot be repeated. What `fn` throws rolls everything back and is rethrown.
 * - Reads outside a transaction see committed state only, and never wait for a writer.
 */

export type AccountStatus = 'active' | 'suspended' | 'unapproved';
export type Permission = 'purchase' | 'read_only';
export type ReviewState = 'pending' | 'approved' | 'rejected';
/** The three keys a fresh account starts with. */
export type DefaultKey = 'test' | 'live' | 'read_only';

export interface AccountRecord {
  status: AccountStatus;
  /** Millicents per kg. */
  rate: number;
  review_limit_cents: number;
  /** The sandbox clock: model time is the wall clock plus this. */
  clock_offset_ms: number;
  /** Requests allowed per window per key; null is unlimited. */
  rate_limit_requests: number | null;
  rate_limit_window_ms: number;
}

export interface KeyRecord {
  id: string;
  /** SHA-256 of the key: a store never holds a usable key in its ledger. */
  hash: Uint8Array;
  mode: Mode;
  permission: Permission;
  last4: string;
  created_ms: number;
  revoked_ms: number | null;
}

export interface OffsetRecord {
  /** Insertion order, assigned by the store inside the purchase's transaction: the list's order. */
  seq: number;
  id: string;
  mode: Mode;
  status: OffsetStatus;
  kg: number;
  amount_cents: number;
  rate: number;
  req_kg: number | null;
  req_amount_cents: number | null;
  reference: string | null;
  created_ms: number;
  /** When a processing offset places by itself; null while it waits for review. */
  settle_at_ms: number | null;
  review: ReviewState | null;
  placed_ms: number | null;
  /** Chosen at purchase for live offsets; public only once the offset is placed. */
  certificate_id: string | null;
}

/** An offset as a purchase writes it: the store adds `seq`. */
export type NewOffset = Omit<OffsetRecord, 'seq'>;

export interface ImpactTotals {
  placed_kg: number;
  processing_kg: number;
  offsets: number;
}

export interface IdempotencyRecord {
  fingerprint: string;
  offset_id: string;
  created_ms: number;
}

/** The full text of the keys the sandbox handed out: the developer page's part. */
export interface KeyVault {
  defaults: Partial<Record<DefaultKey, string>>;
  secrets: Record<string, string>;
}

export interface PageQuery {
  limit: number;
  /** Only offsets older (lower seq) than this one. */
  beforeSeq: number | null;
  reference: string | null;
}

/**
 * Filters of the developer page's offset table (the API lists by exact reference only). Here
 * `reference` is a prefix: `ops` finds `ops-flight-2`; `%` and `_` are plain characters.
 */
export interface BrowseQuery extends PageQuery {
  status: OffsetStatus | null;
  /** created_ms at or after. */
  since: number | null;
  /** created_ms before. */
  until: number | null;
}

/**
 * Reads: committed state outside a transaction, the transaction's own view inside one. A store
 * writes them once, for itself and its transactions alike (LedgerTx extends them).
 */
export interface LedgerReads {
  /** Undefined only before provisioning (or after a store was emptied by hand). */
  account(): Promise<AccountRecord | undefined>;
  /**
   * The key whose full text is `secret`, in any state, or undefined. The ledger holds only keys'
   * SHA-256 digests: the store hashes `secret` to look it up, and outside a transaction may keep
   * the answer, by the text, for as long as it keeps the account (so a revocation is seen at once).
   */
  keyBySecret(secret: string): Promise<KeyRecord | undefined>;
  keys(): Promise<KeyRecord[]>;
  vault(): Promise<KeyVault>;
  balance(mode: Mode): Promise<number>;
  /** The stored totals; offsets due to place but not yet written are still counted processing. */
  impact(mode: Mode): Promise<ImpactTotals>;
  /** kg and count of processing offsets of `mode` whose placement time is at or before `now`. */
  due(mode: Mode, now: number): Promise<{ kg: number; count: number }>;
  offset(id: string): Promise<OffsetRecord | undefined>;
  offsetByCertificate(certificateId: string): Promise<OffsetRecord | undefined>;
  /** Newest first (highest seq first). */
  page(mode: Mode, query: PageQuery): Promise<OffsetRecord[]>;
  browse(mode: Mode, query: BrowseQuery): Promise<OffsetRecord[]>;
  /** Offsets waiting for review, oldest first. */
  reviewQueue(limit: number): Promise<OffsetRecord[]>;
  /** kg placed or processing per UTC day or month (YYYY-MM-DD / YYYY-MM), oldest first. */
  kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null): Promise<Array<{ period: string; kg: number }>>;
  /**
   * A small named value the model keeps beside the ledger (the fault setting, the developer
   * page's signing secret, its login tokens and sessions): what every instance sharing the store must
   * agree on. Outside a transaction a store may answer from a cache, which it drops as it drops
   * its cached account: at once after its own writes, within a turn of the event loop after
   * another instance's.
   */
  meta(name: string): Promise<string | undefined>;
}

/**
 * What a batch of purchases of one mode reads, in one call (one round trip on a networked store),
 * inside the batch's transaction.
 */
export interface PurchaseFacts {
  account: AccountRecord | undefined;
  /** The balance of the mode. */
  available: number;
  /** The batch's Idempotency-Keys that were used before in this mode, by key. */
  priors: Map<string, IdempotencyRecord>;
  /** created_ms of the newest offset of the mode. */
  newestCreated: number | null;
  /** The batch's API keys as they stand now, by `hashId(hash)`: a write authenticates inside itself. */
  keys: Map<string, KeyRecord>;
}

/** A purchase as the rule decided it: the offset, and the Idempotency-Key to record with it. */
export interface NewPurchase {
  offset: NewOffset;
  idempotency: { key: string; fingerprint: string } | null;
}

/** The request journal's records, written apart (journal-types.ts) so this file reads whole. */
export type { JournalQuery, JournalRecord, JournalRetention, NewJournalRecord } from './journal-types.js';
export { JOURNAL_EMPTIED_META, JOURNAL_SEQ_META } from './journal-types.js';

/** A key's SHA-256 as a map key. */
export function hashId(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('base64');
}

/** Writes, each in domain terms; only inside `transaction`. */
export interface LedgerTx extends LedgerReads {
  purchaseFacts(mode: Mode, idempotencyKeys: string[], keyHashes: Uint8Array[]): Promise<PurchaseFacts>;
  /** Creates the account, its balances at 0 and its totals at 0. */
  createAccount(account: AccountRecord, now: number): Promise<void>;
  updateAccount(patch: Partial<AccountRecord>): Promise<AccountRecord>;
  /** Adds to (or, negative, takes from) a balance with a ledger entry; a balance never goes below 0. */
  moveBalance(mode: Mode, cents: number, kind: 'topup' | 'charge' | 'refund', offsetId: string | null, now: number): Promise<number>;
  /**
   * Records purchases of one mode, in order: each offset, its charge, the totals, and the
   * Idempotency-Key when there is one. Returns the offsets with their `seq`, in the same order.
   */
  insertOffsets(purchases: NewPurchase[]): Promise<OffsetRecord[]>;
  /** Every processing offset whose placement time is at or before `now` becomes placed at that time. */
  placeDue(now: number): Promise<void>;
  /** processing → placed now (an approved review). */
  place(offset: OffsetRecord, now: number, review: ReviewState | null): Promise<OffsetRecord>;
  /** processing → refunded: the offset leaves the totals; the charge goes back through moveBalance. */
  markRefunded(offset: OffsetRecord, review: ReviewState | null): Promise<OffsetRecord>;
  insertKey(key: KeyRecord, secret: string, defaultFor: DefaultKey | null): Promise<void>;
  revokeKey(id: string, now: number): Promise<boolean>;
  /** Sets (or, with null, removes) a named value; see `meta`. */
  putMeta(name: string, value: string | null): Promise<void>;
  /**
   * Removes the named values whose name starts with `prefix`; with `expiredBy`, only those whose
   * value starts with an expiry (ms) at or before it (the developer page's tokens and sessions).
   */
  dropMetas(prefix: string, expiredBy?: number): Promise<void>;
  /**
   * Deletes every account, balance, offset, key, Idempotency-Key and journal entry (named values stay). The key
   * vault forgets which keys were the starting ones but keeps their texts, retired (at most 1,000
   * of keys no longer in the ledger): a snapshot loaded later brings those keys back with them.
   */
  clear(): Promise<void>;
  /**
   * Replaces the ledger with a snapshot's rows (SNAPSHOT_TABLES): everything clear() deletes, then
   * the rows as given (offsets and entries keep their seq; the next purchase continues after them);
   * `meta` replaces only the named values in `metaNames`. The key vault keeps the text of each key
   * whose SHA-256 matches a key of the snapshot (so the starting keys this sandbox handed out work
   * again), and takes the starting keys' roles from `default_for`. Inside a transaction: what
   * `rows` throws rolls it all back.
   */
  importLedger(rows: LedgerImport, metaNames: readonly string[]): Promise<void>;
  /**
   * The first rule kept across the ledger's rows (ledger-rules.ts: each offset's charge for its kg
   * at its rate, balances and impact the sums of their rows, keys naming offsets…) that the ledger
   * as this transaction sees it breaks, said for a person; null when it keeps them all. A few
   * queries, no row read into memory.
   */
  ledgerProblem(): Promise<string | null>;
}

/** The tables a snapshot holds, written once for both stores (snapshot-tables.ts). */
export { type ColumnKind, SNAPSHOT_TABLES, type SnapshotTable } from './snapshot-tables.js';

/** A value of a snapshot's row: `bytes` columns are Uint8Array. */
export type SnapshotValue = number | string | Uint8Array | null;
/** A row: its values in the order of its table's columns in SNAPSHOT_TABLES. */
export type SnapshotRow = SnapshotValue[];

/** A read of the whole ledger for a snapshot: one consistent view that no writer waits for. */
export interface LedgerExport {
  /** The rows each table holds in this view. */
  readonly counts: Record<SnapshotTable, number>;
  /** A table's rows, a batch at a time, in a stable order (seq, or the primary key); never all held at once. */
  rows(table: SnapshotTable): AsyncIterable<SnapshotRow[]>;
  /** Ends the view (also when the rows were not all read). */
  close(): Promise<void>;
}

/** What an import replaces: the tables' rows, a batch at a time, each batch of one table, tables in SNAPSHOT_TABLES' order. */
export type LedgerImport = AsyncIterable<{ table: SnapshotTable; rows: SnapshotRow[] }>;

/**
 * A store: the reads, transactions, and what serving needs of it. It does not say which kind of
 * store it is; what differs between stores is asked as a capability (`health`), and where the
 * ledger is, for people, is `label`.
 */
export interface LedgerStore extends LedgerReads {
  /** Where the ledger is, as it may be shown: a path, or a URL with its password masked. */
  readonly label: string;
  /**
   * `wait: false`: give up at once (a transient LedgerError) when another writer holds the lock,
   * for work the next writer can do as well (recording placements that are due).
   */
  transaction<T>(fn: (tx: LedgerTx) => Promise<T>, options?: { wait?: boolean }): Promise<T>;
  /**
   * Counts one request of `keyId` against a fixed window; the seconds to wait when it is over
   * `limit`, else null. Held where the store's users share it: one process's memory for SQLite
   * (a served sandbox is one process), a table for PostgreSQL (every instance counts together).
   */
  takeRequest(keyId: string, now: number, limit: number, windowMs: number): Promise<number | null>;
  /**
   * Appends entries (but those answered before the journal was last emptied: JOURNAL_EMPTIED_META), in order, in a
   * transaction of their own (no writer lock of the ledger's taken); once every hundredth of `retention.keep` entries
   * written to the ledger, it then deletes what is past the retention (journal-sql.ts, `prunes`). `waitMs`: how long
   * to wait for a lock another writer holds (0: not at all; never longer than the store's own deadline for any write)
   * before giving up with a transient LedgerError, nothing written.
   */
  appendJournal(records: NewJournalRecord[], retention: JournalRetention, options?: { waitMs?: number }): Promise<void>;
  /** Entries of the journal, committed ones only. */
  journal(query: JournalQuery): Promise<JournalRecord[]>;
  /**
   * A consistent read of every table of SNAPSHOT_TABLES (of `meta`, only `metaNames`), which
   * never holds the writer lock: writers go on while it is read.
   */
  exportLedger(metaNames: readonly string[]): Promise<LedgerExport>;
  /** Whether the store can serve, and if not, why (the health check). */
  health(): Promise<Health>;
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /**
   * The process ends right after (the CLI's commands): what the operating system releases at the
   * exit anyway may be left to it (sqlite-store.ts, close).
   */
  exiting?: boolean;
}
