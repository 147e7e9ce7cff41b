import type { Offset, PurchaseParams } from '../../api/types.js';
import type { CarbonClient, Purchase } from '../../client/client.js';
import { CarbonApiError } from '../../client/errors.js';
import { keysOf, mayBeShared } from './key.js';
import type { BatchRow } from './rows.js';
import type { RowTable } from './table.js';

/**
 * A batch row matched to the Idempotency-Key it was (or is) bought under (README, "Bought once"):
 * its own, or, for rows that share a reference, another of theirs, and what a run learns of those
 * keys on the way (batch/buy.ts buys the rows and reports them).
 */

/** A row's keys (keysOf), the first its own; `taken`: the keys of rows that share a reference, each one row's in a run. */
export interface RowKeys {
  own: string;
  all: Iterable<string>;
  taken: Set<string>;
  /** Whether the own key, once used, is kept in `taken`. */
  shared: boolean;
  /** How many rows of the file ask a body (RowTable.askers). */
  askers: (body: PurchaseParams) => number;
  /** What this run has learned of the keys of rows that share a reference. */
  seen: Seen;
}

export interface Seen {
  /** How many rows were matched to a key that bought each body (bodyId). */
  claimed: Map<string, number>;
  /** The keys found (boughtAs) to have bought each body (bodyId). */
  holding: Map<string, string[]>;
  /** The offsets this run bought (not replayed) for rows that share a reference: never cited as what a changed row was bought as. */
  boughtNow: Set<string>;
}

/** A body's identity among those of rows that share a reference. */
const bodyId = (p: PurchaseParams) => JSON.stringify([p.reference ?? null, p.kg ?? null, p.amount_cents ?? null]);

/** The keys of the table's row `i` (keysOf), its own first. */
export function rowKeys(table: RowTable, i: number, batchId: string, params: PurchaseParams, taken: RowKeys['taken'], seen: Seen): RowKeys {
  const occurrence = table.occurrenceOf(i);
  const sharing = params.reference === undefined ? 1 : table.occurrences.countOf(params);
  const all = keysOf(batchId, params, occurrence, sharing);
  const own = all.next().value as string;
  if (occurrence === 1 && sharing > 1) table.firstOfShared(params);
  return { own, all, taken, shared: mayBeShared(params, occurrence, sharing), askers: (body) => table.askers(body), seen };
}

/**
 * The row bought (or replayed) under its own key; or, that key having bought another quantity,
 * under a key found to have bought the row's; or, unless the row changed after it was bought
 * (`changed`: what it was bought as), under another row's (rows that share a reference, sorted).
 */
export async function matchRow(
  client: CarbonClient,
  row: BatchRow & { cap: number | undefined },
  keys: RowKeys,
): Promise<{ purchase: Matched | null; changed: Offset | undefined }> {
  const ownFree = !keys.taken.has(keys.own);
  let purchase = await firstFree(client, row.params, [keys.own], keys, row.cap);
  const known = keys.seen.holding.get(bodyId(row.params));
  if (purchase === null && known !== undefined) purchase = await firstFree(client, row.params, known, keys, row.cap);
  const changed = purchase === null && ownFree && keys.shared ? await changedRow(client, row.params, keys.own, keys) : undefined;
  if (purchase === null && changed === undefined) purchase = await firstFree(client, row.params, keys.all, keys, row.cap);
  return { purchase, changed };
}

export type Matched = Purchase & { key: string };

/** Notes a row of a shared reference matched to a key: its body claimed, and its offset when bought now. */
export function noteMatched(keys: RowKeys, params: PurchaseParams, purchase: { offset: Offset; replayed: boolean }): void {
  if (!keys.shared) return;
  const id = bodyId(params);
  keys.seen.claimed.set(id, (keys.seen.claimed.get(id) ?? 0) + 1);
  if (!purchase.replayed) keys.seen.boughtNow.add(purchase.offset.id);
}

/**
 * The row bought (or replayed) under the first of `candidates` that no other row of the run holds
 * and that did not buy another quantity (409); null when none. The key used is kept as taken when
 * another row may try it.
 */
async function firstFree(
  client: CarbonClient,
  params: PurchaseParams,
  candidates: Iterable<string>,
  keys: RowKeys,
  cap: number | undefined,
): Promise<Matched | null> {
  for (const key of candidates) {
    if (keys.taken.has(key)) continue;
    const purchase = await underKey(client, params, key, cap);
    if (purchase === null) continue;
    if (key !== keys.own || keys.shared) keys.taken.add(key);
    return { ...purchase, key };
  }
  return null;
}

/** `body` bought (or replayed) under `key`; null when the key bought another body (409), which it then keeps. */
async function underKey(client: CarbonClient, body: PurchaseParams, key: string, cap?: number): Promise<Purchase | null> {
  try {
    return await client.buy(body, { idempotencyKey: key, maxAmountCents: cap });
  } catch (err) {
    if (err instanceof CarbonApiError && err.code === 'idempotency_key_reused') return null;
    throw err;
  }
}

/**
 * The offset a row's key bought, found without buying: the offsets with the row's reference are
 * tried as the body under that key. A key that bought once only ever replays that purchase (same
 * body) or answers 409 (another body), so no try can buy. Null when it is not found (bought by an
 * amount that did not come out exact, or among more offsets than are tried).
 */
export async function boughtAs(
  client: CarbonClient,
  key: string,
  params: PurchaseParams,
): Promise<{ offset: Offset; body: PurchaseParams } | null> {
  const reference = params.reference;
  if (reference === undefined) return null;
  const { data } = await client.list({ reference, limit: 100 });
  let tries = 0;
  for (const candidate of data) {
    for (const body of [
      { kg: candidate.kg, reference },
      { amount_cents: candidate.amount_cents, reference },
    ]) {
      if (++tries > 20) return null;
      const tried = await underKey(client, body, key);
      if (tried?.replayed) return { offset: tried.offset, body };
    }
  }
  return null;
}

/**
 * What a row's own key bought, when that shows the row changed since: every row of the file that
 * asks that body has been matched to a key already (none asks it, or as many as ask it were), so
 * no row later in the file is that purchase, sorted: it is this row's, changed. Undefined
 * otherwise (or when it is not found): the row is looked for under the keys of the rows that share
 * its reference, and bought under the first unused, as a sorted file's row is (README, "Bought once").
 */
async function changedRow(client: CarbonClient, params: PurchaseParams, key: string, keys: RowKeys): Promise<Offset | undefined> {
  const found = await boughtAs(client, key, params);
  if (found === null) return undefined;
  const id = bodyId(found.body);
  keys.seen.holding.set(id, [...(keys.seen.holding.get(id) ?? []), key]);
  const unmatched = keys.askers(found.body) - (keys.seen.claimed.get(id) ?? 0);
  return unmatched > 0 ? undefined : found.offset;
}
