import type { Mode } from '../api/types.js';
import { LedgerError } from '../store/ledger-error.js';
import type { AccountRecord, ImpactTotals, LedgerStore, OffsetRecord } from '../store/port.js';
import { ApiError, echoed, validationError } from './errors.js';

/**
 * The offset lifecycle (spec part 3) over the model clock. Placement is a matter of time: a
 * processing offset whose `settle_at_ms` has come IS placed, whether or not a write has recorded
 * it yet. Reads therefore show it placed (`effective`) without writing, so they never wait for
 * a writer; the next write transaction records it (`placeDue`).
 */

/** The model's timing rules, in model milliseconds. */
export const TIMING = {
  /** A test offset is placed this long after creation ("a few seconds"). */
  testPlacementMs: 3_000,
  /** A live offset is placed this long after creation ("usually within minutes"). */
  livePlacementMs: 60_000,
} as const;

/** Model time: the wall clock plus the sandbox clock's offset the account keeps. */
export function modelTime(clock: () => number, account: { clock_offset_ms: number }): number {
  return clock() + account.clock_offset_ms;
}

/** When an offset bought at `created` places by itself (no review). */
export function settleAtFor(mode: Mode, created: number): number {
  return created + (mode === 'live' ? TIMING.livePlacementMs : TIMING.testPlacementMs);
}

/** Whether a processing offset has come due by `now`. */
export function isDue(offset: OffsetRecord, now: number): boolean {
  return offset.status === 'processing' && offset.settle_at_ms !== null && offset.settle_at_ms <= now;
}

/** The offset as it stands at `now`: placed at its settle time once that has come. */
export function effective(offset: OffsetRecord, now: number): OffsetRecord {
  if (!isDue(offset, now)) return offset;
  return { ...offset, status: 'placed', placed_ms: offset.settle_at_ms, settle_at_ms: null };
}

/** The stored totals with the offsets due by now moved from processing to placed. */
export function effectiveImpact(stored: ImpactTotals, due: { kg: number }): ImpactTotals {
  return { placed_kg: stored.placed_kg + due.kg, processing_kg: stored.processing_kg - due.kg, offsets: stored.offsets };
}

/** Refund and approval act on processing offsets only. */
export function mustBeProcessing(offset: OffsetRecord | undefined, id: string): OffsetRecord {
  if (offset === undefined) throw new ApiError('resource_missing', `No such offset: '${echoed(id)}'.`, { param: 'id' });
  if (offset.status !== 'processing') throw validationError('id', `Offset ${id} is ${offset.status}, not processing.`);
  return offset;
}

/** Approval and rejection act on offsets waiting for review only. */
export function mustAwaitReview(offset: OffsetRecord | undefined, id: string): OffsetRecord {
  if (offset === undefined) throw new ApiError('resource_missing', `No such offset: '${echoed(id)}'.`, { param: 'id' });
  if (offset.review !== 'pending') throw validationError('id', `Offset ${id} is not waiting for review.`);
  return offset;
}

/** The account; a store with none (emptied by hand) is a storage fault the person can mend. */
export function mustHaveAccount(account: AccountRecord | undefined, label: string): AccountRecord {
  if (account === undefined) throw new LedgerError('The ledger has no account.', label, 'Run `carbon sandbox reset` to provision one.');
  return account;
}

/**
 * Records the placements due by `now` if the store's write lock is free, and otherwise leaves
 * them to the next writer: reads show them placed either way (`effective`), and never wait. Nor
 * do they fail for it: a ledger that cannot be written just now (a full disk, a read-only one)
 * still answers a read from what it holds, as docs/reliability.md says; a write says why.
 */
export async function settleDue(store: LedgerStore, now: number): Promise<void> {
  try {
    await store.transaction((tx) => tx.placeDue(now), { wait: false });
  } catch (err) {
    if (!(err instanceof LedgerError)) throw err;
  }
}
