import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { dollars, grouped, longDay, ratePerKg, shortDay } from '../../src/service/units.js';
import '../support/seed.js';

/**
 * The people's formats carbon writes by string arithmetic are the ones ICU would write (the first
 * use of ICU in a process costs 11–17 ms, BENCHMARKS.md): the same text as `toLocaleString('en-US')`
 * for every whole number carbon counts, and as the en-GB and en-US dates the pages show.
 */

describe('grouped', () => {
  test('the same text as toLocaleString("en-US") for any safe integer, either sign', () => {
    fc.assert(
      fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(grouped(n)).toBe(n.toLocaleString('en-US'));
      }),
      { numRuns: 5000 },
    );
  });

  test('the edges: each length of digits either side of a comma, and the largest safe integers', () => {
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 12_345_678];
    for (const n of [...edges, ...edges.map((e) => -e).filter((e) => e !== 0), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      expect(grouped(n)).toBe(n.toLocaleString('en-US'));
    }
    expect(grouped(1_234_567)).toBe('1,234,567');
  });

  test('what is not a safe integer is written as toLocaleString writes it', () => {
    for (const n of [2.5, -1234.5678, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) expect(grouped(n)).toBe(n.toLocaleString('en-US'));
  });

  test('dollars and rates group their whole part the same way', () => {
    expect(dollars(123_456_789)).toBe('$1,234,567.89');
    expect(dollars(-100_000)).toBe('-$1,000.00');
    expect(ratePerKg(123_456_000)).toBe('$1,234.56/kg');
  });
});

describe('days', () => {
  /** 1970 to 9999: the years a model's clock reaches (ICU writes others with eras and signs). */
  const moments = fc.integer({ min: 0, max: 253_402_300_799_999 }).map((ms) => new Date(ms));

  test('longDay: en-GB\'s long date in UTC ("30 November 2026")', () => {
    fc.assert(
      fc.property(moments, (d) => {
        expect(longDay(d)).toBe(d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }));
      }),
      { numRuns: 2000 },
    );
    expect(longDay(new Date('2026-11-30T23:59:59.999Z'))).toBe('30 November 2026');
  });

  test('shortDay: en-US\'s month and day in UTC ("Nov 30")', () => {
    fc.assert(
      fc.property(moments, (d) => {
        expect(shortDay(d)).toBe(d.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }));
      }),
      { numRuns: 2000 },
    );
    expect(shortDay(new Date('2026-09-01T00:00:00Z'))).toBe('Sep 1');
  });
});
