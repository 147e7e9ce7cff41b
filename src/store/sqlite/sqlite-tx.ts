import type { Mode } from '../../api/types.js';
import { DAY_MS } from '../periods.js';
import type * as port from '../port.js';
import { hashId } from '../port.js';
import { livemodeOf } from '../tables.js';
import { query } from './driver.js';
import { withKey } from './files.js';
import { keepJournalSeq } from './sqlite-journal.js';
import { type SqliteConnection, SqliteReads } from './sqlite-reads.js';
import { importLedger, retired } from './sqlite-snapshot.js';

/** One transaction on the store's one connection: the reads as they are, and the writes. */
export class SqliteTx extends SqliteReads implements port.LedgerTx {
  touchedAccount = false;
  touchedBalance = false;
  touchedMeta = false;
  /** The key vault as this transaction leaves it, written once it commits. */
  pendingVault: port.KeyVault | undefined;
  private readonly s = this.c.s;
  private readonly db = this.c.db;

  constructor(
    connection: SqliteConnection,
    /** The vault as it stands before this transaction. */
    private readonly committedVault: () => port.KeyVault,
  ) {
    super(connection);
  }

  override async vault(): Promise<port.KeyVault> {
    return this.pendingVault ?? super.vault();
  }

  async putMeta(name: string, value: string | null): Promise<void> {
    this.touchedMeta = true;
    if (value === null) this.s.deleteMeta.run(name);
    else this.s.putMeta.run(name, value);
  }

  async dropMetas(prefix: string, expiredBy?: number): Promise<void> {
    this.touchedMeta = true;
    if (expiredBy === undefined) this.s.deleteMetas.run(prefix, prefix);
    else this.s.deleteExpiredMetas.run(prefix, prefix, expiredBy);
  }

  async purchaseFacts(mode: Mode, idempotencyKeys: string[], keyHashes: Uint8Array[]): Promise<port.PurchaseFacts> {
    const livemode = livemodeOf(mode);
    const priors = new Map<string, port.IdempotencyRecord>();
    for (const key of idempotencyKeys) {
      const prior = this.s.idempotency.get(livemode, key);
      if (prior !== undefined) priors.set(key, prior);
    }
    const keys = new Map<string, port.KeyRecord>();
    for (const hash of keyHashes) {
      const key = this.s.keyByHash.get(hash);
      if (key !== undefined) keys.set(hashId(hash), key);
    }
    return {
      account: this.s.account.get(),
      available: this.s.balance.get(livemode) ?? 0,
      priors,
      newestCreated: this.s.newestCreated.get(livemode) ?? null,
      keys,
    };
  }

  async createAccount(account: port.AccountRecord, now: number): Promise<void> {
    this.touchedAccount = true;
    this.touchedBalance = true;
    this.s.createAccount.run({ ...account, created_ms: now });
    this.db.exec('INSERT INTO balances VALUES (0, 0), (1, 0); INSERT INTO impact VALUES (0, 0, 0, 0), (1, 0, 0, 0)');
    // A new account's keys are the only ones: nothing an earlier ledger left in the key file (or a
    // run killed between writing it and committing) names a default; its texts stay, retired.
    this.pendingVault = { defaults: {}, secrets: this.knownVault().secrets };
  }

  async updateAccount(patch: Partial<port.AccountRecord>): Promise<port.AccountRecord> {
    const columns = (
      ['status', 'rate', 'review_limit_cents', 'clock_offset_ms', 'rate_limit_requests', 'rate_limit_window_ms'] as const
    ).filter((k) => patch[k] !== undefined);
    if (columns.length > 0) {
      this.touchedAccount = true;
      const values = Object.fromEntries(columns.map((c) => [c, patch[c] ?? null]));
      query<[Record<string, number | string | null>]>(
        this.db,
        `UPDATE account SET ${columns.map((c) => `${c} = @${c}`).join(', ')} WHERE id = 1`,
      ).run(values);
    }
    return this.s.account.get()!;
  }

  async moveBalance(mode: Mode, cents: number, kind: 'topup' | 'charge' | 'refund', offsetId: string | null, now: number): Promise<number> {
    this.touchedBalance = true;
    this.s.entry.run(livemodeOf(mode), kind, cents, offsetId, now);
    this.s.addBalance.run(cents, livemodeOf(mode));
    return this.s.balance.get(livemodeOf(mode)) ?? 0;
  }

  async insertOffsets(purchases: port.NewPurchase[]): Promise<port.OffsetRecord[]> {
    return purchases.map(({ offset, idempotency }) => this.insertOffset(offset, idempotency));
  }

  private insertOffset(offset: port.NewOffset, idempotency: port.NewPurchase['idempotency']): port.OffsetRecord {
    const livemode = livemodeOf(offset.mode);
    this.touchedBalance = true;
    const { lastInsertRowid } = this.s.insertOffset.run({
      id: offset.id,
      livemode,
      kg: offset.kg,
      amount_cents: offset.amount_cents,
      rate: offset.rate,
      req_kg: offset.req_kg,
      req_amount_cents: offset.req_amount_cents,
      reference: offset.reference,
      created_ms: offset.created_ms,
      settle_at_ms: offset.settle_at_ms,
      review: offset.review,
      certificate_id: offset.certificate_id,
    });
    this.s.entry.run(livemode, 'charge', -offset.amount_cents, offset.id, offset.created_ms);
    this.s.addBalance.run(-offset.amount_cents, livemode);
    this.s.addImpact.run(offset.kg, 1, livemode);
    this.s.addDaily.run({ livemode, day: Math.floor(offset.created_ms / DAY_MS), kg: offset.kg, offsets: 1 });
    if (idempotency !== null) this.s.rememberKey.run(livemode, idempotency.key, idempotency.fingerprint, offset.id, offset.created_ms);
    // The row as written: the offset with its seq (no read back).
    return { ...offset, seq: Number(lastInsertRowid) };
  }

  async placeDue(now: number): Promise<void> {
    if (this.s.anyDue.get(now) === undefined) return;
    for (const due of this.s.dueByMode.all(now)) this.s.moveToPlaced.run(due);
    this.s.placeDue.run(now);
  }

  async place(offset: port.OffsetRecord, now: number, review: port.ReviewState | null): Promise<port.OffsetRecord> {
    this.s.place.run(review, now, offset.id);
    this.s.moveToPlaced.run({ kg: offset.kg, livemode: livemodeOf(offset.mode) });
    return this.s.offsetById.get(offset.id)!;
  }

  async markRefunded(offset: port.OffsetRecord, review: port.ReviewState | null): Promise<port.OffsetRecord> {
    const livemode = livemodeOf(offset.mode);
    this.s.refund.run(review, offset.id);
    this.s.addImpact.run(-offset.kg, -1, livemode);
    this.s.addDaily.run({ livemode, day: Math.floor(offset.created_ms / DAY_MS), kg: -offset.kg, offsets: -1 });
    return this.s.offsetById.get(offset.id)!;
  }

  async insertKey(key: port.KeyRecord, secret: string, defaultFor: port.DefaultKey | null): Promise<void> {
    this.touchedAccount = true;
    this.s.insertKey.run(key.id, key.hash, livemodeOf(key.mode), key.permission, key.last4, key.created_ms);
    this.pendingVault = withKey(this.pendingVault ?? this.committedVault(), key.id, secret, defaultFor);
  }

  async revokeKey(id: string, now: number): Promise<boolean> {
    this.touchedAccount = true;
    return this.s.revokeKey.run(now, id).changes === 1;
  }

  async clear(): Promise<void> {
    this.touchedAccount = true;
    this.touchedBalance = true;
    keepJournalSeq(this.db);
    for (const table of ['account', 'balances', 'entries', 'offsets', 'impact', 'impact_daily', 'idempotency', 'api_keys', 'journal']) {
      this.db.exec(`DELETE FROM ${table}`);
    }
    // The texts stay, retired (port.ts: a snapshot loaded later brings their keys back).
    this.pendingVault = { defaults: {}, secrets: retired(this.knownVault().secrets, new Set()) };
  }

  async importLedger(rows: port.LedgerImport, metaNames: readonly string[]): Promise<void> {
    this.touchedAccount = true;
    this.touchedBalance = true;
    this.touchedMeta = true;
    this.pendingVault = await importLedger(this.db, rows, metaNames, this.knownVault());
  }

  async ledgerProblem(): Promise<string | null> {
    // Loaded on a snapshot's load only: no other command reads the rules.
    const { ledgerProblem, SQLITE_JSON_TEXT } = await import('../ledger-rules.js');
    return ledgerProblem(SQLITE_JSON_TEXT, (sql) => (this.db.prepare(sql).get() as { problem: string } | undefined)?.problem);
  }

  /** The vault as this transaction sees it; an unreadable key file is started over (as reset always did). */
  private knownVault(): port.KeyVault {
    try {
      return this.pendingVault ?? this.committedVault();
    } catch {
      return { defaults: {}, secrets: {} };
    }
  }
}
