import type { PurchaseParams } from '../../api/types.js';
import type { Context } from '../context.js';
import { dollars, grouped } from '../render/format.js';
import type { BatchTotal } from './dry-run.js';
import { rowKey } from './key.js';
import type { BatchRow } from './rows.js';
import type { RowTable } from './table.js';

/** What the balance must cover of a batch: the cents of the rows not bought before, and how many were. */
export interface Owed {
  cents: number;
  replayed: number;
}

/** Rows looked up together (the sandbox reads a thousand keys a transaction). */
const CHUNK = 1_000;

/**
 * On the local engine, what a batch the balance does not cover as a whole would be charged: a row
 * an earlier run bought comes back replayed, uncharged, and the ledger says which did (as the
 * purchase reads its key), so a finished batch run again after the balance fell is not refused for a
 * top-up it does not need. Counted only where the row's own key is the only one it may be bought
 * under (match.ts): a row whose reference other rows share may be matched to another's key (a
 * sorted file) and bought, so it counts as charged. Undefined on the remote engine: the API cannot
 * say what a key bought without buying.
 */
export async function owedOf(
  ctx: Context,
  rows: AsyncIterable<BatchRow>,
  table: RowTable,
  batchId: string,
  total: BatchTotal,
): Promise<Owed | undefined> {
  if (ctx.settings.engine !== 'local') return undefined;
  const sandbox = await ctx.sandbox();
  const owed: Owed = { cents: 0, replayed: 0 };
  let part: Array<{ key: string; params: PurchaseParams; cents: number }> = [];
  const settle = async () => {
    const found = await sandbox.replays(total.livemode ? 'live' : 'test', part);
    for (let k = 0; k < part.length; k++) {
      if (found[k]) owed.replayed++;
      else owed.cents += part[k]!.cents;
    }
    part = [];
  };
  let i = 0;
  for await (const { params } of rows) {
    const cents = table.quote(i).cents;
    const shared = params.reference !== undefined && table.occurrences.countOf(params) > 1;
    if (shared) owed.cents += cents;
    else part.push({ key: rowKey(batchId, params, table.occurrenceOf(i)), params, cents });
    i++;
    if (part.length === CHUNK) await settle();
  }
  await settle();
  return owed;
}

/** How a batch's words say the rows an earlier run bought, after what it buys: `; N rows bought by an earlier run are not charged again: $X to pay`; nothing when none (or unknown). */
export function earlierRows(owed: Owed | undefined): string {
  if (owed === undefined || owed.replayed === 0) return '';
  const rows = owed.replayed === 1 ? '1 row' : `${grouped(owed.replayed)} rows`;
  return `; ${rows} bought by an earlier run ${owed.replayed === 1 ? 'is' : 'are'} not charged again: ${dollars(owed.cents)} to pay`;
}
