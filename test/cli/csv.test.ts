import { expect, test } from 'vitest';
import { CSV_COLUMNS, csvHeader, csvRow } from '../../src/cli/render/resources.js';
import { parseCsv } from '../support/cli.js';
import { anOffset } from '../support/offsets.js';

const offset = (reference: string | null) =>
  anOffset({ kg: 500, amount_cents: 2000, requested: { kg: 500, amount_cents: null }, reference, placed: '2026-11-21T22:00:00.000Z' });

const referenceOf = (reference: string | null) => {
  const [header, row] = parseCsv(csvHeader() + csvRow(offset(reference)));
  return row![header!.indexOf('reference')];
};

test('a reference a spreadsheet would run as a formula is written as text, with a leading quote', () => {
  for (const formula of ['=HYPERLINK("http://example.com","click")', '+1+1', '-2+3', '@SUM(A1:A2)', '\tcmd', '\r=1']) {
    expect(referenceOf(formula), JSON.stringify(formula)).toBe(`'${formula}`);
  }
});

test('any other reference, and every other field, is written as it is', () => {
  // Each character that needs quoting alone too: a comma, a quote, a line feed, a carriage return.
  for (const plain of [
    'batch-a',
    'Flight LHR→JFK, "economy"\nreturn leg',
    'a,b',
    'say "hi"',
    'line\nbreak',
    'cr\rhere',
    "'already quoted",
    'a=b',
    ' =1',
  ]) {
    expect(referenceOf(plain), JSON.stringify(plain)).toBe(plain);
  }
  // Quoted as written, not only as a lenient reader reads it back (a bare CR reads back either way).
  for (const [text, written] of [
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    ['cr\rhere', '"cr\rhere"'],
  ] as const) {
    expect(csvRow(offset(text)), JSON.stringify(text)).toContain(`,${written},`);
  }
  expect(referenceOf(null)).toBe('');
  const [header, row] = parseCsv(csvHeader() + csvRow(offset('=1')));
  expect(header).toEqual([...CSV_COLUMNS]);
  expect(Object.fromEntries(header!.map((h, i) => [h, row![i]]))).toMatchObject({
    id: 'off_0123456789abcdefghijklmn',
    livemode: 'false',
    kg: '500',
    amount_cents: '2000',
    requested_amount_cents: '',
    created: '2026-11-21T22:00:00.000Z',
  });
});
