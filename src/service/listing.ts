import type { Mode } from '../api/types.js';
import type { LedgerReads, OffsetRecord } from '../store/port.js';
import { ApiError } from './errors.js';
import { redactSecrets } from './keys.js';

/** Where a page of offsets starts and how long it is; `read` fetches `limit` rows older than `beforeSeq`. */
export interface PageAsk {
  mode: Mode;
  /** The id of the previous page's last offset, or null for the first page. */
  startingAfter: string | null;
  limit: number;
  /** Said after the id when the cursor names no offset of the mode (the API adds ` (starting_after)`). */
  cursorNote: string;
  read: (beforeSeq: number | null, limit: number) => Promise<OffsetRecord[]>;
}

/**
 * One page of offsets, newest first, and whether more follow: the listing of the API and of the
 * developer page alike (they differ only in how `read` filters). The cursor must be an offset of
 * the same mode: the API keeps the two apart.
 */
export async function listPage(reads: Pick<LedgerReads, 'offset'>, ask: PageAsk): Promise<{ rows: OffsetRecord[]; hasMore: boolean }> {
  let beforeSeq: number | null = null;
  if (ask.startingAfter !== null) {
    const cursor = await reads.offset(ask.startingAfter);
    if (cursor === undefined || cursor.mode !== ask.mode) {
      const named = `'${redactSecrets(ask.startingAfter)}'${ask.cursorNote}`;
      throw new ApiError('resource_missing', `No such offset: ${named}.`, { param: 'starting_after' });
    }
    beforeSeq = cursor.seq;
  }
  const rows = await ask.read(beforeSeq, ask.limit + 1);
  const hasMore = rows.length > ask.limit;
  if (hasMore) rows.pop();
  return { rows, hasMore };
}
