import type { Mode, Offset, OffsetStatus } from '../api/types.js';
import { LedgerError } from '../store/ledger-error.js';
import { type StoreTarget, openStore } from '../store/open.js';
import type { AccountRecord, AccountStatus, DefaultKey, ImpactTotals, KeyRecord, LedgerStore, LedgerTx, OffsetRecord, Permission } from '../store/port.js';
import { ApiError, validationError } from './errors.js';
import { KEY_PREFIX, hashKey, maskedKey, newApiKey, randomBase62, redactKeys } from './keys.js';
import { effective, effectiveImpact, modelTime, mustAwaitReview, mustBeProcessing } from './lifecycle.js';
import { DEFAULT_PUBLIC_BASE_URL, OffsetsService, type ServiceOptions, renderOffset } from './service.js';
import { FAULTS_META, type FaultConfig } from './faults.js';
import { PAGE_SECRET, PageAccess } from './page-access.js';
import {
  DEFAULTS, FRESH_ACCOUNT, type FaultInput, checkBalanceAfter, checkClockAdvance, checkFaults, checkRate, checkRateLimit, checkReviewLimit, checkTopUp,
} from './settings.js';

/**
 * The sandbox: what the real service does on its developer page or behind the scenes (top-ups,
 * keys, account standing, review, failed orders, the clock), as a typed API over one store. The
 * developer page, `carbon sandbox` and the tests all act through these methods, so a change made
 * in one shows at once in the others.
 */

export type { DefaultKey } from '../store/port.js';

// src/server reads no store: what it needs is reached through the Sandbox (pages, certificate)
// or re-exported here (LedgerError: a storage failure the server answers with 503).
export { LedgerError } from '../store/ledger-error.js';
export { PAGE_SECRET } from './page-access.js';

export interface NewKey {
  id: string;
  secret: string;
  mode: Mode;
  permission: Permission;
}

export interface SandboxKey {
  id: string;
  mode: Mode;
  permission: Permission;
  /** The key as it may be shown: `ck_test_…abcd`. */
  masked: string;
  created: string;
  revoked: string | null;
  /** Which of the account's starting keys this is, if any. */
  default: DefaultKey | null;
}

export interface SandboxStatus {
  account: Omit<AccountRecord, 'clock_offset_ms'>;
  clock: { now: string; offset_ms: number };
  balances: Record<Mode, number>;
  impact: Record<Mode, ImpactTotals>;
  /** The faults injected on demand (`carbon sandbox faults`); null when off. */
  faults: FaultConfig | null;
}

export interface OffsetFilter {
  status?: OffsetStatus | null;
  reference?: string | null;
  since?: number | null;
  until?: number | null;
  /** Offsets older than this one (the previous page's last). */
  startingAfter?: string | null;
  limit?: number;
}

export class Sandbox {
  /** The public base URL of the last service() made, so the offsets approve/reject/fail return match what it serves. */
  private publicBaseUrl = DEFAULT_PUBLIC_BASE_URL;

  private constructor(
    readonly store: LedgerStore,
    private readonly clock: () => number,
  ) {}

  /** Opens the sandbox over a data directory (SQLite) or a store target, provisioning a fresh account on first use. */
  static async open(target: string | StoreTarget, clock: () => number = Date.now): Promise<Sandbox> {
    const store = await openStore(typeof target === 'string' ? { kind: 'sqlite', dir: target } : target);
    return Sandbox.over(store, clock);
  }

  /** The sandbox over a store already open; it provisions the account if the store has none. */
  static async over(store: LedgerStore, clock: () => number = Date.now): Promise<Sandbox> {
    try {
      if ((await store.account()) === undefined) {
        await store.transaction(async (tx) => {
          // Another process may have won the race since the read above.
          if ((await tx.account()) === undefined) await provision(tx, clock());
        });
      }
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
    return new Sandbox(store, clock);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  // For src/server (no port reads there): the developer page's sign-in, and the certificate lookup.
  private pageAccess: PageAccess | undefined;
  /** The developer page's login tokens, sessions, notices and recorded address. */
  get pages(): PageAccess {
    return (this.pageAccess ??= new PageAccess(this.store));
  }

  /** The offset a certificate id names, as it stands now; undefined when none does. */
  async certificate(certificateId: string): Promise<Offset | undefined> {
    const row = await this.store.offsetByCertificate(certificateId);
    return row === undefined ? undefined : this.toOffset(row);
  }

  /** The service model over this sandbox's store. */
  service(options: Omit<ServiceOptions, 'clock'> = {}): OffsetsService {
    const service = new OffsetsService(this.store, { ...options, clock: this.clock });
    this.publicBaseUrl = service.publicBaseUrl;
    return service;
  }

  private async account(): Promise<AccountRecord> {
    const account = await this.store.account();
    if (account === undefined) throw new LedgerError('The ledger has no account.', this.store.label, 'Run `carbon sandbox reset` to provision one.');
    return account;
  }

  /** Model time: the wall clock plus the sandbox clock's offset. */
  async now(): Promise<number> {
    return modelTime(this.clock, await this.account());
  }

  /** The API's Offset as it stands at `now`, certificate URLs on the last service's base URL. */
  private async toOffset(row: OffsetRecord, now?: number): Promise<Offset> {
    return renderOffset(effective(row, now ?? (await this.now())), this.publicBaseUrl);
  }

  /** A write with model time read inside it. */
  private write<T>(fn: (tx: LedgerTx, now: number) => Promise<T>): Promise<T> {
    return this.store.transaction(async (tx) => {
      const account = await tx.account();
      if (account === undefined) throw new LedgerError('The ledger has no account.', this.store.label, 'Run `carbon sandbox reset` to provision one.');
      const now = modelTime(this.clock, account);
      await tx.placeDue(now);
      return fn(tx, now);
    });
  }

  /**
   * The full text of the key the local engine uses for a role when none is configured: the
   * account's starting key while it is active, else the newest active key of that mode and
   * access that this sandbox created (the starting one may have been revoked), else none.
   */
  async defaultKey(which: DefaultKey): Promise<string | undefined> {
    const [vault, all] = await Promise.all([this.store.vault(), this.store.keys()]);
    const startingId = vault.defaults[which];
    const keys = all.filter((k) => k.revoked_ms === null && vault.secrets[k.id] !== undefined);
    const fits = (k: KeyRecord) =>
      which === 'read_only' ? k.permission === 'read_only' && k.mode === 'test' : k.permission === 'purchase' && k.mode === which;
    const chosen = keys.find((k) => k.id === startingId) ?? keys.filter(fits).at(-1);
    return chosen === undefined ? undefined : vault.secrets[chosen.id];
  }

  /** The full text of a key this sandbox created. */
  async secret(id: string): Promise<string | undefined> {
    return (await this.store.vault()).secrets[id];
  }

  async keys(): Promise<SandboxKey[]> {
    const [vault, all] = await Promise.all([this.store.vault(), this.store.keys()]);
    const defaults = new Map(Object.entries(vault.defaults).map(([k, v]) => [v, k as DefaultKey]));
    return all.map((k) => ({
      id: k.id,
      mode: k.mode,
      permission: k.permission,
      masked: maskedKey(KEY_PREFIX, k.mode, k.last4),
      created: new Date(k.created_ms).toISOString(),
      revoked: k.revoked_ms === null ? null : new Date(k.revoked_ms).toISOString(),
      default: defaults.get(k.id) ?? null,
    }));
  }

  /** Creates a key; the one time its full text is returned. */
  async createKey(mode: Mode, permission: Permission): Promise<NewKey> {
    return this.write((tx, now) => createKey(tx, mode, permission, now, null));
  }

  async revokeKey(id: string): Promise<void> {
    await this.write(async (tx, now) => {
      if (await tx.revokeKey(id, now)) return;
      if (!(await tx.keys()).some((k) => k.id === id)) throw new ApiError('resource_missing', `No such key: '${id}'.`, { param: 'id' });
      throw validationError('id', `Key ${id} is already revoked.`);
    });
  }

  /** Adds to a mode's balance; the smallest top-up is 250 US dollars, as on the developer page. */
  async topUp(mode: Mode, cents: number): Promise<number> {
    checkTopUp(cents);
    return this.write(async (tx, now) => {
      checkBalanceAfter(await tx.balance(mode), cents);
      return tx.moveBalance(mode, cents, 'topup', null, now);
    });
  }

  async setStatus(status: AccountStatus): Promise<AccountRecord> {
    if (!['active', 'suspended', 'unapproved'].includes(status)) throw validationError('status', 'The status is active, suspended or unapproved.');
    return this.write((tx) => tx.updateAccount({ status }));
  }

  async setRate(rate: number): Promise<AccountRecord> {
    checkRate(rate);
    return this.write((tx) => tx.updateAccount({ rate }));
  }

  async setReviewLimit(cents: number): Promise<AccountRecord> {
    checkReviewLimit(cents);
    return this.write((tx) => tx.updateAccount({ review_limit_cents: cents }));
  }

  /** `requests` per `windowMs` per key; null turns rate limiting off. */
  async setRateLimit(requests: number | null, windowMs = 1000): Promise<AccountRecord> {
    checkRateLimit(requests, windowMs);
    return this.write((tx) => tx.updateAccount({ rate_limit_requests: requests, rate_limit_window_ms: windowMs }));
  }

  /** The faults injected into API requests, as stored for every instance sharing the ledger; null when off. */
  async faults(): Promise<FaultConfig | null> {
    const text = await this.store.meta(FAULTS_META);
    return text === undefined ? null : (JSON.parse(text) as FaultConfig);
  }

  /** Replaces the fault setting (checked first); every instance on the ledger applies it from its next request. */
  async setFaults(input: FaultInput): Promise<FaultConfig> {
    const config = checkFaults(input);
    await this.store.transaction((tx) => tx.putMeta(FAULTS_META, JSON.stringify(config)));
    return config;
  }

  /** Turns faults off. */
  async clearFaults(): Promise<void> {
    await this.store.transaction((tx) => tx.putMeta(FAULTS_META, null));
  }

  /** Approves an offset waiting for review: it is placed now. */
  async approve(id: string): Promise<Offset> {
    const { row, now } = await this.write(async (tx, now) => {
      // Approve asks first whether the offset can still be placed, then whether it waits for review.
      const offset = mustAwaitReview(mustBeProcessing(await tx.offset(id), id), id);
      return { row: await tx.place(offset, now, 'approved'), now };
    });
    return this.toOffset(row, now);
  }

  /** Rejects an offset waiting for review: it is refunded. */
  async reject(id: string): Promise<Offset> {
    return this.refund(id, 'rejected');
  }

  /**
   * The order could not be placed: processing → refunded, the charge returned. Placements that
   * are due by the model's clock are recorded first (write() does), so an offset that is already
   * placed (though nobody has read it since) cannot be failed.
   */
  async fail(id: string): Promise<Offset> {
    return this.refund(id, null);
  }

  private async refund(id: string, review: 'rejected' | null): Promise<Offset> {
    const { row, now } = await this.write(async (tx, now) => {
      const found = await tx.offset(id);
      // Reject asks first whether the offset waits for review at all.
      const offset = mustBeProcessing(review === 'rejected' ? mustAwaitReview(found, id) : found, id);
      await tx.moveBalance(offset.mode, offset.amount_cents, 'refund', offset.id, now);
      return { row: await tx.markRefunded(offset, review), now };
    });
    return this.toOffset(row, now);
  }

  /** Moves the model's clock forward; time-driven transitions follow. */
  async advanceClock(ms: number): Promise<string> {
    const now = await this.write(async (tx, modelNow) => {
      checkClockAdvance(modelNow, ms);
      const account = await tx.updateAccount({ clock_offset_ms: (await tx.account())!.clock_offset_ms + ms });
      return modelTime(this.clock, account);
    });
    return new Date(now).toISOString();
  }

  /** Deletes every offset, balance and key, ends every developer page session, and provisions a fresh account. */
  async reset(): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.clear();
      // Starting over turns faults off too: a fresh sandbox answers every request.
      await tx.putMeta(FAULTS_META, null);
      await tx.putMeta(PAGE_SECRET, null);
      await provision(tx, this.clock());
    });
  }

  async status(): Promise<SandboxStatus> {
    const { clock_offset_ms, ...account } = await this.account();
    const now = modelTime(this.clock, { clock_offset_ms });
    const impact = async (mode: Mode) => effectiveImpact(await this.store.impact(mode), await this.store.due(mode, now));
    return {
      account,
      clock: { now: new Date(now).toISOString(), offset_ms: clock_offset_ms },
      balances: { test: await this.store.balance('test'), live: await this.store.balance('live') },
      impact: { test: await impact('test'), live: await impact('live') },
      faults: await this.faults(),
    };
  }

  /** Offsets of a mode, newest first, filtered as the developer page filters them. */
  async offsets(mode: Mode, filter: OffsetFilter = {}): Promise<{ data: Offset[]; has_more: boolean }> {
    const now = await this.now();
    // Placements due by now are recorded first (if the lock is free), so the status filter sees them placed.
    await new OffsetsService(this.store, { clock: this.clock, publicBaseUrl: this.publicBaseUrl }).settleDue(now);
    let beforeSeq: number | null = null;
    if (filter.startingAfter) {
      const cursor = await this.store.offset(filter.startingAfter);
      if (cursor === undefined || cursor.mode !== mode) throw new ApiError('resource_missing', `No such offset: '${redactKeys(filter.startingAfter)}'.`, { param: 'starting_after' });
      beforeSeq = cursor.seq;
    }
    const limit = filter.limit ?? 20;
    const rows = await this.store.browse(mode, {
      limit: limit + 1,
      beforeSeq,
      reference: filter.reference ?? null,
      status: filter.status ?? null,
      since: filter.since ?? null,
      until: filter.until ?? null,
    });
    const hasMore = rows.length > limit;
    if (hasMore) rows.pop();
    return { data: await Promise.all(rows.map((r) => this.toOffset(r, now))), has_more: hasMore };
  }

  /** One offset of either mode, as the API shows it. */
  async offset(id: string): Promise<Offset | undefined> {
    const row = await this.store.offset(id);
    return row === undefined ? undefined : this.toOffset(row);
  }

  /** Offsets waiting for review, oldest first. */
  async reviewQueue(limit = 50): Promise<Offset[]> {
    const now = await this.now();
    return Promise.all((await this.store.reviewQueue(limit)).map((r) => this.toOffset(r, now)));
  }

  /** kg bought (placed or processing) per UTC day or month. */
  async kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null = null): Promise<Array<{ period: string; kg: number }>> {
    return this.store.kgByPeriod(mode, period, since);
  }
}

/** A fresh account: the defaults, the test balance, and three keys (test, live, read-only test). */
async function provision(tx: LedgerTx, now: number): Promise<void> {
  await tx.createAccount(FRESH_ACCOUNT, now);
  await tx.moveBalance('test', DEFAULTS.testBalanceCents, 'topup', null, now);
  await createKey(tx, 'test', 'purchase', now, 'test');
  await createKey(tx, 'live', 'purchase', now, 'live');
  await createKey(tx, 'test', 'read_only', now, 'read_only');
}

async function createKey(tx: LedgerTx, mode: Mode, permission: Permission, now: number, defaultFor: DefaultKey | null): Promise<NewKey> {
  const secret = newApiKey(mode);
  const id = `key_${randomBase62(16)}`;
  await tx.insertKey({ id, hash: hashKey(secret), mode, permission, last4: secret.slice(-4), created_ms: now, revoked_ms: null }, secret, defaultFor);
  return { id, secret, mode, permission };
}
