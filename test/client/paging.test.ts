import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
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

test('a page of no offsets that says has_more stops the walk: there is no cursor to go on from', () => {
  expect(() => new PageGuard().check(page([]), undefined)).toThrow(/has_more with no offsets on the first page/);
  expect(() => walk([ids(0, 100), []])).toThrow(/has_more with no offsets on the page after cursor off_99/);
  // The last page, empty and saying no more, is the end.
  expect(() => new PageGuard().check(page([], false), undefined)).not.toThrow();
});

test('a walk of distinct offsets passes whole', () => {
  expect(() => walk(Array.from({ length: 300 }, (_, i) => ids(i * 100, 100)))).not.toThrow();
});

test('a long walk leaves nothing in V8 old space a page: the ids are never looked up in a Set or a Map', () => {
  // On Node 26 a young string looked up in a Set or a Map is copied into V8's old space, freed only
  // by a full collection: a guard that did so for each id took `list --all` over 1M offsets from 87
  // to 118 MB. 150,000 fresh ids through the guard, each page made as it is checked (as a walk
  // reads them): the guard of Sets left 7.4 MB in old space here on Node 26 (on 22 and 24, which
  // copy nothing, it passes), this one 0.7 MB (the first SEEN_MAX ids, kept by design).
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const fresh = (pageNo: number): OffsetList =>
    JSON.parse(JSON.stringify(page(Array.from({ length: 100 }, (_, i) => `off_${(pageNo * 100 + i).toString(36).padStart(24, '0')}`))));
  const guard = new PageGuard();
  gc();
  const before = oldSpaceUsed();
  let cursor: string | undefined;
  for (let i = 0; i < 1_500; i++) {
    const p = fresh(i);
    guard.check(p, cursor);
    cursor = p.data.at(-1)!.id;
  }
  expect(oldSpaceUsed() - before).toBeLessThan(3 * 2 ** 20);
});

const oldSpaceUsed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
