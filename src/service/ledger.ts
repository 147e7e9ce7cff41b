import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Mode } from '../api/types.js';
import { ApiError } from './errors.js';
import { LedgerError } from './ledger-error.js';
import { hashKey, newApiKey, randomBase62 } from './keys.js';
import { price } from './pricing.js';
import type { PurchaseRequest } from './validation.js';

/**
 * The ledger: every durable fact of the model, in one SQLite file. Each operation that moves
 * money (purchase, refund, top-up) is one IMMEDIATE transaction, so processes sharing the file
 * serialise on SQLite's write lock and can never overdraw a balance or lose a charge; the
 * `CHECK (available_cents >= 0)` is a last line of defence behind the explicit check.
 */

export type AccountStatus = 'active' | 'suspended' | 'unapproved';
export type Permission = 'purchase' | 'read_only';

export interface AccountRow {
  status: AccountStatus;
  rate: number;
  review_limit_cents: number;
  clock_offset_ms: number;
  /** Requests allowed per window per key; null is unlimited. */
  rate_limit_requests: number | null;
  rate_limit_window_ms: number;
}

export interface KeyRow {
  id: string;
  hash: Buffer;
  livemode: number;
  permission: Permission;
  last4: string;
  created_ms: number;
  revoked_ms: number | null;
}

export interface OffsetRow {
  seq: number;
  id: string;
  livemode: number;
  status: 'processing' | 'placed' | 'refunded';
  kg: number;
  amount_cents: number;
  rate: number;
  req_kg: number | null;
  req_amount_cents: number | null;
  reference: string | null;
  created_ms: number;
  settle_at_ms: number | null;
  review: 'pending' | 'approved' | 'rejected' | null;
  placed_ms: number | null;
  certificate_id: string | null;
}

export interface ImpactRow {
  placed_kg: number;
  processing_kg: number;
  offsets: number;
}

export interface NewKey {
  id: string;
  secret: string;
  mode: Mode;
  permission: Permission;
}

/** The model's timing rules (spec part 3), in model milliseconds. */
export const TIMING = {
  /** A test offset is placed this long after creation ("a few seconds"). */
  testPlacementMs: 3_000,
  /** A live offset is placed this long after creation ("usually within minutes"). */
  livePlacementMs: 60_000,
  /** An Idempotency-Key is remembered this long, as Stripe does. */
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
} as const;

/** What a fresh account starts with (docs/service-model.md). */
export const DEFAULTS = {
  rate: 4000,
  reviewLimitCents: 500_000,
  testBalanceCents: 100_000,
  liveBalanceCents: 0,
  /** Off until `carbon sandbox rate-limit` turns it on: a sandbox should not throttle its tests by surprise. */
  rateLimitRequests: null,
  rateLimitWindowMs: 1000,
} as const;

const SCHEMA_VERSION = 1;

/**
 * How long a write waits for another process's lock before failing with "locked": 5 s, or
 * CARBON_BUSY_TIMEOUT_MS (whole milliseconds), which lets tests and impatient scripts wait less.
 */
function busyTimeoutMs(): number {
  const raw = process.env.CARBON_BUSY_TIMEOUT_MS;
  return raw !== undefined && /^\d{1,7}$/.test(raw) ? Number(raw) : 5000;
}

const SCHEMA = `
CREATE TABLE account (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  status TEXT NOT NULL CHECK (status IN ('active','suspended','unapproved')),
  rate INTEGER NOT NULL CHECK (rate > 0),
  review_limit_cents INTEGER NOT NULL CHECK (review_limit_cents >= 0),
  clock_offset_ms INTEGER NOT NULL DEFAULT 0,
  rate_limit_requests INTEGER,
  rate_limit_window_ms INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE balances (
  livemode INTEGER PRIMARY KEY,
  available_cents INTEGER NOT NULL CHECK (available_cents >= 0)
);
CREATE TABLE entries (
  seq INTEGER PRIMARY KEY,
  livemode INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('topup','charge','refund')),
  amount_cents INTEGER NOT NULL,
  offset_id TEXT,
  created_ms INTEGER NOT NULL
);
CREATE TABLE offsets (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  livemode INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing','placed','refunded')),
  kg INTEGER NOT NULL,
  amount_cents INTEGER NOT NULL,
  rate INTEGER NOT NULL,
  req_kg INTEGER,
  req_amount_cents INTEGER,
  reference TEXT,
  created_ms INTEGER NOT NULL,
  settle_at_ms INTEGER,
  review TEXT,
  placed_ms INTEGER,
  certificate_id TEXT UNIQUE
);
CREATE INDEX offsets_by_mode ON offsets (livemode, seq);
CREATE INDEX offsets_by_reference ON offsets (livemode, reference, seq) WHERE reference IS NOT NULL;
CREATE INDEX offsets_due ON offsets (settle_at_ms) WHERE status = 'processing';
CREATE TABLE impact (
  livemode INTEGER PRIMARY KEY,
  placed_kg INTEGER NOT NULL,
  processing_kg INTEGER NOT NULL,
  offsets INTEGER NOT NULL
);
CREATE TABLE idempotency (
  livemode INTEGER NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  offset_id TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (livemode, key)
) WITHOUT ROWID;
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  livemode INTEGER NOT NULL,
  permission TEXT NOT NULL CHECK (permission IN ('purchase','read_only')),
  last4 TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER
);
`;

export const LEDGER_FILE = 'ledger.db';
export { LedgerError };

function lm(mode: Mode): number {
  return mode === 'live' ? 1 : 0;
}

function prepareAll(db: Database.Database) {
  return {
    account: db.prepare<[], AccountRow>(
      'SELECT status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms FROM account WHERE id = 1',
    ),
    keyByHash: db.prepare<[Buffer], KeyRow>('SELECT * FROM api_keys WHERE hash = ?'),
    balance: db.prepare<[number], { available_cents: number }>('SELECT available_cents FROM balances WHERE livemode = ?'),
    impact: db.prepare<[number], ImpactRow>('SELECT placed_kg, processing_kg, offsets FROM impact WHERE livemode = ?'),
    offsetById: db.prepare<[string], OffsetRow>('SELECT * FROM offsets WHERE id = ?'),
    offsetByCertificate: db.prepare<[string], OffsetRow>('SELECT * FROM offsets WHERE certificate_id = ?'),
    page: db.prepare<[number, number, number], OffsetRow>(
      'SELECT * FROM offsets WHERE livemode = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
    ),
    pageByReference: db.prepare<[number, string, number, number], OffsetRow>(
      'SELECT * FROM offsets WHERE livemode = ? AND reference = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
    ),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    anyDue: db.prepare<[number], { one: number }>(
      "SELECT 1 AS one FROM offsets WHERE status = 'processing' AND settle_at_ms <= ? LIMIT 1",
    ),
    dueByMode: db.prepare<[number], { livemode: number; kg: number }>(
      // INDEXED BY: left to itself the planner walks offsets_by_mode to save a sort for the GROUP
      // BY, reading every offset in the ledger (170 ms at a million) to settle a handful.
      "SELECT livemode, SUM(kg) AS kg FROM offsets INDEXED BY offsets_due WHERE status = 'processing' AND settle_at_ms <= ? GROUP BY livemode",
    ),
    placeDue: db.prepare<[number]>(
      `UPDATE offsets SET status = 'placed', placed_ms = settle_at_ms, settle_at_ms = NULL,
         certificate_id = CASE WHEN livemode = 1 THEN 'cert_' || lower(hex(randomblob(12))) END
       WHERE status = 'processing' AND settle_at_ms <= ?`,
    ),
    moveToPlaced: db.prepare<[{ kg: number; livemode: number }]>(
      'UPDATE impact SET processing_kg = processing_kg - @kg, placed_kg = placed_kg + @kg WHERE livemode = @livemode',
    ),
    idempotency: db.prepare<[number, string], { fingerprint: string; offset_id: string; created_ms: number }>(
      'SELECT fingerprint, offset_id, created_ms FROM idempotency WHERE livemode = ? AND key = ?',
    ),
    rememberKey: db.prepare(
      'INSERT OR REPLACE INTO idempotency (livemode, key, fingerprint, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)',
    ),
    insertOffset: db.prepare(
      `INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference,
         created_ms, settle_at_ms, review)
       VALUES (@id, @livemode, 'processing', @kg, @amount_cents, @rate, @req_kg, @req_amount_cents, @reference,
         @created_ms, @settle_at_ms, @review)`,
    ),
    entry: db.prepare('INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)'),
    addBalance: db.prepare<[number, number]>('UPDATE balances SET available_cents = available_cents + ? WHERE livemode = ?'),
    addImpact: db.prepare<[number, number, number, number]>(
      'UPDATE impact SET processing_kg = processing_kg + ?, placed_kg = placed_kg + ?, offsets = offsets + ? WHERE livemode = ?',
    ),
    insertKey: db.prepare(
      'INSERT INTO api_keys (id, hash, livemode, permission, last4, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
    ),
  };
}

/** The inputs of one purchase, validated and priced at the account's rate inside the transaction. */
export interface PurchaseInput {
  mode: Mode;
  request: PurchaseRequest;
  idempotencyKey: string | null;
  now: number;
}

interface LedgerCache {
  version: number;
  ownWrites: number;
  account: AccountRow | undefined;
  keys: Map<string, KeyRow>;
  balanceWrites: number;
  /** By livemode (0 test, 1 live). */
  balances: [number | undefined, number | undefined];
}

export class Ledger {
  private readonly s: ReturnType<typeof prepareAll>;
  /** Made once: db.transaction() builds its wrappers anew on every call. */
  private readonly tx: {
    settle: Database.Transaction<(now: number) => void>;
    purchase: Database.Transaction<(input: PurchaseInput) => { offset: OffsetRow; replayed: boolean }>;
  };

  private constructor(
    readonly db: Database.Database,
    readonly path: string,
  ) {
    this.s = prepareAll(db);
    this.tx = {
      settle: db.transaction((now: number) => this.settleDueInTransaction(now)),
      purchase: db.transaction((input: PurchaseInput) => this.purchaseInTransaction(input)),
    };
  }

  /**
   * Opens (creating when absent) the ledger in `dir`: the directory 0700, the file 0600, WAL
   * journal. `provision` is called, inside the transaction that creates the account, with the
   * keys a fresh account starts with: the caller keeps them (the developer page's role).
   */
  static open(dir: string, provision: (keys: NewKey[]) => void = () => {}, clock: () => number = Date.now): Ledger {
    const path = join(dir, LEDGER_FILE);
    let db: Database.Database;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      closeSync(openSync(path, 'a', 0o600));
      // Modes apply only to what is created: take back what a copy or a restore may have widened.
      // Best effort; a directory that is not ours to change is left alone.
      for (const [p, mode] of [[dir, 0o700], [path, 0o600]] as const) {
        try {
          chmodSync(p, mode);
        } catch {
          // Not the owner: nothing to do here.
        }
      }
      db = new Database(path);
    } catch (err) {
      throw storageError(err, path);
    }
    return Ledger.init(db, path, provision, clock);
  }

  /** A private ledger in memory, for tests and throwaway models. */
  static memory(provision: (keys: NewKey[]) => void = () => {}, clock: () => number = Date.now): Ledger {
    return Ledger.init(new Database(':memory:'), ':memory:', provision, clock);
  }

  private static init(db: Database.Database, path: string, provision: (keys: NewKey[]) => void, clock: () => number): Ledger {
    try {
      db.pragma(`busy_timeout = ${busyTimeoutMs()}`);
      if (path !== ':memory:') {
        db.pragma('journal_mode = WAL');
        // NORMAL in WAL mode: a commit survives any process crash (kill -9 included); an OS
        // crash or power loss may lose the last commits but never corrupts. docs/reliability.md.
        db.pragma('synchronous = NORMAL');
      }
      if ((db.pragma('user_version', { simple: true }) as number) < SCHEMA_VERSION) {
        db.transaction(() => {
          if ((db.pragma('user_version', { simple: true }) as number) < SCHEMA_VERSION) {
            db.exec(SCHEMA);
            db.pragma(`user_version = ${SCHEMA_VERSION}`);
          }
        }).immediate();
      }
      const ledger = new Ledger(db, path);
      // A fresh account starts at wall-clock time (its sandbox clock offset is still 0).
      if (!ledger.s.account.get()) ledger.provision(clock(), provision);
      return ledger;
    } catch (err) {
      db.close();
      throw storageError(err, path);
    }
  }

  close(): void {
    this.db.close();
  }

  /** Creates the account if it is still missing (another process may have won the race). */
  private provision(now: number, keep: (keys: NewKey[]) => void): void {
    this.changing(() => this.db.transaction(() => {
      if (this.s.account.get()) return;
      this.db
        .prepare(
          `INSERT INTO account (id, status, rate, review_limit_cents, rate_limit_requests, rate_limit_window_ms, created_ms)
           VALUES (1, 'active', ?, ?, ?, ?, ?)`,
        )
        .run(DEFAULTS.rate, DEFAULTS.reviewLimitCents, DEFAULTS.rateLimitRequests, DEFAULTS.rateLimitWindowMs, now);
      this.db.prepare('INSERT INTO balances VALUES (0, 0), (1, 0)').run();
      this.db.prepare('INSERT INTO impact VALUES (0, 0, 0, 0), (1, 0, 0, 0)').run();
      this.topUpInTransaction('test', DEFAULTS.testBalanceCents, now);
      const keys = [
        this.createKey('test', 'purchase', now),
        this.createKey('live', 'purchase', now),
        this.createKey('test', 'read_only', now),
      ];
      keep(keys);
    }).immediate());
  }

  /**
   * Every request reads the account and its key; both change rarely. They are kept between
   * requests and dropped when anything may have changed them: a commit by another connection
   * (another process: PRAGMA data_version moves) or a write through this one (ownWrites). The
   * check runs once per synchronous turn outside a transaction (`carbon serve` answers the
   * requests that arrived together in one such turn, after reading them all), and on every read
   * inside one.
   * The balances are kept by the same rule, with their own count of this connection's writes
   * (a purchase moves a balance, not the account or the keys), and only outside a transaction:
   * a read inside one may see a write that is then rolled back.
   */
  private cache: LedgerCache | undefined;
  private ownWrites = 0;
  private balanceWrites = 0;
  private checkedThisTurn = false;
  /** Made once, not a closure per check. */
  private readonly nextTurn = (): void => {
    this.checkedThisTurn = false;
  };

  private fresh(): LedgerCache {
    let cache = this.cache;
    if (cache === undefined || cache.ownWrites !== this.ownWrites || this.db.inTransaction || !this.checkedThisTurn) {
      const version = this.s.dataVersion.get()!;
      if (!this.db.inTransaction) {
        this.checkedThisTurn = true;
        queueMicrotask(this.nextTurn);
      }
      if (cache === undefined || cache.version !== version || cache.ownWrites !== this.ownWrites) {
        cache = { version, ownWrites: this.ownWrites, account: undefined, keys: new Map(), balanceWrites: this.balanceWrites, balances: [undefined, undefined] };
        this.cache = cache;
      }
    }
    return cache;
  }

  /** Runs a write to the account or the keys: the cached copies are dropped before and after. */
  private changing<T>(write: () => T): T {
    this.ownWrites++;
    try {
      return write();
    } finally {
      this.ownWrites++;
    }
  }

  account(): AccountRow {
    const cache = this.fresh();
    const row = cache.account ?? this.s.account.get();
    if (!row) throw new LedgerError('The ledger has no account.', this.path, 'Run `carbon sandbox reset` to provision one.');
    cache.account = Object.freeze(row);
    return row;
  }

  /** `id` is the digest in base64, when the caller has it already. */
  keyByHash(hash: Buffer, id = hash.toString('base64')): KeyRow | undefined {
    const cache = this.fresh();
    let row = cache.keys.get(id);
    if (row === undefined) {
      row = this.s.keyByHash.get(hash);
      // Only keys that exist are kept, and only so many: unknown keys sprayed at a server cost memory.
      if (row !== undefined && cache.keys.size < 1000) cache.keys.set(id, Object.freeze(row));
    }
    return row;
  }

  balance(mode: Mode): number {
    const livemode = lm(mode);
    if (this.db.inTransaction) return this.s.balance.get(livemode)?.available_cents ?? 0;
    const cache = this.fresh();
    if (cache.balanceWrites !== this.balanceWrites) {
      cache.balanceWrites = this.balanceWrites;
      cache.balances = [undefined, undefined];
    }
    let cents = cache.balances[livemode];
    if (cents === undefined) {
      cents = this.s.balance.get(livemode)?.available_cents ?? 0;
      cache.balances[livemode] = cents;
    }
    return cents;
  }

  /** Every change to a balance goes through here, so the kept balances are dropped with it. */
  private addBalance(cents: number, livemode: number): void {
    this.balanceWrites++;
    this.s.addBalance.run(cents, livemode);
  }

  impact(mode: Mode): ImpactRow {
    return this.s.impact.get(lm(mode)) ?? { placed_kg: 0, processing_kg: 0, offsets: 0 };
  }

  /** The offset with this id, if it belongs to `mode`. */
  offset(mode: Mode, id: string): OffsetRow | undefined {
    const row = this.s.offsetById.get(id);
    return row && row.livemode === lm(mode) ? row : undefined;
  }

  offsetByCertificate(certificateId: string): OffsetRow | undefined {
    return this.s.offsetByCertificate.get(certificateId);
  }

  /** One page, newest first, strictly older than `beforeSeq`; one row more than asked tells has_more. */
  page(mode: Mode, limit: number, beforeSeq: number, reference: string | null): OffsetRow[] {
    return reference === null
      ? this.s.page.all(lm(mode), beforeSeq, limit)
      : this.s.pageByReference.all(lm(mode), reference, beforeSeq, limit);
  }

  /** Places every offset whose placement time has come. Cheap when none has: one indexed probe. */
  settleDue(now: number): void {
    if (!this.s.anyDue.get(now)) return;
    this.tx.settle.immediate(now);
  }

  /** settleDue() inside a write transaction that is already open. */
  private settleDueInTransaction(now: number): void {
    if (!this.s.anyDue.get(now)) return;
    for (const due of this.s.dueByMode.all(now)) this.s.moveToPlaced.run(due);
    this.s.placeDue.run(now);
  }

  /**
   * One purchase, all or nothing: replay or conflict on a known Idempotency-Key, price at the
   * account's rate, refuse when the balance falls short, else charge, record and remember.
   */
  purchase(input: PurchaseInput): { offset: OffsetRow; replayed: boolean } {
    return this.tx.purchase.immediate(input);
  }

  /**
   * Placements due by `now` are applied first, in the same transaction: a purchase then costs one
   * commit, not two, once earlier offsets come due (the commit is most of a purchase's time).
   */
  private purchaseInTransaction(input: PurchaseInput): { offset: OffsetRow; replayed: boolean } {
    const { mode, request, idempotencyKey, now } = input;
    const livemode = lm(mode);
    const fingerprint = JSON.stringify([request.kg ?? null, request.amount_cents ?? null, request.reference]);
    this.settleDueInTransaction(now);
    if (idempotencyKey !== null) {
      const prior = this.s.idempotency.get(livemode, idempotencyKey);
      if (prior && prior.created_ms > now - TIMING.idempotencyTtlMs) {
        if (prior.fingerprint !== fingerprint) {
          throw new ApiError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used for a different request. Use a new key for a new purchase.',
          );
        }
        return { offset: this.s.offsetById.get(prior.offset_id)!, replayed: true };
      }
    }
    const account = this.account();
    const { kg, amount_cents: amount } = price(request, account.rate);
    const available = this.balance(mode);
    if (available < amount) throw insufficientBalance(available, amount);
    const review = mode === 'live' && amount > account.review_limit_cents;
    const id = `off_${randomBase62(24)}`;
    this.s.insertOffset.run({
      id,
      livemode,
      kg,
      amount_cents: amount,
      rate: account.rate,
      req_kg: request.kg ?? null,
      req_amount_cents: request.amount_cents ?? null,
      reference: request.reference,
      created_ms: now,
      settle_at_ms: review ? null : now + (mode === 'live' ? TIMING.livePlacementMs : TIMING.testPlacementMs),
      review: review ? 'pending' : null,
    });
    this.s.entry.run(livemode, 'charge', -amount, id, now);
    this.addBalance(-amount, livemode);
    this.s.addImpact.run(kg, 0, 1, livemode);
    if (idempotencyKey !== null) this.s.rememberKey.run(livemode, idempotencyKey, fingerprint, id, now);
    return { offset: this.s.offsetById.get(id)!, replayed: false };
  }

  topUp(mode: Mode, cents: number, now: number): number {
    return this.db.transaction(() => this.topUpInTransaction(mode, cents, now)).immediate();
  }

  private topUpInTransaction(mode: Mode, cents: number, now: number): number {
    this.s.entry.run(lm(mode), 'topup', cents, null, now);
    this.addBalance(cents, lm(mode));
    return this.balance(mode);
  }

  /**
   * processing → refunded: the charge goes back to the balance and the offset leaves the
   * impact totals. `review` records a rejection when the offset was waiting for review.
   */
  refund(id: string, now: number, review: 'rejected' | null = null): OffsetRow {
    return this.db.transaction(() => {
      const row = this.processingOffset(id);
      this.db
        .prepare("UPDATE offsets SET status = 'refunded', settle_at_ms = NULL, review = coalesce(?, review) WHERE id = ?")
        .run(review, id);
      this.s.entry.run(row.livemode, 'refund', row.amount_cents, id, now);
      this.addBalance(row.amount_cents, row.livemode);
      this.s.addImpact.run(-row.kg, 0, -1, row.livemode);
      return this.s.offsetById.get(id)!;
    }).immediate();
  }

  /** An offset waiting for review is approved: its credits are retired and it is placed now. */
  approve(id: string, now: number): OffsetRow {
    return this.db.transaction(() => {
      const row = this.processingOffset(id);
      if (row.review !== 'pending') throw new ApiError('validation_error', `Offset ${id} is not waiting for review.`, { param: 'id' });
      this.db
        .prepare(
          `UPDATE offsets SET status = 'placed', review = 'approved', placed_ms = ?, settle_at_ms = NULL,
             certificate_id = CASE WHEN livemode = 1 THEN 'cert_' || lower(hex(randomblob(12))) END WHERE id = ?`,
        )
        .run(now, id);
      this.s.moveToPlaced.run({ kg: row.kg, livemode: row.livemode });
      return this.s.offsetById.get(id)!;
    }).immediate();
  }

  private processingOffset(id: string): OffsetRow {
    const row = this.s.offsetById.get(id);
    if (!row) throw new ApiError('resource_missing', `No such offset: '${id}'.`, { param: 'id' });
    if (row.status !== 'processing') {
      throw new ApiError('validation_error', `Offset ${id} is ${row.status}, not processing.`, { param: 'id' });
    }
    return row;
  }

  createKey(mode: Mode, permission: Permission, now: number): NewKey {
    const secret = newApiKey(mode);
    const id = `key_${randomBase62(16)}`;
    this.changing(() => this.s.insertKey.run(id, hashKey(secret), lm(mode), permission, secret.slice(-4), now));
    return { id, secret, mode, permission };
  }

  keys(): KeyRow[] {
    return this.db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_ms, rowid').all();
  }

  revokeKey(id: string, now: number): boolean {
    return this.changing(() => this.db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL').run(now, id).changes === 1);
  }

  updateAccount(patch: Partial<AccountRow>): AccountRow {
    const columns = Object.keys(patch).filter((k) =>
      ['status', 'rate', 'review_limit_cents', 'clock_offset_ms', 'rate_limit_requests', 'rate_limit_window_ms'].includes(k),
    );
    if (columns.length > 0) {
      this.changing(() => this.db.prepare(`UPDATE account SET ${columns.map((c) => `${c} = @${c}`).join(', ')} WHERE id = 1`).run(patch));
    }
    return this.account();
  }

  /** Deletes everything and provisions a fresh account with new keys. */
  reset(now: number, keep: (keys: NewKey[]) => void): void {
    this.changing(() => this.db.transaction(() => {
      for (const table of ['account', 'balances', 'entries', 'offsets', 'impact', 'idempotency', 'api_keys']) {
        this.db.exec(`DELETE FROM ${table}`);
      }
      this.provision(now, keep);
    }).immediate());
  }
}

function insufficientBalance(available: number, required: number): ApiError {
  return new ApiError(
    'insufficient_balance',
    `The balance (${available} cents) does not cover this purchase (${required} cents).`,
    { balance_cents: available, required_cents: required },
  );
}

/** Translates what SQLite and the file system say into a LedgerError a person can act on. */
export function storageError(err: unknown, path: string): Error {
  if (err instanceof LedgerError || err instanceof ApiError) return err;
  const extended = (err as { code?: string }).code ?? '';
  // SQLite reports extended codes (SQLITE_IOERR_SHMSIZE, SQLITE_BUSY_RECOVERY, …); decide on the primary one.
  const code = /^SQLITE_[A-Z]+/.exec(extended)?.[0] ?? extended;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new LedgerError(`The ledger ${path} is damaged (${message}).`, path, 'Move it aside to start a new ledger, or restore it from a backup.');
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new LedgerError(`The ledger ${path} is locked by another process.`, path, 'Wait for the other carbon process to finish and try again.');
  }
  // A recursive mkdir that could not create a parent (read-only file system) says ENOENT.
  if (code === 'SQLITE_READONLY' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'SQLITE_CANTOPEN' || code === 'ENOENT' || code === 'ENOTDIR') {
    return new LedgerError(`The ledger ${path} cannot be written (${message}).`, path, 'Check the permissions of the data directory, or set CARBON_HOME to a writable one.');
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return new LedgerError(`The disk holding ${path} is full.`, path, 'Free some space and try again; nothing was written.');
  }
  if (code === 'SQLITE_IOERR') {
    // Often a full disk too (no room for the WAL index), or a failing device: SQLite rolled back.
    return new LedgerError(`The ledger ${path} could not be read or written (${message}, ${extended}).`, path, 'Check that the disk holding it has free space and works, then try again; nothing was written.');
  }
  return err instanceof Error ? err : new Error(message);
}
