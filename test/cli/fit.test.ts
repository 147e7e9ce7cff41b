import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type Column, cut, displayWidth, headerLine, layout, line, stripAnsi, table, terminalWidth } from '../../src/cli/render/fit.js';
import { makePaint } from '../../src/cli/render/paint.js';
import { noPaint, offsetStream, offsetTable } from '../../src/cli/render/resources.js';
import { keyTable, type ShownKey } from '../../src/cli/render/sandbox.js';
import { anOffset } from '../support/offsets.js';

/** The fitter (src/cli/render/fit.ts): tables that never wrap, the id never cut. */

const colour = makePaint(true);

describe('cells', () => {
  test.each([
    ['plain ASCII', 'off_abc 12', 10],
    ['colour codes take no cells', colour.green('placed'), 6],
    ['East Asian wide characters take two', '出張の記録', 10],
    ['fullwidth forms take two', 'ＡＢ', 4],
    ['emoji take two (text-style symbols such as ✈ one)', '🌍😀✈', 5],
    ['combining marks take none', 'e\u0301te\u0301', 3],
    ['a mix', `a出${colour.dim('—')}`, 4],
  ])('%s', (_name, text, width) => {
    expect(displayWidth(text)).toBe(width);
  });

  test('cut: as it is when it fits; else at most the width, ending with …, whole characters only', () => {
    expect(cut('reference', 9)).toBe('reference');
    expect(cut('reference', 8)).toBe('referen…');
    // Colour is kept, and a cut one ends with a reset: a dimmed cell stays dimmed, and nothing runs past it.
    expect(cut(colour.red('reference'), 5)).toBe(`${colour.red('reference').split('reference')[0]}refe…\u001b[0m`);
    expect(displayWidth(cut(colour.red('reference'), 5))).toBe(5);
    // A wide character that would straddle the edge is left out whole.
    expect(cut('出張の記録', 6)).toBe('出張…');
    expect(cut('出張の記録', 5)).toBe('出張…');
    expect(cut('abc', 1)).toBe('…');
    expect(cut('abc', 0)).toBe('');
  });
});

describe('layout', () => {
  const columns: Column[] = [
    { header: 'ID' },
    { header: 'NUMBER', align: 'right', drop: 2 },
    { header: 'TEXT', min: 6, drop: 3 },
    { header: 'WHEN', drop: 1 },
  ];
  const rows = [
    ['id_1', '7', 'a long piece of text', '2026-01-01'],
    ['id_22', '1,234', 'short', '2026-01-02'],
  ];

  test('wide enough: every cell whole, padded, two spaces apart, right-aligned numbers, no trailing blanks', () => {
    expect(table(columns, rows, 80, (s) => s).split('\n')).toEqual([
      'ID     NUMBER  TEXT                  WHEN',
      'id_1        7  a long piece of text  2026-01-01',
      'id_22   1,234  short                 2026-01-02',
    ]);
    // The exact fit is not cut; no width (a pipe) never is.
    expect(table(columns, rows, 47, (s) => s)).toBe(table(columns, rows, 80, (s) => s));
    expect(table(columns, rows, undefined, (s) => s)).toBe(table(columns, rows, 80, (s) => s));
  });

  test('too wide: the text is cut first, with …', () => {
    expect(table(columns, rows, 40, (s) => s).split('\n')).toEqual([
      'ID     NUMBER  TEXT           WHEN',
      'id_1        7  a long piece…  2026-01-01',
      'id_22   1,234  short          2026-01-02',
    ]);
  });

  test('then columns go, lowest drop rank first, and the cut column gets room back', () => {
    // 32 cells: WHEN (rank 1) goes, and TEXT gets the room it left.
    expect(table(columns, rows, 32, (s) => s).split('\n')).toEqual([
      'ID     NUMBER  TEXT',
      'id_1        7  a long piece of …',
      'id_22   1,234  short',
    ]);
    // 20 cells: NUMBER (rank 2) goes too.
    expect(table(columns, rows, 20, (s) => s).split('\n')).toEqual(['ID     TEXT', 'id_1   a long piece…', 'id_22  short']);
    // 12 cells: TEXT would be under its minimum of 6, so it goes (rank 3); the id stays whole.
    expect(table(columns, rows, 12, (s) => s).split('\n')).toEqual(['ID', 'id_1', 'id_22']);
    expect(layout(columns, rows, 12).shown).toEqual([0]);
  });

  test('a column kept whole (`whole`): the columns of a lower drop rank go before it is cut; then it is cut as any other', () => {
    const kept: Column[] = columns.map((c) => (c.header === 'TEXT' ? { ...c, whole: 2 } : c));
    // 40 cells: TEXT would be cut to fit beside WHEN (rank 1 < 2), so WHEN goes and TEXT stays whole.
    expect(table(kept, rows, 40, (s) => s).split('\n')).toEqual([
      'ID     NUMBER  TEXT',
      'id_1        7  a long piece of text',
      'id_22   1,234  short',
    ]);
    // 20 cells: only NUMBER (rank 2) is left to drop before it, and TEXT is cut as before.
    expect(table(kept, rows, 20, (s) => s)).toBe(table(columns, rows, 20, (s) => s));
    // Wide enough, nothing changes.
    expect(table(kept, rows, 80, (s) => s)).toBe(table(columns, rows, 80, (s) => s));
  });

  test('narrower than the id: the line is cut at the edge, never wrapped', () => {
    expect(table(columns, rows, 4, (s) => s).split('\n')).toEqual(['ID', 'id_1', 'id_…']);
  });

  test('a row laid out by earlier ones (a stream): a cuttable cell is cut to its column, any other stays whole', () => {
    const at = layout(columns, rows, 80);
    expect(line(columns, at, ['id_333', '12,345', 'an even longer piece of text', '2026-01-03'], 80)).toBe(
      'id_333  12,345  an even longer piec…  2026-01-03',
    );
    // Still never past the width.
    expect(line(columns, at, ['id_333', '12,345', 'text', '2026-01-03'], 20)).toBe('id_333  12,345  tex…');
  });

  test('a header is painted on its own, its padding not', () => {
    expect(headerLine(columns, layout(columns, rows, 80), 80, colour.dim)).toBe(
      `${colour.dim('ID')}     ${colour.dim('NUMBER')}  ${colour.dim('TEXT')}                  ${colour.dim('WHEN')}`,
    );
    // A header wider than its narrowed column is cut like a cell.
    expect(headerLine([{ header: 'REFERENCE', min: 4 }], { shown: [0], widths: [5] }, 80, (s) => s)).toBe('REFE…');
  });
});

describe('properties', () => {
  const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const id = fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 24, maxLength: 24 }).map((s) => `off_${s}`);
  /** Anything a reference may hold: ASCII, wide, combining, emoji, control characters, any code point. */
  const reference = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '-', '出', '張', 'Ａ', 'e\u0301', '😀', '\t', '\n', '…'), maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
  const offset = fc
    .record({
      id,
      status: fc.constantFrom('processing' as const, 'placed' as const, 'refunded' as const),
      kg: fc.integer({ min: 1, max: 1_000_000_000 }),
      reference: fc.option(reference),
    })
    .map((o) => anOffset({ ...o, amount_cents: o.kg * 4, requested: { kg: o.kg, amount_cents: null } }));

  test('a list: every line at most the width (40..200), each id whole at the start of its line', () => {
    fc.assert(
      fc.property(
        fc.array(offset, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 40, max: 200 }),
        fc.boolean(),
        (offsets, width, painted) => {
          const lines = offsetTable(offsets, painted ? colour : noPaint, width).split('\n');
          expect(lines).toHaveLength(offsets.length + 1);
          for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(width);
          for (const [i, o] of offsets.entries()) expect(stripAnsi(lines[i + 1]!).startsWith(`${o.id}  `)).toBe(true);
          expect(stripAnsi(lines[0]!)).toMatch(/^ID {28}STATUS/);
        },
      ),
    );
  });

  test('a list that fits is not touched: the same as with no width at all', () => {
    fc.assert(
      fc.property(fc.array(offset, { minLength: 1, maxLength: 12 }), fc.integer({ min: 40, max: 400 }), (offsets, width) => {
        const whole = offsetTable(offsets, colour, undefined);
        const widest = Math.max(...whole.split('\n').map(displayWidth));
        fc.pre(widest <= width);
        expect(offsetTable(offsets, colour, width)).toBe(whole);
      }),
    );
  });

  test('any table: lines at most the width, the first column (never cut, never dropped) whole', () => {
    const column = fc.record({
      header: fc.string({ unit: fc.constantFrom('A', 'B', '出'), minLength: 1, maxLength: 12 }),
      align: fc.constantFrom('left' as const, 'right' as const),
      min: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
      drop: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
    });
    const cell = fc.string({ unit: fc.constantFrom('x', ' ', '出', 'é', '😀'), maxLength: 60 });
    fc.assert(
      fc.property(
        fc.array(column, { minLength: 1, maxLength: 7 }),
        fc.array(fc.array(cell, { minLength: 7, maxLength: 7 }), { maxLength: 8 }),
        fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 30 }),
        fc.integer({ min: 40, max: 200 }),
        (rest, cells, first, width) => {
          const columns: Column[] = [{ header: 'ID' }, ...rest];
          const rows = cells.map((r) => [first, ...r]);
          const lines = table(columns, rows, width, colour.dim).split('\n');
          for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(width);
          for (const l of lines.slice(1)) expect(l.startsWith(first)).toBe(true);
        },
      ),
    );
  });

  test('sandbox keys, revealed or masked: lines at most the width, each key id whole', () => {
    const key = fc
      .record({
        id: fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 16, maxLength: 16 }).map((s) => `key_${s}`),
        reveal: fc.boolean(),
        revoked: fc.boolean(),
        mode: fc.constantFrom('test' as const, 'live' as const),
      })
      .map(
        (k): ShownKey =>
          ({
            id: k.id,
            mode: k.mode,
            permission: 'purchase',
            masked: `ck_${k.mode}_…abcd`,
            default: null,
            created: '2026-11-21T22:00:00.000Z',
            revoked: k.revoked ? '2026-11-22T22:00:00.000Z' : null,
            ...(k.reveal ? { secret: `ck_${k.mode}_${'x'.repeat(28)}abcd` } : {}),
          }) as ShownKey,
      );
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 6 }), fc.integer({ min: 40, max: 200 }), (keys, width) => {
        const lines = keyTable(keys, colour, width).split('\n');
        for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(width);
        for (const [i, k] of keys.entries()) expect(stripAnsi(lines[i + 1]!).startsWith(`${k.id}  `)).toBe(true);
      }),
    );
  });
});

describe('a list streamed to a terminal (--all)', () => {
  const offset = (n: number, reference: string) => anOffset({ id: `off_${String(n).padStart(24, '0')}`, reference });

  test('the header comes once, with the first batch, which sizes the columns; later rows are cut to them', () => {
    const stream = offsetStream(noPaint, 120);
    const first = stream([offset(1, 'a-reference-of-20-ch'), offset(2, 'short')]).split('\n');
    expect(first[0]).toMatch(/^ID {28}STATUS {2}KG {2}AMOUNT {2}REFERENCE {13}CREATED$/);
    expect(first[1]).toBe(`off_${'0'.repeat(23)}1  placed   5   $0.20  a-reference-of-20-ch  2026-11-21 22:00:00 UTC`);
    const later = stream([offset(3, 'a-reference-much-longer-than-the-first-batch')]);
    expect(later).toBe(`off_${'0'.repeat(23)}3  placed   5   $0.20  a-reference-much-lo…  2026-11-21 22:00:00 UTC\n`);
    // Nothing to list: the header alone.
    expect(offsetStream(noPaint, 80)([])).toMatch(/^ID +STATUS +KG +AMOUNT +REFERENCE +CREATED\n$/);
  });
});

describe('the width', () => {
  test.each([
    ['a terminal', { isTTY: true, columns: 80 }, {}, 80],
    ['COLUMNS wins on a terminal', { isTTY: true, columns: 80 }, { COLUMNS: '60' }, 60],
    ['a COLUMNS that is not a whole number is ignored', { isTTY: true, columns: 80 }, { COLUMNS: 'wide' }, 80],
    ['COLUMNS=0 is ignored', { isTTY: true, columns: 80 }, { COLUMNS: '0' }, 80],
    ['a pty nobody sized (0 columns): nothing is cut', { isTTY: true, columns: 0 }, {}, undefined],
    ['a pipe: nothing is cut', { isTTY: false }, {}, undefined],
    ['a pipe, even with COLUMNS', {}, { COLUMNS: '40' }, undefined],
  ])('%s', (_name, stream, env, width) => {
    expect(terminalWidth(stream, env)).toBe(width);
  });
});
