import { describe, expect, test } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { eventIds, freshState, type PollOptions, poll } from '../../src/cli/watch/follow.js';
import { anOffset } from '../support/offsets.js';

/** carbon watch's diff of one poll against what it knew, in-process, on hand-made lists. */

const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
const offset = (id: string, s: number, status: Offset['status'] = 'processing'): Offset =>
  anOffset({ id, status, kg: 1, amount_cents: 4, created: at(s), placed: status === 'placed' ? at(s + 3) : null });

/** The list newest first, counting how many offsets the walk read. */
function walk(offsets: Offset[]) {
  const read = { n: 0 };
  const sorted = [...offsets].sort((a, b) => b.created.localeCompare(a.created));
  return {
    read,
    async *[Symbol.asyncIterator]() {
      for (const o of sorted) {
        read.n++;
        yield o;
      }
    },
  };
}
const options = (over: Partial<PollOptions> = {}): PollOptions => ({
  baseline: false,
  since: null,
  now: () => at(999),
  eventId: (id, type) => `${type}:${id}`,
  exists: async () => true,
  warn: () => {},
  ...over,
});
const ids = (events: Array<{ id: string }>) => events.map((e) => e.id);

describe('poll', () => {
  test('a baseline poll prints nothing and remembers what is processing', async () => {
    const state = freshState('test', null);
    expect(await poll(state, walk([offset('a', 1, 'placed'), offset('b', 2)]), options({ baseline: true }))).toEqual([]);
    expect(state.pending).toEqual({ b: at(2) });
    expect(state.newest).toEqual({ created: at(2), ids: ['b'] });
    // b placed, c bought: the events of the older offset come first.
    const events = await poll(state, walk([offset('a', 1, 'placed'), offset('b', 2, 'placed'), offset('c', 3)]), options());
    expect(ids(events)).toEqual(['offset.placed:b', 'offset.created:c']);
    expect(state.pending).toEqual({ c: at(3) });
  });

  test("--since on a baseline poll replays, oldest first, each offset's events in order", async () => {
    const state = freshState('test', null);
    const events = await poll(
      state,
      walk([offset('old', 1), offset('a', 10, 'placed'), offset('b', 11)]),
      options({ baseline: true, since: Date.parse(at(5)) }),
    );
    expect(ids(events)).toEqual(['offset.created:a', 'offset.placed:a', 'offset.created:b']);
    // Older than --since: not followed.
    expect(state.pending).toEqual({ b: at(11) });
    expect(events[1]!.created).toBe(at(13));
  });

  test('offsets created in the same millisecond are told apart by id', async () => {
    const state = freshState('test', null);
    await poll(state, walk([offset('a', 5, 'placed')]), options({ baseline: true }));
    const events = await poll(state, walk([offset('a', 5, 'placed'), offset('b', 5, 'placed')]), options());
    expect(ids(events)).toEqual(['offset.created:b', 'offset.placed:b']);
    expect(state.newest).toEqual({ created: at(5), ids: ['a', 'b'] });
    expect(await poll(state, walk([offset('a', 5, 'placed'), offset('b', 5, 'placed')]), options())).toEqual([]);
  });

  test('a poll reads down to the oldest offset still processing, and no further', async () => {
    const state = freshState('test', null);
    const list = [
      offset('p1', 1, 'placed'),
      offset('p2', 2, 'placed'),
      offset('w', 3),
      offset('p4', 4, 'placed'),
      offset('p5', 5, 'placed'),
    ];
    await poll(state, walk(list), options({ baseline: true }));
    const w = walk(list);
    expect(await poll(state, w, options())).toEqual([]);
    // p5, p4, w, then p2 (older than w: the walk stops there).
    expect(w.read.n).toBe(4);
    list[2] = offset('w', 3, 'refunded');
    expect(ids(await poll(state, walk(list), options()))).toEqual(['offset.refunded:w']);
    const settled = walk(list);
    await poll(state, settled, options());
    // Nothing pending: only down to the newest seen.
    expect(settled.read.n).toBe(2);
  });

  test('an offset a resumed cursor follows is read however far past --since; others older than --since stay unfollowed', async () => {
    const state = freshState('test', null);
    await poll(state, walk([offset('w', 1), offset('p', 2, 'placed')]), options({ baseline: true }));
    expect(state.pending).toEqual({ w: at(1) });
    // Resumed later with a --since later than w: x, bought while stopped, is older than --since
    // (not followed, as before); w is followed still, and its placement is news.
    const list = [offset('w', 1, 'placed'), offset('p', 2, 'placed'), offset('x', 3), offset('m', 6)];
    const events = await poll(state, walk(list), options({ since: Date.parse(at(5)) }));
    expect(ids(events)).toEqual(['offset.placed:w', 'offset.created:m']);
    expect(state.pending).toEqual({ m: at(6) });
  });

  test('a ledger that went back (its newest older than the newest seen, which is gone): every offset in it is sent, and said', async () => {
    const state = freshState('test', null);
    await poll(state, walk([offset('x', 10, 'placed')]), options({ baseline: true }));
    // A snapshot loaded: x gone, the clock back; a and c made after it, older than x was.
    const warned: string[] = [];
    const asked: string[] = [];
    const exists = async (id: string) => {
      asked.push(id);
      return false;
    };
    const events = await poll(state, walk([offset('a', 1, 'placed'), offset('c', 5)]), options({ exists, warn: (l) => warned.push(l) }));
    expect(ids(events)).toEqual(['offset.created:a', 'offset.placed:a', 'offset.created:c']);
    expect(asked).toEqual(['x']);
    expect(warned).toEqual([
      'the ledger went back (a sandbox reset or a snapshot loaded): the events of every offset in it are sent again.',
    ]);
    expect([state.newest, state.pending]).toEqual([{ created: at(5), ids: ['c'] }, { c: at(5) }]);
    // Then as usual: only what is new.
    expect(ids(await poll(state, walk([offset('a', 1, 'placed'), offset('c', 5), offset('d', 6)]), options()))).toEqual([
      'offset.created:d',
    ]);
  });

  test('an offset older than the newest seen while that one is still there (two instances, two clocks): no replay', async () => {
    const state = freshState('test', null);
    await poll(state, walk([offset('x', 10, 'placed')]), options({ baseline: true }));
    const warned: string[] = [];
    const events = await poll(state, walk([offset('x', 10, 'placed'), offset('b', 9)]), options({ warn: (l) => warned.push(l) }));
    expect([ids(events), warned]).toEqual([[], []]);
  });

  test('an offset followed that is no longer in the ledger (a reset) is dropped, and said: it is not waited on for ever', async () => {
    const state = freshState('test', null);
    await poll(state, walk([offset('p', 3)]), options({ baseline: true }));
    expect(state.pending).toEqual({ p: at(3) });
    const warned: string[] = [];
    // Reset: p gone; n made after it, newer.
    const events = await poll(state, walk([offset('n', 8, 'placed')]), options({ warn: (l) => warned.push(l) }));
    expect(ids(events)).toEqual(['offset.created:n', 'offset.placed:n']);
    expect(state.pending).toEqual({});
    expect(warned).toEqual(['p is no longer in the ledger (a sandbox reset or a snapshot loaded): it is not followed any more.']);
  });
});

describe('event ids', () => {
  test("the same in every run; a sandbox offset's event says it is the sandbox's, another service's keeps evt_ and 24 characters", async () => {
    const id = await eventIds();
    const again = await eventIds();
    expect(id('off_sandboxAbc', 'offset.created')).toBe(again('off_sandboxAbc', 'offset.created'));
    expect(id('off_sandboxAbc', 'offset.created')).toMatch(/^evt_sandbox[\w-]{17}$/);
    expect(id('off_sandboxAbc', 'offset.placed')).not.toBe(id('off_sandboxAbc', 'offset.created'));
    expect(id('off_1234567890abcdefghijklmn', 'offset.created')).toMatch(/^evt_[\w-]{24}$/);
    expect(id('off_1234567890abcdefghijklmn', 'offset.created').startsWith('evt_sandbox')).toBe(false);
  });
});
