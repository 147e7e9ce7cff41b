import type { PurchaseParams } from '../../api/types.js';
import type { Context } from '../context.js';
import { dollars, grouped } from '../render/format.js';
import type { BatchTotal } from './dry-run.js';
import { rebuyKey, rowKey } from './key.js';
import type { BatchRow } from './rows.js';
import type { RowTable } from './table.js';

/** A row in `Owed.free`: charged (0), bought by an earlier run (replayed), or changed since (not bought). */
export const REPLAYED = 1;
export const CHANGED = 2;

/**
 * What the balance must cover of a batch: the cents of the rows it would charge, how many rows an
 * earlier run bought (replayed) and how many changed since then (not bought again without
 * --rebuy-changed), and which rows are not charged (REPLAYED, CHANGED), by their place in the file.
 */
export interface Owed {
  cents: number;
  replayed: number;
  changed: number;
  free: Uint8Array;
}

/** Rows looked up together (the sandbox reads a thousand keys a transaction). */
const CHUNK = 1_000;

type Looked = { at: number; key: string; params: PurchaseParams; cents: number };

/**
 * On the local engine, what a batch would be charged: a row an earlier run bought comes back
 * replayed, uncharged, and the ledger says which did (as the purchase reads its key), so a finished
 * batch run again after the balance fell is not refused for a top-up it does not need. A row whose
 * key bought another request is `changed` (not bought), or with --rebuy-changed bought under its
 * new key, which may have bought it already. Counted only where the row's own key is the only one it
 * may be bought under (match.ts): a row whose reference other rows share may be matched to another's
 * key (a sorted file) and bought, so it counts as charged. Undefined on the remote engine: the API
 * cannot say what a key bought without buying.
 */
export async function owedOf(
  ctx: Context,
  rows: AsyncIterable<BatchRow>,
  table: RowTable,
  batch: { id: string; total: BatchTotal; rebuyChanged: boolean },
): Promise<Owed | undefined> {
  if (ctx.settings.engine !== 'local') return undefined;
  const sandbox = await ctx.sandbox();
  const mode = batch.total.livemode ? 'live' : 'test';
  const owed: Owed = { cents: 0, replayed: 0, changed: 0, free: new Uint8Array(table.length) };
  const replayed = (row: Looked) => {
    owed.replayed++;
    owed.free[row.at] = REPLAYED;
  };
  let part: Looked[] = [];
  const settle = async () => {
    const found = await sandbox.replays(mode, part);
    const rebuys: Looked[] = [];
    part.forEach((row, k) => {
      if (found[k] === 'same') replayed(row);
      else if (found[k] === 'none') owed.cents += row.cents;
      else if (batch.rebuyChanged) rebuys.push({ ...row, key: rebuyKey(row.key, row.params) });
      else {
        owed.changed++;
        owed.free[row.at] = CHANGED;
      }
    });
    const again = rebuys.length === 0 ? [] : await sandbox.replays(mode, rebuys);
    rebuys.forEach((row, k) => {
      if (again[k] === 'same') replayed(row);
      else owed.cents += row.cents;
    });
    part = [];
  };
  let at = 0;
  for await (const { params } of rows) {
    const cents = table.quote(at).cents;
    const shared = params.reference !== undefined && table.occurrences.countOf(params) > 1;
    if (shared) owed.cents += cents;
    else part.push({ at, key: rowKey(batch.id, params, table.occurrenceOf(at)), params, cents });
    at++;
    if (part.length === CHUNK) await settle();
  }
  await settle();
  return owed;
}

/**
 * How a batch's words say the rows an earlier run bought, after what it buys: `; N rows bought by
 * an earlier run are not charged again: $X to pay`, with the rows changed since (and the sum to
 * pay unless `toPay` is false); nothing when none (or unknown).
 */
export function earlierRows(owed: Owed | undefined, toPay = true): string {
  if (owed === undefined || owed.replayed + owed.changed === 0) return '';
  const rows = (n: number) => (n === 1 ? '1 row' : `${grouped(n)} rows`);
  const parts = [
    owed.replayed > 0 ? `${rows(owed.replayed)} bought by an earlier run ${owed.replayed === 1 ? 'is' : 'are'} not charged again` : '',
    owed.changed > 0
      ? `${rows(owed.changed)} changed since ${owed.changed === 1 ? 'is' : 'are'} not bought again without --rebuy-changed`
      : '',
  ];
  return `; ${parts.filter(Boolean).join(', and ')}${toPay ? `: ${dollars(owed.cents)} to pay` : ''}`;
}
