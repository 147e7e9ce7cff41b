import type { Mode, Offset, PurchaseParams } from '../api/types.js';
import type { AccountRecord, AccountStatus, DefaultKey, LedgerStore, LedgerTx, OffsetRecord, Permission } from '../store/port.js';
import { validationError } from './errors.js';
import { FAULTS_META, type FaultConfig, parseFaults, storedFaults } from './faults.js';
import { Journal } from './journal.js';
import { JOURNAL_DEFAULTS, type JournalSettings } from './journal-settings.js';
import { effective, effectiveImpact, modelTime, mustHaveAccount, settleDue } from './lifecycle.js';
import { listPage } from './listing.js';
import { PageAccess } from './page-access.js';
import { type KeyUse, replays } from './replays.js';
import type { FoundKey, NewKey, OffsetFilter, SandboxKey, SandboxStatus } from './sandbox-model.js';
import * as model from './sandbox-model.js';
import { DEFAULT_PUBLIC_BASE_URL, OffsetsService, renderOffset, type ServiceOptions } from './service.js';
import * as bounds from './settings.js';

/**
 * The sandbox: what the real service does on its developer page or behind the scenes (top-ups, keys, account
 * standing, review, failed orders, the clock), as a typed API over one store. The developer page, `carbon
 * sandbox` and the tests all act through these methods, so a change made in one shows at once in the others.
 * Nothing above the service reads the store: what the CLI and the pages need of it is a method here.
 */

export type { DefaultKey, FoundKey, NewKey, OffsetFilter, SandboxKey, SandboxStatus };

export interface SandboxOptions {
  /** Wall-clock milliseconds; the account's sandbox clock offset is added on top. */
  clock?: () => number;
  /** The origin certificate URLs point at, in the offsets this sandbox and its service() return. */
  publicBaseUrl?: string;
  /** The request journal's settings (journal.ts: on, the newest 10,000, 7 days). */
  journal?: JournalSettings;
}

export class Sandbox {
  private readonly clock: () => number;
  private readonly publicBaseUrl: string;
  readonly journal: Journal; // every request its services answer (carbon logs), shared by each service

  private constructor(
    private readonly ledger: LedgerStore,
    options: SandboxOptions,
    journal?: Journal,
  ) {
    this.clock = options.clock ?? Date.now;
    this.publicBaseUrl = (options.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL).replace(/\/+$/, '');
    this.journal = journal ?? new Journal(ledger, options.journal ?? JOURNAL_DEFAULTS, this.clock);
  }

  /** The sandbox over a store already open; it provisions the account if the store has none. */
  static async over(store: LedgerStore, options: SandboxOptions | (() => number) = {}): Promise<Sandbox> {
    const settings = typeof options === 'function' ? { clock: options } : options;
    const clock = settings.clock ?? Date.now;
    try {
      if ((await store.account()) === undefined) {
        await store.transaction(async (tx) => {
          // Another process may have won the race since the read above.
          if ((await tx.account()) === undefined) await model.provision(tx, clock());
        });
      }
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
    return new Sandbox(store, settings);
  }

  private pageAccess: PageAccess | undefined;
  /** The developer page's login tokens, sessions, notices and recorded address. */
  get pages(): PageAccess {
    this.pageAccess ??= new PageAccess(this.ledger);
    return this.pageAccess;
  }

  /** Save and load the whole model (snapshots.ts), loaded when first asked for. */
  async snapshots(): Promise<import('./snapshots.js').Snapshots> {
    const { Snapshots } = await import('./snapshots.js');
    return new Snapshots(this.ledger, this.clock);
  }

  /** The same sandbox with certificate URLs on another origin (a server knows its own once listening). */
  withPublicBaseUrl(publicBaseUrl: string): Sandbox {
    return new Sandbox(this.ledger, { clock: this.clock, publicBaseUrl }, this.journal);
  }

  /** Where the ledger is, as it may be shown: a path, or a URL with its password masked. */
  get label(): string {
    return this.ledger.label;
  }

  async close(options?: Parameters<LedgerStore['close']>[0]): Promise<void> {
    await this.journal.close({ exiting: options?.exiting }).finally(() => this.ledger.close(options));
  }

  /** The service model over this sandbox's store, its certificate URLs on this sandbox's origin unless given. */
  service(options: Pick<ServiceOptions, 'publicBaseUrl'> = {}): OffsetsService {
    const { clock, journal } = this;
    return new OffsetsService(this.ledger, { clock, journal, publicBaseUrl: options.publicBaseUrl ?? this.publicBaseUrl });
  }

  private account = async (): Promise<AccountRecord> => mustHaveAccount(await this.ledger.account(), this.ledger.label);

  /** Model time: the wall clock plus the sandbox clock's offset. */
  async now(): Promise<number> {
    return modelTime(this.clock, await this.account());
  }

  /** The API's Offset as it stands at `now`, certificate URLs on this sandbox's origin. */
  private async toOffset(row: OffsetRecord, now?: number): Promise<Offset> {
    return renderOffset(effective(row, now ?? (await this.now())), this.publicBaseUrl);
  }

  /** A write with model time read inside it. */
  private write<T>(fn: (tx: LedgerTx, now: number) => Promise<T>): Promise<T> {
    return this.ledger.transaction(async (tx) => {
      const now = modelTime(this.clock, mustHaveAccount(await tx.account(), this.ledger.label));
      await tx.placeDue(now);
      return fn(tx, now);
    });
  }

  /** The full text of the key the local engine uses for a role when none is configured (sandbox-model.ts). */
  async defaultKey(which: DefaultKey): Promise<string | undefined> {
    const [vault, all] = await Promise.all([this.ledger.vault(), this.ledger.keys()]);
    return model.defaultSecret(which, vault, all);
  }

  /** The full text of a key of this ledger that this sandbox created (not a retired text: port.ts, clear). */
  async secret(id: string): Promise<string | undefined> {
    const [vault, all] = await Promise.all([this.ledger.vault(), this.ledger.keys()]);
    return all.some((k) => k.id === id) ? vault.secrets[id] : undefined;
  }

  /** Every key, masked; with `reveal`, with the full text this machine keeps for each. */
  async keys(options: { reveal?: boolean } = {}): Promise<SandboxKey[]> {
    const [vault, all] = await Promise.all([this.ledger.vault(), this.ledger.keys()]);
    return all.map((k) => model.keyView(k, vault, options.reveal === true));
  }

  /** What the ledger knows of the key whose full text is `secret` (any state), or undefined for a key it never made. */
  async findKey(secret: string): Promise<FoundKey | undefined> {
    const key = await this.ledger.keyBySecret(secret);
    return key === undefined ? undefined : { id: key.id, mode: key.mode, permission: key.permission, revoked: key.revoked_ms !== null };
  }

  /** Creates a key; the one time its full text is returned. */
  async createKey(mode: Mode, permission: Permission): Promise<NewKey> {
    return this.write((tx, now) => model.createKey(tx, mode, permission, now, null));
  }

  async revokeKey(id: string): Promise<void> {
    await this.write((tx, now) => model.revokeKey(tx, id, now));
  }

  /** Adds to a mode's balance; the smallest top-up is 250 US dollars, as on the developer page. */
  async topUp(mode: Mode, cents: number): Promise<number> {
    bounds.checkTopUp(cents, mode);
    return this.write(async (tx, now) => {
      bounds.checkBalanceAfter(await tx.balance(mode), cents);
      return tx.moveBalance(mode, cents, 'topup', null, now);
    });
  }

  async setStatus(status: AccountStatus): Promise<AccountRecord> {
    if (!['active', 'suspended', 'unapproved'].includes(status))
      throw validationError('status', 'The status is active, suspended or unapproved.');
    return this.write((tx) => tx.updateAccount({ status }));
  }

  async setRate(rate: number): Promise<AccountRecord> {
    bounds.checkRate(rate);
    return this.write((tx) => tx.updateAccount({ rate }));
  }

  async setReviewLimit(cents: number): Promise<AccountRecord> {
    bounds.checkReviewLimit(cents);
    return this.write((tx) => tx.updateAccount({ review_limit_cents: cents }));
  }

  /** `requests` per `windowMs` per key (without it, the window set before: 1 s at first); null turns it off. */
  async setRateLimit(requests: number | null, windowMs?: number): Promise<AccountRecord> {
    bounds.checkRateLimit(requests, windowMs ?? 1000);
    const window = windowMs === undefined ? {} : { rate_limit_window_ms: windowMs };
    return this.write((tx) => tx.updateAccount({ rate_limit_requests: requests, ...window }));
  }

  /** The fault setting's stored JSON text (undefined: off), read before each request; the store keeps it until it changes. */
  faultsText(): Promise<string | undefined> {
    return this.ledger.meta(FAULTS_META);
  }

  /** The faults injected into API requests, as stored for every instance sharing the ledger; null when off. */
  async faults(): Promise<FaultConfig | null> {
    return parseFaults(await this.faultsText());
  }

  /** Replaces the fault setting (checked first); every instance applies it from its next request, its seeded draws from the start. */
  async setFaults(input: bounds.FaultInput): Promise<FaultConfig> {
    const config = bounds.checkFaults(input);
    await this.ledger.transaction((tx) => tx.putMeta(FAULTS_META, storedFaults(config)));
    return config;
  }

  /** Turns faults off. */
  async clearFaults(): Promise<void> {
    await this.ledger.transaction((tx) => tx.putMeta(FAULTS_META, null));
  }

  /** Approves an offset waiting for review: it is placed now. */
  async approve(id: string): Promise<Offset> {
    const { row, now } = await this.write(async (tx, now) => ({ row: await model.approve(tx, id, now), now }));
    return this.toOffset(row, now);
  }

  /** Rejects an offset waiting for review: it is refunded. */
  reject(id: string): Promise<Offset> {
    return this.refund(id, 'rejected');
  }

  /** The order could not be placed: refunded. Placements due are recorded first (write()): a placed offset cannot be failed. */
  async fail(id: string): Promise<Offset> {
    return this.refund(id, null);
  }

  private async refund(id: string, review: 'rejected' | null): Promise<Offset> {
    const { row, now } = await this.write(async (tx, now) => ({ row: await model.refund(tx, id, now, review), now }));
    return this.toOffset(row, now);
  }

  /** Moves the model's clock forward; time-driven transitions follow. */
  async advanceClock(ms: number): Promise<string> {
    const now = await this.write(async (tx, modelNow) => {
      bounds.checkClockAdvance(modelNow, ms);
      const account = await tx.updateAccount({ clock_offset_ms: (await tx.account())!.clock_offset_ms + ms });
      return modelTime(this.clock, account);
    });
    return new Date(now).toISOString();
  }

  /** Deletes every offset, balance and key, ends every developer page session, and provisions a fresh account. */
  async reset(): Promise<void> {
    await this.journal.flush();
    await this.ledger.transaction((tx) => model.startOver(tx, this.clock));
  }

  async status(): Promise<SandboxStatus> {
    const { clock_offset_ms, ...account } = await this.account();
    const now = modelTime(this.clock, { clock_offset_ms });
    const impact = async (mode: Mode) => effectiveImpact(await this.ledger.impact(mode), await this.ledger.due(mode, now));
    return {
      account,
      clock: { now: new Date(now).toISOString(), offset_ms: clock_offset_ms },
      balances: { test: await this.ledger.balance('test'), live: await this.ledger.balance('live') },
      impact: { test: await impact('test'), live: await impact('live') },
      faults: await this.faults(),
    };
  }

  /** Offsets of a mode, newest first, filtered as the developer page filters them. */
  async offsets(mode: Mode, filter: OffsetFilter = {}): Promise<{ data: Offset[]; has_more: boolean }> {
    const now = await this.now();
    // Placements due by now are recorded first (if the lock is free), so the status filter sees them placed.
    await settleDue(this.ledger, now);
    const { rows, hasMore } = await listPage(this.ledger, {
      mode,
      startingAfter: filter.startingAfter || null,
      limit: filter.limit ?? 20,
      cursorNote: '',
      read: (beforeSeq, limit) => this.ledger.browse(mode, model.browseQuery(filter, beforeSeq, limit)),
    });
    return { data: await Promise.all(rows.map((r) => this.toOffset(r, now))), has_more: hasMore };
  }

  /** One offset of either mode, as the API shows it. */
  async offset(id: string): Promise<Offset | undefined> {
    const row = await this.ledger.offset(id);
    return row === undefined ? undefined : this.toOffset(row);
  }

  /** Whether the offset `id` waits for review (held above the review limit). */
  async awaitsReview(id: string): Promise<boolean> {
    return (await this.ledger.offset(id))?.review === 'pending';
  }

  /** Offsets waiting for review, oldest first. */
  async reviewQueue(limit = 50): Promise<Offset[]> {
    const now = await this.now();
    return Promise.all((await this.ledger.reviewQueue(limit)).map((r) => this.toOffset(r, now)));
  }

  /** What each purchase's Idempotency-Key bought before: the same request (replayed, not charged), another, or nothing (replays.ts). */
  replays(mode: Mode, purchases: Array<{ key: string; params: PurchaseParams }>): Promise<KeyUse[]> {
    return replays(this.ledger, mode, purchases);
  }

  /** kg bought (placed or processing) per UTC day or month. */
  async kgByPeriod(mode: Mode, period: 'day' | 'month', since: number | null = null): Promise<Array<{ period: string; kg: number }>> {
    return this.ledger.kgByPeriod(mode, period, since);
  }
}
