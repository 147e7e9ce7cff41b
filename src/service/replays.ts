import type { Mode, PurchaseParams } from '../api/types.js';
import type { LedgerStore } from '../store/port.js';
import { fingerprint } from './purchase.js';

/** Keys looked up a transaction: a short hold of the write lock, whatever the batch's size. */
const CHUNK = 1_000;

/**
 * What each key of purchases with an Idempotency-Key each was used for before, in `mode`: `same`,
 * the same request (it comes back replayed, not charged), `other`, another (it gets 409, or, for a
 * batch run with --rebuy-changed, a purchase under a new key), or `none`. Read as a purchase reads
 * it (docs/service-model.md, Idempotency), a chunk at a time.
 */
export type KeyUse = 'same' | 'other' | 'none';

export async function replays(
  store: LedgerStore,
  mode: Mode,
  purchases: Array<{ key: string; params: PurchaseParams }>,
): Promise<KeyUse[]> {
  const found: KeyUse[] = [];
  for (let at = 0; at < purchases.length; at += CHUNK) {
    const part = purchases.slice(at, at + CHUNK);
    const keys = part.map((p) => p.key);
    const { priors } = await store.transaction((tx) => tx.purchaseFacts(mode, keys, []));
    for (const { key, params } of part) {
      const prior = priors.get(key)?.fingerprint;
      found.push(
        prior === undefined ? 'none' : prior === fingerprint({ ...params, reference: params.reference ?? null }) ? 'same' : 'other',
      );
    }
  }
  return found;
}
