import { describe, expect, test } from 'vitest';
import { Occurrences, rowKey } from '../../src/cli/batch/key.js';
import { mapHeaders, readRow } from '../../src/cli/batch/rows.js';

/** Issue 35, item 3 (numbers in a decimal-comma file, dollar headers) and issue 34, item 4 (a row's identity). */
const kgColumns = mapHeaders(['kg', 'reference']).columns;
const dollarColumns = mapHeaders(['Cost (USD)', 'reference']).columns;

describe('numbers of a semicolon- or tab-separated file', () => {
  test.each([
    ['1.200', { kg: 1200 }],
    ['1 200', { kg: 1200 }],
    ['1\u00a0200', { kg: 1200 }],
    ['1.234.567', { kg: 1234567 }],
    ['500', { kg: 500 }],
  ])('kg %j reads %j', (text, params) => {
    expect(readRow([text, 'r'], kgColumns, 'comma')).toEqual({ ...params, reference: 'r' });
  });

  test.each([
    ['1.234,50', 123450],
    ['1 234,50', 123450],
    ['12,5', 1250],
    ['0,29', 29],
    ['$1.000', 100000],
    // Not a number of the locale at all (a dot that groups no thousands): read as carbon's options read it.
    ['12.50', 1250],
    ['1,234.50', 123450],
  ])('dollars %j read as %i cents', (text, cents) => {
    expect(readRow([text, 'r'], dollarColumns, 'comma')).toEqual({ amount_cents: cents, reference: 'r' });
  });

  test.each([
    ['kg', kgColumns, '1,200', 'kg "1,200" could be read two ways: 1.2 (a decimal comma'],
    ['dollars', dollarColumns, '1,500', 'amount "1,500" could be read two ways: 1.5 (a decimal comma'],
  ])('%s %j is refused, naming both readings', (_what, columns, text, message) => {
    expect(readRow([text, 'r'], columns, 'comma')).toContain(message);
  });

  test('a comma-separated file reads numbers as before: 1,200 is twelve hundred, 1.200 kg is refused', () => {
    expect(readRow(['1,200', 'r'], kgColumns, 'point')).toEqual({ kg: 1200, reference: 'r' });
    expect(readRow(['1.200', 'r'], kgColumns, 'point')).toContain('kg must be a whole number');
  });

  test('a first group of 0 groups no thousands: 0,100 is refused in a comma-separated file, 0.100 kg in a semicolon one', () => {
    expect(readRow(['0,100', 'r'], kgColumns, 'point')).toContain('kg must be a whole number such as 500 or 1,000, not "0,100"');
    expect(readRow(['0,250', 'r'], dollarColumns, 'point')).toContain('amount must be dollars such as 12.50, not "0,250"');
    expect(readRow(['0.100', 'r'], kgColumns, 'comma')).toContain('kg must be a whole number such as 500 or 1.000, not "0.100"');
    expect(readRow(['0,100', 'r'], kgColumns, 'comma')).toContain(
      'kg must be a whole number such as 500 or 1.000, not "0,100" (no decimals)',
    );
  });
});

describe('dollars out of the range the API takes', () => {
  test.each([
    ['$50,000.01', 'point'],
    ['0.00', 'point'],
    ['50.000,01', 'comma'],
  ] as const)('%j (%s) is said in dollars, naming the column the file has, not amount_cents alone', (text, style) => {
    expect(readRow([text, 'r'], dollarColumns, style)).toBe(
      `amount must be $0.01 to $50,000.00 (the API's amount_cents, 1 to 5,000,000), not "${text}"`,
    );
  });
  test('the bounds themselves are bought', () => {
    expect(readRow(['$50,000.00', 'r'], dollarColumns, 'point')).toEqual({ amount_cents: 5_000_000, reference: 'r' });
    expect(readRow(['0.01', 'r'], dollarColumns, 'point')).toEqual({ amount_cents: 1, reference: 'r' });
  });
});

describe('headers', () => {
  test.each(['cost', 'Cost (USD)', 'price', 'Price in USD', 'total', 'Total $', 'amount', 'dollars'])('%j is dollars', (header) => {
    expect(mapHeaders([header]).columns.get('amount')).toBe(0);
  });
  test('a cost in another currency is refused, not read as dollars', () => {
    expect(() => mapHeaders(['Cost (EUR)', 'kg'])).toThrow('"Cost (EUR)" is in EUR; carbon buys in US dollars');
  });
});

describe("a row's identity", () => {
  const keys = (rows: Array<{ kg?: number; amount_cents?: number; reference?: string }>, batch = 'default') => {
    const seen = new Occurrences();
    return rows.map((p) => rowKey(batch, p, seen.next(p)));
  };

  test('a reference is the row, whatever its quantity; the n-th row of a reference is its own row', () => {
    const [a, b, a2] = keys([
      { kg: 5, reference: 'a' },
      { kg: 6, reference: 'b' },
      { kg: 5, reference: 'a' },
    ]);
    expect(new Set([a, b, a2]).size).toBe(3);
    expect(keys([{ kg: 900, reference: 'a' }])).toEqual([a]);
    // Other rows around it, before or after, change nothing.
    expect(
      keys([
        { kg: 1, reference: 'z' },
        { kg: 6, reference: 'b' },
        { kg: 5, reference: 'a' },
      ]),
    ).toEqual([expect.any(String), b, a]);
  });

  test('a row without a reference is what it buys; identical rows are the first, second… of their kind', () => {
    const [five, fiveAgain, six] = keys([{ kg: 5 }, { kg: 5 }, { kg: 6 }]);
    expect(new Set([five, fiveAgain, six]).size).toBe(3);
    expect(keys([{ kg: 6 }, { kg: 5 }, { kg: 5 }])).toEqual([six, five, fiveAgain]);
    // 5 kg and 5 cents are different rows.
    expect(keys([{ amount_cents: 5 }])).not.toEqual([five]);
  });

  test('the batch id is part of the key', () => {
    expect(keys([{ kg: 5, reference: 'a' }], 'q3')).not.toEqual(keys([{ kg: 5, reference: 'a' }], 'q4'));
  });

  test('counts stay exact past the table growing (10,000 identities, each seen twice)', () => {
    const seen = new Occurrences();
    for (let i = 0; i < 10_000; i++) expect(seen.next({ kg: 1, reference: `r${i}` })).toBe(1);
    for (let i = 0; i < 10_000; i++) expect(seen.next({ kg: 1, reference: `r${i}` })).toBe(2);
    // How many rows have a reference, whatever each buys; none for one never seen.
    expect([seen.countOf({ kg: 9, reference: 'r7' }), seen.countOf({ kg: 1, reference: 'nope' })]).toEqual([2, 0]);
  });
});

describe('a row with more cells than the header names', () => {
  test('is refused, naming the cells past the columns (an unquoted comma split a number); empty ones are nothing', () => {
    // `1,200` unquoted is the cells 1 and 200: read as 1 kg before.
    expect(readRow(['flight-LHR-JFK', '1', '200'], mapHeaders(['reference', 'kg']).columns, 'point')).toBe(
      '3 cells where the header names 2 columns (past them: "200"): an unquoted comma splits a cell in two (1,200 is 1 and 200), so quote such a cell ("1,200"), or name the column in the header',
    );
    expect(readRow(['hotel', '$1', '250.00'], mapHeaders(['reference', 'amount']).columns, 'point')).toContain('past them: "250.00"');
    // A spreadsheet's trailing commas: empty cells, the row as it is.
    expect(readRow(['500', 'r', '', ' '], kgColumns, 'point')).toEqual({ kg: 500, reference: 'r' });
  });
});
