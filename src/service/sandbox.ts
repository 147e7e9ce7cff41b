import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS, type Mode } from '../api/types.js';
import { ApiError, validationError } from './errors.js';
import { KEY_PREFIX, maskedKey } from './keys.js';
import { type AccountRow, type AccountStatus, type ImpactRow, type KeyRow, Ledger, type NewKey, type OffsetRow, type Permission } from './ledger.js';
import { LedgerError } from './ledger-error.js';
import { DEFAULT_PUBLIC_BASE_URL, OffsetsService, renderOffset, type ServiceOptions } from './service.js';
import type { Offset } from '../api/types.js';

/**
 * The sandbox: what the real service does on its developer page or behind the scenes (top-ups,
 * keys, account standing, review, failed orders, the clock), as a typed API over one data
 * directory. The ledger keeps only hashes of keys; the plain keys the sandbox hands out are
 * kept, like the developer page would show them, in `sandbox-keys.json` (0600) beside it.
 */

export const KEYS_FILE = 'sandbox-keys.json';

/** The three keys a fresh account starts with. */
export type DefaultKey = 'test' | 'live' | 'read_only';

interface KeysFile {
  defaults: Partial<Record<DefaultKey, string>>;
  secrets: Record<string, string>;
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
  account: Omit<AccountRow, 'clock_offset_ms'> & { status: AccountStatus };
  clock: { now: string; offset_ms: number };
  balances: Record<Mode, number>;
  impact: Record<Mode, ImpactRow>;
}

export class Sandbox {
  /** The public base URL of the last service() made, so the offsets approve/reject/fail return match what it serves. */
  private publicBaseUrl = DEFAULT_PUBLIC_BASE_URL;

  private constructor(
    readonly dir: string,
    readonly ledger: Ledger,
    private readonly clock: () => number,
  ) {}

  /** Opens the sandbox in `dir`, provisioning a fresh account (and its keys file) on first use. */
  static open(dir: string, clock: () => number = Date.now): Sandbox {
    const ledger = Ledger.open(dir, (keys) => writeKeysFile(dir, keysFileFor(keys)), clock);
    return new Sandbox(dir, ledger, clock);
  }

  /** A sandbox whose ledger lives in memory and whose keys file lives in `dir`, for tests. */
  static memory(dir: string, clock: () => number = Date.now): Sandbox {
    return new Sandbox(dir, Ledger.memory((keys) => writeKeysFile(dir, keysFileFor(keys)), clock), clock);
  }

  close(): void {
    this.ledger.close();
  }

  /** The service model over this sandbox's ledger. */
  service(options: Omit<ServiceOptions, 'clock'> = {}): OffsetsService {
    const service = new OffsetsService(this.ledger, { ...options, clock: this.clock });
    this.publicBaseUrl = service.publicBaseUrl;
    return service;
  }

  private toOffset(row: OffsetRow): Offset {
    return renderOffset(row, this.publicBaseUrl);
  }

  private now(): number {
    return this.clock() + this.ledger.account().clock_offset_ms;
  }

  /**
   * The full text of the key the local engine uses for a role when none is configured: the
   * account's starting key while it is active, else the newest active key of that mode and
   * access that this sandbox created (the starting one may have been revoked), else none.
   */
  defaultKey(which: DefaultKey): string | undefined {
    const file = readKeysFile(this.dir);
    const startingId = file.defaults[which];
    const keys = this.ledger.keys().filter((k) => k.revoked_ms === null && file.secrets[k.id] !== undefined);
    const fits = (k: KeyRow) =>
      which === 'read_only' ? k.permission === 'read_only' && k.livemode === 0 : k.permission === 'purchase' && k.livemode === (which === 'live' ? 1 : 0);
    const chosen = keys.find((k) => k.id === startingId) ?? keys.filter(fits).at(-1);
    return chosen === undefined ? undefined : file.secrets[chosen.id];
  }

  /** The full text of a key this sandbox created. */
  secret(id: string): string | undefined {
    return readKeysFile(this.dir).secrets[id];
  }

  keys(): SandboxKey[] {
    const file = readKeysFile(this.dir);
    const defaults = new Map(Object.entries(file.defaults).map(([k, v]) => [v, k as DefaultKey]));
    return this.ledger.keys().map((k) => ({
      id: k.id,
      mode: k.livemode === 1 ? 'live' : 'test',
      permission: k.permission,
      masked: maskedKey(KEY_PREFIX, k.livemode === 1 ? 'live' : 'test', k.last4),
      created: new Date(k.created_ms).toISOString(),
      revoked: k.revoked_ms === null ? null : new Date(k.revoked_ms).toISOString(),
      default: defaults.get(k.id) ?? null,
    }));
  }

  /** Creates a key; the one time its full text is returned. */
  createKey(mode: Mode, permission: Permission): NewKey {
    const key = this.ledger.createKey(mode, permission, this.now());
    const file = readKeysFile(this.dir);
    file.secrets[key.id] = key.secret;
    writeKeysFile(this.dir, file);
    return key;
  }

  revokeKey(id: string): void {
    if (!this.ledger.revokeKey(id, this.now())) {
      if (!this.ledger.keys().some((k) => k.id === id)) throw new ApiError('resource_missing', `No such key: '${id}'.`, { param: 'id' });
      throw validationError('id', `Key ${id} is already revoked.`);
    }
  }

  /** Adds to a mode's balance; the smallest top-up is 250 US dollars, as on the developer page. */
  topUp(mode: Mode, cents: number): number {
    if (!Number.isSafeInteger(cents) || cents < LIMITS.topUpMinCents || cents > 1_000_000_000_00) {
      throw validationError('amount_cents', `A top-up is a whole number of cents from ${LIMITS.topUpMinCents} ($250.00) to 100000000000.`);
    }
    return this.ledger.topUp(mode, cents, this.now());
  }

  setStatus(status: AccountStatus): AccountRow {
    return this.ledger.updateAccount({ status });
  }

  setRate(rate: number): AccountRow {
    if (!Number.isSafeInteger(rate) || rate < 1 || rate > 10_000_000) {
      throw validationError('rate_millicents_per_kg', 'The rate is a whole number of millicents per kg from 1 to 10000000.');
    }
    return this.ledger.updateAccount({ rate });
  }

  setReviewLimit(cents: number): AccountRow {
    if (!Number.isSafeInteger(cents) || cents < 0) throw validationError('review_limit_cents', 'The review limit is a whole number of cents, 0 or more.');
    return this.ledger.updateAccount({ review_limit_cents: cents });
  }

  /** `requests` per `windowMs` per key; null turns rate limiting off. */
  setRateLimit(requests: number | null, windowMs = 1000): AccountRow {
    if (requests !== null && (!Number.isSafeInteger(requests) || requests < 0)) {
      throw validationError('requests', 'The rate limit is a whole number of requests, 0 or more, or off.');
    }
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw validationError('window', 'The window is a positive number of milliseconds.');
    return this.ledger.updateAccount({ rate_limit_requests: requests, rate_limit_window_ms: windowMs });
  }

  /** Approves an offset waiting for review: it is placed now. */
  approve(id: string): Offset {
    return this.toOffset(this.ledger.approve(id, this.now()));
  }

  /** Rejects an offset waiting for review: it is refunded. */
  reject(id: string): Offset {
    const row = this.ledger.offset(this.modeOf(id), id);
    if (!row) throw new ApiError('resource_missing', `No such offset: '${id}'.`, { param: 'id' });
    if (row.review !== 'pending') throw validationError('id', `Offset ${id} is not waiting for review.`);
    return this.toOffset(this.ledger.refund(id, this.now(), 'rejected'));
  }

  /**
   * The order could not be placed: processing → refunded, the charge returned. Placements that
   * are due by the model's clock are applied first, so an offset that is already placed (though
   * nobody has read it since) cannot be failed: the answer does not depend on whether a read
   * happened in between.
   */
  fail(id: string): Offset {
    this.ledger.settleDue(this.now());
    return this.toOffset(this.ledger.refund(id, this.now()));
  }

  private modeOf(id: string): Mode {
    return this.ledger.offset('live', id) ? 'live' : 'test';
  }

  /** Moves the model's clock forward; time-driven transitions follow on the next read. */
  advanceClock(ms: number): string {
    if (!Number.isSafeInteger(ms) || ms <= 0) throw validationError('duration', 'The clock only moves forward, by a positive duration.');
    const account = this.ledger.account();
    this.ledger.updateAccount({ clock_offset_ms: account.clock_offset_ms + ms });
    return new Date(this.now()).toISOString();
  }

  /** Deletes every offset, balance and key, and provisions a fresh account. */
  reset(): void {
    this.ledger.reset(this.clock(), (keys) => writeKeysFile(this.dir, keysFileFor(keys)));
  }

  status(): SandboxStatus {
    this.ledger.settleDue(this.now());
    const { clock_offset_ms, ...account } = this.ledger.account();
    return {
      account,
      clock: { now: new Date(this.clock() + clock_offset_ms).toISOString(), offset_ms: clock_offset_ms },
      balances: { test: this.ledger.balance('test'), live: this.ledger.balance('live') },
      impact: { test: this.ledger.impact('test'), live: this.ledger.impact('live') },
    };
  }
}

function keysFileFor(keys: NewKey[]): KeysFile {
  const file: KeysFile = { defaults: {}, secrets: {} };
  for (const k of keys) {
    file.secrets[k.id] = k.secret;
    const which: DefaultKey = k.permission === 'read_only' ? 'read_only' : k.mode;
    file.defaults[which] ??= k.id;
  }
  return file;
}

function readKeysFile(dir: string): KeysFile {
  const path = join(dir, KEYS_FILE);
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<KeysFile>;
    return { defaults: parsed.defaults ?? {}, secrets: parsed.secrets ?? {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { defaults: {}, secrets: {} };
    throw new LedgerError(`The sandbox keys file ${path} cannot be read.`, path, 'Fix or delete it, then run `carbon sandbox keys create` for a new key.');
  }
}

/** Written whole to a temporary file and renamed into place, so a reader never sees half of it. */
function writeKeysFile(dir: string, file: KeysFile): void {
  const path = join(dir, KEYS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
