import { execa } from 'execa';
import { beforeAll, describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, homes, json, ok, plain, sh } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Tables fit the terminal (issue 15): on a real pseudo-terminal (util-linux `script`) sized with
 * stty, every line of a table is at most the width, ids are whole, and '…' marks a cut; in a pipe
 * nothing changes, whatever COLUMNS says.
 */

const newHome = homes();
const LONG = 'quarterly-travel-report-of-the-sales-team-flights-and-trains-between-offices-2026';
const WIDE = '出張の記録とても長い参照文字列です';

/**
 * Terminal cells, measured here independently of src/cli/render/fit.ts: the references of this
 * file are ASCII or Japanese, which takes two cells a character.
 */
const cells = (line: string): number => [...line].reduce((n, c) => n + (/[\u3000-\u9fff\uff00-\uff60]/.test(c) ? 2 : 1), 0);

/** stdout of carbon on a terminal of `columns` (stderr, the notes, dropped): ANSI stripped, one string a line. */
async function onTerminal(args: string[], home: string, columns: number, env: Record<string, string> = {}): Promise<string[]> {
  const command = `stty cols ${columns} rows 40; exec ${[process.execPath, BIN(), ...args].map(sh).join(' ')} 2>/dev/null`;
  const r = await execa('script', ['-qec', command, '/dev/null'], {
    env: baseEnv(home, { TERM: 'xterm-256color', FORCE_COLOR: undefined, ...env }),
    extendEnv: false,
    reject: false,
    input: '',
    timeout: limit(20_000),
  });
  expect(r.exitCode, `carbon ${args.join(' ')}: ${String(r.stdout)}`).toBe(0);
  return plain(String(r.stdout)).replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
}

describe('on a terminal', () => {
  let home: string;
  let offsetIds: string[];
  let keyIds: string[];
  /** The id of the offset with this reference. */
  let idOf: (reference: string) => string;
  beforeAll(async () => {
    home = newHome();
    for (const reference of [LONG, WIDE, 'short']) await ok(['buy', '--kg', '5', '--reference', reference], { home });
    await ok(['buy', '--kg', '5'], { home });
    const offsets = (await json<{ data: Array<{ id: string; reference: string | null }> }>(['list'], { home })).data;
    offsetIds = offsets.map((o) => o.id);
    idOf = (reference) => offsets.find((o) => o.reference === reference)!.id;
    keyIds = (await json<Array<{ id: string }>>(['sandbox', 'keys'], { home })).map((k) => k.id);
  });

  const COMMANDS = [['list'], ['list', '--all'], ['sandbox', 'keys'], ['report'], ['report', '--by', 'reference']];

  describe.each([80, 60])('%i columns', (width) => {
    test.each(COMMANDS.map((c) => [c.join(' '), c]))('%s: no line longer than the width', async (_name, args) => {
      const lines = await onTerminal(args, home, width);
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) expect(cells(line), line).toBeLessThanOrEqual(width);
    });

    test.each([['list'], ['list', '--all']])('%s: every id whole at the start of its row, the references cut with …', async (...args) => {
      const lines = await onTerminal(args, home, width);
      expect(lines[0]).toMatch(/^ID +STATUS/);
      expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(offsetIds);
      expect(lines.find((l) => l.startsWith(idOf(LONG)))).toMatch(/ quarterl\S*…$/);
      expect(lines.find((l) => l.startsWith(idOf(WIDE)))).toMatch(/ 出張\S*…$/);
      expect(lines.find((l) => l.startsWith(idOf('short')))).toMatch(/ short$/);
      // CREATED is the first column to go.
      expect(lines[0]).not.toContain('CREATED');
    });

    test('sandbox keys: every key id whole; columns dropped, not cut', async () => {
      const lines = await onTerminal(['sandbox', 'keys'], home, width);
      expect(lines[0]).toMatch(/^ID +KEY +ACCESS/);
      expect(lines[0]).not.toMatch(/MODE|CREATED/);
      expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(keyIds);
      for (const line of lines.slice(1)) expect(line).toMatch(/^key_\w+ +ck_(test|live)_…\w{4} +(purchase|read-only)/);
    });

    test('report by reference: long references cut with …, the total whole', async () => {
      const lines = await onTerminal(['report', '--by', 'reference'], home, width);
      expect(lines.some((l) => /^quarterly\S*… +1 +5 kg/.test(l))).toBe(true);
      expect(lines.at(-1)).toMatch(/^total +4 +20 kg/);
    });
  });

  // As wide as an id and a little more: the other columns go, down to the id alone, and none is left as a bare `…`.
  test('32 columns: list, sandbox keys and logs show each id whole, and no column cut to nothing', async () => {
    await ok(['balance'], { home });
    for (const [args, ids] of [
      [['list'], offsetIds],
      [['sandbox', 'keys'], keyIds],
    ] as const) {
      const lines = await onTerminal([...args], home, 32);
      for (const line of lines) expect(cells(line), line).toBeLessThanOrEqual(32);
      expect(
        lines.slice(1).map((l) => l.split(' ')[0]),
        args.join(' '),
      ).toEqual(ids);
      for (const line of lines) expect(line, args.join(' ')).not.toMatch(/(^| )\S?…$/);
    }
    // The journal's newest requests (this test's own among them): each request id whole, as `carbon logs show` takes it.
    const lines = await onTerminal(['logs', '--limit', '3'], home, 32);
    expect(lines[0]).toMatch(/REQUEST ID$/);
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toMatch(/ req_[A-Za-z0-9]{14}$/);
  });

  test('200 columns: nothing is cut', async () => {
    for (const args of [['list'], ['list', '--all']]) {
      const lines = await onTerminal(args, home, 200);
      expect(lines[0]).toMatch(/^ID +STATUS +KG +AMOUNT +REFERENCE +CREATED$/);
      expect(lines.join('\n')).not.toContain('…');
      expect(lines.find((l) => l.startsWith(idOf(LONG)))).toContain(` ${LONG} `);
      expect(lines.find((l) => l.startsWith(idOf(WIDE)))).toContain(` ${WIDE} `);
    }
    const keys = await onTerminal(['sandbox', 'keys', '--reveal'], home, 200);
    expect(keys[0]).toMatch(/^ID +KEY +MODE +ACCESS +DEFAULT +CREATED +REVOKED$/);
    expect(keys.join('\n')).not.toContain('…');
    const report = await onTerminal(['report', '--by', 'reference'], home, 200);
    expect(report.join('\n')).not.toContain('…');
    expect(report.some((l) => l.startsWith(`${LONG} `) && l.endsWith('█'.repeat(30)))).toBe(true);
  });

  test("COLUMNS overrides the terminal's width", async () => {
    const lines = await onTerminal(['list'], home, 200, { COLUMNS: '60' });
    for (const line of lines) expect(cells(line)).toBeLessThanOrEqual(60);
    expect(lines.join('\n')).toContain('…');
  });
});

describe('in a pipe', () => {
  test('output does not depend on COLUMNS, and nothing is cut', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5', '--reference', LONG], { home });
    await ok(['buy', '--kg', '5', '--reference', WIDE], { home });
    // Placed by the model's clock before the runs compared: no status changes between two of them.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    for (const args of [
      ['list'],
      ['list', '--all'],
      ['list', '--format', 'table'],
      ['list', '--all', '--format', 'table'],
      ['sandbox', 'keys'],
      ['report'],
      ['report', '--by', 'reference'],
    ]) {
      const free = await carbon(args, { home });
      const narrow = await carbon(args, { home, env: { COLUMNS: '40' } });
      expect(free.exitCode).toBe(0);
      expect(narrow.stdout, args.join(' ')).toBe(free.stdout);
      expect(free.stdout, args.join(' ')).not.toMatch(/…(?!\w{4}\t)/);
    }
    expect((await carbon(['list'], { home })).stdout).toContain(`\t${LONG}\t`);
  });
});
