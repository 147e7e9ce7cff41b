import type { Mode, PurchaseParams } from '../api/types.js';
import type { LedgerStore } from '../store/port.js';
import { fingerprint } from './purchase.js';

/** Keys looked up a transaction: a short hold of the write lock, whatever the batch's size. */
const CHUNK = 1_000;

/**
 * Of purchases with an Idempotency-Key each, whether each would come back replayed, not charged:
 * its key was used before, in `mode`, for the same request (a key used for another gets 409, or,
 * for a batch run with --rebuy-changed, a purchase under a new key). Read as a purchase reads it
 * (docs/service-model.md, Idempotency), a chunk at a time.
 */
export async function replays(
  store: LedgerStore,
  mode: Mode,
  purchases: Array<{ key: string; params: PurchaseParams }>,
): Promise<boolean[]> {
  const found: boolean[] = [];
  for (let at = 0; at < purchases.length; at += CHUNK) {
    const part = purchases.slice(at, at + CHUNK);
    const keys = part.map((p) => p.key);
    const { priors } = await store.transaction((tx) => tx.purchaseFacts(mode, keys, []));
    for (const { key, params } of part)
      found.push(priors.get(key)?.fingerprint === fingerprint({ ...params, reference: params.reference ?? null }));
  }
  return found;
}
