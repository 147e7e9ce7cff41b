import type { OffsetList } from '../api/types.js';
import { CarbonError } from './errors.js';

/**
 * A server that repeats itself: a page whose cursor does not move on, or that brings back an
 * offset an earlier page (or the same page) already gave. Every paging loop stops on it instead
 * of looping for ever (issue 25: a mock answering `has_more: true` with the same cursor made
 * `list --all` print the same offset thousands of times).
 */
export class CarbonPagingError extends CarbonError {
  override name = 'CarbonPagingError';
  constructor(
    message: string,
    /** The cursor (`starting_after`) of the page that repeated itself; null for the first page. */
    readonly cursor: string | null,
  ) {
    super(message);
  }
}

/**
 * Checks each page of one walk: every cursor is remembered (one a page), and every id of the
 * first SEEN_MAX offsets; beyond that, the ids of the page before (so `list --all` over a million
 * offsets stays in constant memory). A server that loops must repeat a cursor, and one that
 * ignores `starting_after` repeats the page before: both are caught however long the walk.
 * SEEN_MAX was 100,000: looking each id up in a set that large took a 1M-offset `list --all`
 * 0.4 s more, and 9 MB (BENCHMARKS.md, streaming).
 */
export const SEEN_MAX = 10_000;

export class PageGuard {
  private readonly seen = new Set<string>();
  private readonly cursors = new Set<string>();
  private previous = new Set<string>();

  /** Call with each page and the cursor it was asked with; throws CarbonPagingError on a repeat. */
  check(page: OffsetList, cursor: string | undefined): void {
    const at = cursor === undefined ? 'the first page' : `the page after cursor ${cursor}`;
    if (cursor !== undefined) {
      if (this.cursors.has(cursor))
        throw new CarbonPagingError(`The server sent cursor ${cursor} a second time: paging would never end, so it stopped.`, cursor);
      this.cursors.add(cursor);
    }
    const current = new Set<string>();
    for (const offset of page.data) {
      if (this.seen.has(offset.id) || this.previous.has(offset.id) || current.has(offset.id)) {
        throw new CarbonPagingError(
          `The server repeated offset ${offset.id} on ${at} (starting_after=${cursor ?? '(none)'}): its cursor does not advance, so paging stopped rather than loop.`,
          cursor ?? null,
        );
      }
      current.add(offset.id);
      if (this.seen.size < SEEN_MAX) this.seen.add(offset.id);
    }
    this.previous = current;
    const last = page.data.at(-1);
    if (page.has_more && last !== undefined && last.id === cursor) {
      throw new CarbonPagingError(
        `The server's cursor did not advance: the page after ${cursor} ends with ${cursor} again and says has_more.`,
        cursor,
      );
    }
  }
}
