import { expect, test } from 'vitest';
import type { Offset, OffsetList } from '../../src/api/types.js';
import { CarbonPagingError, PageGuard, SEEN_MAX } from '../../src/client/paging.js';

/** A walk's page of offsets by id (the guard reads only ids), with has_more. */
const page = (ids: string[], hasMore = true): OffsetList => ({
  object: 'list',
  data: ids.map((id) => ({ id }) as Offset),
  has_more: hasMore,
});
const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => `off_${from + i}`);

/** Walks pages of 100 through one guard; each page's cursor is the last id of the page before. */
function walk(pages: string[][]): void {
  const guard = new PageGuard();
  let cursor: string | undefined;
  for (const p of pages) {
    guard.check(page(p), cursor);
    cursor = p.at(-1);
  }
}

test('an offset of the first SEEN_MAX repeated however many pages later stops the walk', () => {
  const pages = Array.from({ length: 150 }, (_, i) => ids(i * 100, 100));
  pages.push([...ids(15_000, 99), 'off_42']);
  expect(() => walk(pages)).toThrow(CarbonPagingError);
  expect(() => walk(pages)).toThrow(/repeated offset off_42/);
});

test('beyond the first SEEN_MAX, an offset of the page before (or of the same page) stops it', () => {
  const first = SEEN_MAX / 100;
  const pages = Array.from({ length: first + 5 }, (_, i) => ids(i * 100, 100));
  const before = pages.at(-1)!;
  expect(() => walk([...pages, [...ids(50_000, 99), before[7]!]])).toThrow(/repeated offset/);
  expect(() => walk([...pages, [...ids(50_000, 99), 'off_50000']])).toThrow(/repeated offset off_50000/);
});

test('beyond the first SEEN_MAX, the memory is the page before: an offset from two pages back is not remembered', () => {
  // The bound the README gives: what the guard holds stays constant however long the walk.
  const first = SEEN_MAX / 100;
  const pages = Array.from({ length: first + 5 }, (_, i) => ids(i * 100, 100));
  const twoBack = pages.at(-2)!;
  expect(() => walk([...pages, [...ids(50_000, 99), twoBack[7]!]])).not.toThrow();
});

test('a walk of distinct offsets passes whole', () => {
  expect(() => walk(Array.from({ length: 300 }, (_, i) => ids(i * 100, 100)))).not.toThrow();
});
