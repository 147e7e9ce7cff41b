import type { OffsetList } from '../api/types.js';
import { CarbonError } from './errors.js';

/**
 * A server that repeats itself: a page whose cursor does not move on, or that brings back an
 * offset an earlier page (or the same page) already gave; or one that says there is more after a
 * page with no offset to go on from. Every paging loop stops on it instead
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

/**
 * Ids are kept and compared as sorted arrays, not in Sets: on Node 26 a string looked up in a Set or
 * a Map is copied into V8's old space (internalised), which only a full collection frees, and
 * `list --all` over a million offsets, one lookup an id, peaked 27 MB higher for it (BENCHMARKS.md).
 */
export class PageGuard {
  /** The first SEEN_MAX ids, sorted. */
  private seen: string[] = [];
  private readonly cursors = new Set<string>();
  /** The page before's ids, sorted. */
  private previous: string[] = [];

  /** Call with each page and the cursor it was asked with; throws CarbonPagingError on a repeat. */
  check(page: OffsetList, cursor: string | undefined): void {
    // More, it says, after no offset at all: the next page is asked after the last one, and there is none.
    if (page.has_more && page.data.length === 0)
      throw new CarbonPagingError(
        `The server answered has_more with no offsets on ${cursor === undefined ? 'the first page' : `the page after cursor ${cursor}`}: there is no cursor to go on from, so paging stopped with the list unfinished.`,
        cursor ?? null,
      );
    if (cursor !== undefined) {
      if (this.cursors.has(cursor))
        throw new CarbonPagingError(`The server sent cursor ${cursor} a second time: paging would never end, so it stopped.`, cursor);
      this.cursors.add(cursor);
    }
    const ids = page.data.map((offset) => offset.id);
    const sorted = ids.slice().sort();
    if (repeats(sorted, this.previous) || sorted.some((id) => includes(this.seen, id))) this.refuse(ids, cursor);
    const room = SEEN_MAX - this.seen.length;
    if (room > 0) this.seen = merged(this.seen, room >= sorted.length ? sorted : ids.slice(0, room).sort());
    this.previous = sorted;
    const last = page.data.at(-1);
    if (page.has_more && last !== undefined && last.id === cursor) {
      throw new CarbonPagingError(
        `The server's cursor did not advance: the page after ${cursor} ends with ${cursor} again and says has_more.`,
        cursor,
      );
    }
  }

  /** Throws for the page's first id, in its order, that came before (on an earlier page or on this one). */
  private refuse(ids: string[], cursor: string | undefined): never {
    const repeated = ids.find((id, i) => includes(this.seen, id) || includes(this.previous, id) || ids.indexOf(id) < i);
    throw new CarbonPagingError(
      `The server repeated offset ${repeated} on ${cursor === undefined ? 'the first page' : `the page after cursor ${cursor}`} (starting_after=${cursor ?? '(none)'}): its cursor does not advance, so paging stopped rather than loop.`,
      cursor ?? null,
    );
  }
}

/** Whether `sorted` holds an id twice, or one of `before` (both sorted). */
function repeats(sorted: string[], before: string[]): boolean {
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
  for (let i = 0, j = 0; i < sorted.length && j < before.length; ) {
    if (sorted[i] === before[j]) return true;
    if (sorted[i]! < before[j]!) i++;
    else j++;
  }
  return false;
}

/** Whether the sorted `list` holds `id` (a binary search). */
function includes(list: string[], id: string): boolean {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]! < id) low = middle + 1;
    else high = middle;
  }
  return list[low] === id;
}

/** Two sorted lists as one. */
function merged(a: string[], b: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]! < b[j]!) ? a[i++]! : b[j++]!);
  return out;
}
