import { describe, expect, test } from 'vitest';
import { chartHtml } from '../../src/server/pages/developer/chart.js';

/** The developer page's chart as HTML: its scale's marks, and which side each day's value opens to. */

const scale = (html: string) =>
  [...html.matchAll(/<ol class="scale"[^>]*><li>([^<]*)<\/li><li>([^<]*)<\/li>/g)].flatMap((m) => [m[1], m[2]]);

describe('the chart of kg per day', () => {
  test.each([
    [1, ['2 kg', '1 kg']],
    [3, ['4 kg', '2 kg']],
    [5, ['6 kg', '3 kg']],
    [9, ['10 kg', '5 kg']],
    [30, ['50 kg', '25 kg']],
    [1_000_000, ['1,000,000 kg', '500,000 kg']],
  ])('the largest day %i kg: the scale marks whole kg, the middle one too', (largest, marks) => {
    const html = chartHtml(
      {
        days: [
          { period: '2026-11-20', kg: largest },
          { period: '2026-11-29', kg: 1 },
        ],
        today: '2026-11-30',
        earlier: false,
      },
      'test',
    );
    expect(scale(html)).toEqual(marks);
  });

  test('the later half of the days opens its value to the left, where there is room on a phone', () => {
    const html = chartHtml({ days: [{ period: '2026-11-01', kg: 5 }], today: '2026-11-30', earlier: false }, 'test');
    const sides = [...html.matchAll(/<li class="day( end)?"/g)].map((m) => m[1] === ' end');
    expect(sides).toHaveLength(30);
    expect(sides.indexOf(true)).toBe(15);
    expect(sides.slice(15).every(Boolean)).toBe(true);
  });
});
