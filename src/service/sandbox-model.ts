import type { Mode, OffsetStatus } from '../api/types.js';
import { isoTime } from '../platform/iso-time.js';
import type {
  AccountRecord,
  BrowseQuery,
  DefaultKey,
  ImpactTotals,
  KeyRecord,
  KeyVault,
  LedgerTx,
  OffsetRecord,
  Permission,
} from '../store/port.js';
import { JOURNAL_EMPTIED_META } from '../store/port.js';
import { ApiError, validationError } from './errors.js';
import { FAULTS_META, type FaultConfig } from './faults.js';
import { hashKey, KEY_PREFIX, maskedKey, newApiKey, randomBase62 } from './keys.js';
import { mustAwaitReview, mustBeProcessing } from './lifecycle.js';
import { endPageAccess } from './page-access.js';
import { DEFAULTS, FRESH_ACCOUNT } from './settings.js';

/** What the sandbox's methods take and give (sandbox.ts), and how a fresh account is made. */

export type { DefaultKey } from '../store/port.js';

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
  /** The key's full text, kept on this machine: only when asked for (`keys({ reveal: true })`) and known. */
  secret?: string;
}

/** What the ledger knows of a key found by its full text. */
export interface FoundKey {
  id: string;
  mode: Mode;
  permission: Permission;
  revoked: boolean;
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

/** A key as the sandbox shows it; its full text only when `reveal` and the vault holds it. */
export function keyView(k: KeyRecord, vault: KeyVault, reveal: boolean): SandboxKey {
  const defaults = Object.entries(vault.defaults).find(([, id]) => id === k.id);
  const view: SandboxKey = {
    id: k.id,
    mode: k.mode,
    permission: k.permission,
    masked: maskedKey(KEY_PREFIX, k.mode, k.last4),
    created: isoTime(k.created_ms),
    revoked: k.revoked_ms === null ? null : isoTime(k.revoked_ms),
    default: defaults === undefined ? null : (defaults[0] as DefaultKey),
  };
  const secret = reveal ? vault.secrets[k.id] : undefined;
  return secret === undefined ? view : { ...view, secret };
}

/**
 * The full text of the key the local engine uses for a role when none is configured: the
 * account's starting key while it is active, else the newest active key of that mode and
 * access that this sandbox created (the starting one may have been revoked), else none.
 */
export function defaultSecret(which: DefaultKey, vault: KeyVault, all: KeyRecord[]): string | undefined {
  const startingId = vault.defaults[which];
  const keys = all.filter((k) => k.revoked_ms === null && vault.secrets[k.id] !== undefined);
  const chosen = keys.find((k) => k.id === startingId) ?? keys.filter((k) => fitsRole(which, k)).at(-1);
  return chosen === undefined ? undefined : vault.secrets[chosen.id];
}

/** Whether a key (its mode and access) can stand for a role: a test, live or read-only (test) key. */
export function fitsRole(which: DefaultKey, k: Pick<KeyRecord, 'mode' | 'permission'>): boolean {
  return which === 'read_only' ? k.permission === 'read_only' && k.mode === 'test' : k.permission === 'purchase' && k.mode === which;
}

/**
 * The ledger has working keys of the role, but not one whose text this sandbox holds: a ledger
 * loaded from a snapshot, or made in another home (docs/snapshots.md, "Keys").
 */
export async function keysNotKnownHere(
  sandbox: { defaultKey(which: DefaultKey): Promise<string | undefined>; keys(): Promise<SandboxKey[]> },
  which: DefaultKey,
): Promise<boolean> {
  if ((await sandbox.defaultKey(which)) !== undefined) return false;
  return (await sandbox.keys()).some((k) => k.revoked === null && fitsRole(which, k));
}

/** A fresh account: the defaults, the test balance, and three keys (test, live, read-only test). */
export async function provision(tx: LedgerTx, now: number): Promise<void> {
  await tx.createAccount(FRESH_ACCOUNT, now);
  await tx.moveBalance('test', DEFAULTS.testBalanceCents, 'topup', null, now);
  await createKey(tx, 'test', 'purchase', now, 'test');
  await createKey(tx, 'live', 'purchase', now, 'live');
  await createKey(tx, 'test', 'read_only', now, 'read_only');
}

export async function createKey(
  tx: LedgerTx,
  mode: Mode,
  permission: Permission,
  now: number,
  defaultFor: DefaultKey | null,
): Promise<NewKey> {
  const secret = newApiKey(mode);
  const id = `key_${randomBase62(16)}`;
  const key = { id, hash: hashKey(secret), mode, permission, last4: secret.slice(-4), created_ms: now, revoked_ms: null };
  await tx.insertKey(key, secret, defaultFor);
  return { id, secret, mode, permission };
}

/** The developer page's filters as the store's query. */
export function browseQuery(filter: OffsetFilter, beforeSeq: number | null, limit: number): BrowseQuery {
  return {
    limit,
    beforeSeq,
    reference: filter.reference ?? null,
    status: filter.status ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
  };
}

/** Revokes a key, or says why not (no such key, or revoked already). */
export async function revokeKey(tx: LedgerTx, id: string, now: number): Promise<void> {
  if (await tx.revokeKey(id, now)) return;
  if (!(await tx.keys()).some((k) => k.id === id)) throw new ApiError('resource_missing', `No such key: '${id}'.`, { param: 'id' });
  throw validationError('id', `Key ${id} is already revoked.`);
}

/** An offset waiting for review is approved: placed now. */
export async function approve(tx: LedgerTx, id: string, now: number): Promise<OffsetRecord> {
  // Approve asks first whether the offset can still be placed, then whether it waits for review.
  const offset = mustAwaitReview(mustBeProcessing(await tx.offset(id), id), id);
  return tx.place(offset, now, 'approved');
}

/** processing → refunded, the charge returned: rejected (`review`), or the order could not be placed. */
export async function refund(tx: LedgerTx, id: string, now: number, review: 'rejected' | null): Promise<OffsetRecord> {
  const found = await tx.offset(id);
  // Reject asks first whether the offset waits for review at all.
  const offset = mustBeProcessing(review === 'rejected' ? mustAwaitReview(found, id) : found, id);
  await tx.moveBalance(offset.mode, offset.amount_cents, 'refund', offset.id, now);
  return tx.markRefunded(offset, review);
}

/** Everything deleted, every developer page session ended, faults off, and a fresh account. */
export async function startOver(tx: LedgerTx, clock: () => number): Promise<void> {
  const now = clock();
  await tx.clear();
  // Starting over turns faults off too: a fresh sandbox answers every request.
  await tx.putMeta(FAULTS_META, null);
  await endPageAccess(tx);
  await provision(tx, now);
  await markJournalEmptied(tx, clock);
}

/**
 * The last write of a reset or a load: entries answered before now and still waiting in an
 * instance's memory are the old sandbox's, never written (port.ts, JOURNAL_EMPTIED_META). Read
 * from the clock as the transaction ends, not as it began: a request another instance answered
 * while it ran (a large ledger's delete, a snapshot's rows) read the old sandbox, and is its. Each
 * mark differs from the one before (one past it, two in one millisecond): an answer is written when
 * the mark it read is the mark now (journal-types.ts, writtenSince).
 */
export async function markJournalEmptied(tx: LedgerTx, clock: () => number): Promise<void> {
  const before = Number((await tx.meta(JOURNAL_EMPTIED_META)) ?? 0);
  await tx.putMeta(JOURNAL_EMPTIED_META, String(Math.max(clock(), before + 1)));
}
