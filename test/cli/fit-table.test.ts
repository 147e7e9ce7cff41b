import { createRequire } from 'node:module';
import { describe, expect, test, vi } from 'vitest';
import { cliTable3 } from '../../src/cli/render/cli-table3.js';
import { BORDERLESS, type Column, displayWidth, headerLine, layout, line, table } from '../../src/cli/render/fit.js';
import { makePaint } from '../../src/cli/render/paint.js';
import { offsetStream, offsetTable } from '../../src/cli/render/resources.js';
import { keyTable, type ShownKey } from '../../src/cli/render/sandbox.js';
import { anOffset } from '../support/offsets.js';

/**
 * Tables are drawn by cli-table3 (issue 28): fit.ts lays them out (columns, widths, cuts) and
 * cli-table3 draws the lines, borderless, two spaces between columns, measuring a cell as fit.ts
 * does. The look is fit.test.ts's, unchanged.
 */

const colour = makePaint(true);
const Table = cliTable3();
type Options = InstanceType<typeof Table>['options'];

/** What `draw` returned, and each cli-table3 table drawn meanwhile: its options and its text. */
function drawnBy<T>(draw: () => T): { result: T; tables: Array<{ options: Options; text: string }> } {
  const tables: Array<{ options: Options; text: string }> = [];
  const drawTable = Table.prototype.toString;
  const spy = vi.spyOn(Table.prototype, 'toString').mockImplementation(function (this: InstanceType<typeof Table>) {
    const text = drawTable.call(this);
    tables.push({ options: this.options, text });
    return text;
  });
  try {
    return { result: draw(), tables };
  } finally {
    spy.mockRestore();
  }
}

/** The lines cli-table3 drew, as a table shows them: no trailing blanks. */
const linesOf = (tables: Array<{ text: string }>) => tables.flatMap((t) => t.text.split('\n').map((l) => l.replace(/ +$/, '')));

const columns: Column[] = [{ header: 'KEY' }, { header: 'COUNT', align: 'right', drop: 1 }, { header: 'NOTE', min: 5, drop: 2 }];
const rows = [
  ['k_1', '12', 'a note that goes on and on'],
  ['k_22', '3', 'brief'],
];

describe('cli-table3 draws the lines', () => {
  test('a table is one cli-table3 table: no borders, no padding, two spaces between columns, the widths fit.ts chose', () => {
    const { result, tables } = drawnBy(() => table(columns, rows, 30, colour.dim));
    expect(tables).toHaveLength(1);
    const { options, text } = tables[0]!;
    // Every border character none, but the one between two columns.
    expect(options.chars).toEqual({
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    });
    expect(BORDERLESS.middle).toBe('  ');
    expect(options.style).toMatchObject({ 'padding-left': 0, 'padding-right': 0, head: [], border: [] });
    expect(options.colWidths).toEqual(layout(columns, rows, 30).widths);
    expect(options.colAligns).toEqual(['left', 'right', 'left']);
    expect(options.truncate).toBe('…');
    expect(options.wordWrap).toBe(false);
    // The header row is cli-table3's head, each header painted on its own.
    expect(options.head).toEqual(['KEY', 'COUNT', 'NOTE'].map((h) => colour.dim(h)));
    // What the table shows is what cli-table3 drew, trailing blanks left out.
    expect(result.split('\n')).toEqual(text.split('\n').map((l) => l.replace(/ +$/, '')));
    expect(result.split('\n')[1]).toBe('k_1      12  a note that goes…');
  });

  test('a dropped column is not given to cli-table3', () => {
    const { tables } = drawnBy(() => table(columns, rows, 14, (s) => s));
    expect(tables[0]!.options.head).toEqual(['KEY', 'NOTE']);
    expect(tables[0]!.options.colWidths).toEqual([4, 8]);
  });

  const offset = (n: number, reference: string | null) => anOffset({ id: `off_${String(n).padStart(24, '0')}`, reference });
  const key: ShownKey = {
    id: 'key_0123456789abcdef',
    mode: 'test',
    permission: 'purchase',
    masked: 'ck_test_…abcd',
    default: 'test',
    created: '2026-11-21T22:00:00.000Z',
    revoked: null,
  } as ShownKey;

  test.each([
    ['a list', () => offsetTable([offset(1, 'travel'), offset(2, null)], colour, 80)],
    ['sandbox keys', () => keyTable([key], colour, 80)],
    [
      'a list streamed (--all), each batch',
      () => {
        const stream = offsetStream(colour, 80);
        return stream([offset(1, 'travel')]) + stream([offset(2, 'a-reference-longer-than-the-first')]);
      },
    ],
    [
      "a report's lines, one at a time",
      () => {
        const at = layout(columns, rows, 40);
        return [headerLine(columns, at, 40, colour.dim), ...rows.map((r) => line(columns, at, r, 40))].join('\n');
      },
    ],
  ])('%s: every line drawn by cli-table3', (_name, draw) => {
    const { result, tables } = drawnBy(draw);
    expect(tables.length).toBeGreaterThan(0);
    for (const { options } of tables) expect(options.chars).toEqual(BORDERLESS);
    expect(result.replace(/\n$/, '').split('\n')).toEqual(linesOf(tables));
  });

  test('a row of a stream wider than its column in an uncuttable column gets a table of its own, and stays whole', () => {
    const at = layout(columns, rows, 80);
    const later = [
      ['k_333', '1', 'x'],
      ['k_4', '2', 'y'],
    ];
    const { result, tables } = drawnBy(() => later.map((r) => line(columns, at, r, 80)));
    expect(tables.map((t) => t.options.colWidths)).toEqual([
      [5, 5, 26],
      [4, 5, 26],
    ]);
    expect(result).toEqual(['k_333      1  x', 'k_4       2  y']);
  });
});

test('a long table is drawn 50 lines a table (cli-table3 takes time that grows with the square of the cells), as one table', () => {
  const many = Array.from({ length: 120 }, (_, i) => [`k_${i}`, String(i), i % 2 === 0 ? 'a note that goes on and on' : 'brief']);
  const { result, tables } = drawnBy(() => table(columns, many, 30, (s) => s));
  expect(tables.map((t) => t.text.split('\n').length)).toEqual([50, 50, 21]);
  expect(result.split('\n')).toHaveLength(121);
  expect(result.split('\n')).toEqual(linesOf(tables));
  // Every table with the same widths: one table, to the eye.
  expect(new Set(tables.map((t) => JSON.stringify(t.options.colWidths))).size).toBe(1);
  expect(result.split('\n').slice(-2)).toEqual(['k_118    118  a note that goe…', 'k_119    119  brief']);
});

describe('cli-table3 counts cells as fit.ts does', () => {
  // Where string-width 4 (cli-table3's own measure) and fit.ts disagree: a Hebrew vowel point
  // (none; string-width: one), ✌ (one; string-width: two), ㉈ (two; string-width: one).
  const POINT = '\u05b0';
  const stringWidth = createRequire(createRequire(import.meta.url).resolve('cli-table3'))('string-width') as (s: string) => number;

  test('string-width, left where it was, would count these otherwise', () => {
    expect([`a${POINT}`, '✌', '㉈'].map(stringWidth)).toEqual([2, 2, 1]);
    expect([`a${POINT}`, '✌', '㉈'].map(displayWidth)).toEqual([1, 1, 2]);
  });

  test("cli-table3 pads each cell to its column by fit.ts's count, coloured or not", () => {
    const drawn = new Table({
      chars: BORDERLESS,
      style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [] },
      colWidths: [4, 4, 1],
      colAligns: ['left', 'right', 'left'],
    });
    const cells = [`a${POINT}`, '✌', '㉈', colour.green('㉈'), colour.dim(`✌${POINT}`)];
    drawn.push(...cells.map((c) => [c, c, '|']));
    expect(drawn.toString().split('\n')).toEqual(
      cells.map((c) => {
        const pad = ' '.repeat(4 - displayWidth(c));
        return `${c}${pad}  ${pad}${c}  |`;
      }),
    );
  });

  test('a table with such cells: its columns line up', () => {
    const cols: Column[] = [
      { header: 'REF', min: 3 },
      { header: 'N', align: 'right' },
    ];
    const text = table(
      cols,
      [
        [`a${POINT}b`, '1'],
        ['✌✌', '22'],
        ['㉈', '3'],
      ],
      undefined,
      (s) => s,
    );
    expect(text.split('\n')).toEqual(['REF   N', `a${POINT}b    1`, '✌✌   22', '㉈    3']);
  });
});
