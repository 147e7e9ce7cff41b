import fc from 'fast-check';
import { expect, test } from 'vitest';
import { isoTime } from '../../src/platform/iso-time.js';
import '../support/seed.js';

/** The widest range Date holds: ±100,000,000 days around 1970. */
const MAX_MS = 8.64e15;

test('the same text as toISOString for any ms Date holds, in any order of calls', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -MAX_MS, max: MAX_MS }), { minLength: 1, maxLength: 20 }), (times) => {
      for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }),
    { numRuns: 2000 },
  );
});

test('the edges: either side of midnight, of 1970, of year 10000, and the last ms Date holds', () => {
  const edges = [0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, 253_402_300_799_999, 253_402_300_800_000, MAX_MS, -MAX_MS];
  for (const ms of edges) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  // A run of ms within one day and then the next, as a list's created times come.
  for (let ms = 1_732_060_799_990; ms < 1_732_060_800_010; ms++) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
});

test('what toISOString refuses is refused the same way, and a fraction of a ms dropped as it drops it', () => {
  for (const ms of [1.5, -1.5, 86_399_999.9]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  for (const ms of [Number.NaN, MAX_MS + 1, -MAX_MS - 1, Number.POSITIVE_INFINITY]) {
    expect(() => new Date(ms).toISOString()).toThrow(RangeError);
    expect(() => isoTime(ms)).toThrow(RangeError);
  }
});
