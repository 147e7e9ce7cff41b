import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbonTty, homes, ok, plain, sh } from '../support/cli.js';

/**
 * The built CLI draws its tables with cli-table3 (dist/vendor/cli-table3.cjs, issue 28): loaded
 * only when a table is drawn, and counting a cell as the layout does.
 */

const newHome = homes();

describe('dist/vendor/cli-table3.cjs', () => {
  // A copy of the build whose cli-table3 bundle notes each time it is loaded, beside the one the
  // tests run (inside node_modules/.cache, so pg resolves as it does for it).
  let copy: string;
  let log: string;
  let home: string;
  beforeAll(async () => {
    copy = mkdtempSync(join(dirname(dirname(dirname(BIN()))), 'table-'));
    cpSync(dirname(dirname(BIN())), copy, { recursive: true });
    const vendor = join(copy, 'dist', 'vendor');
    renameSync(join(vendor, 'cli-table3.cjs'), join(vendor, 'cli-table3-bundle.cjs'));
    writeFileSync(
      join(vendor, 'cli-table3.cjs'),
      "require('node:fs').appendFileSync(process.env.TABLE_LOAD_LOG, 'loaded\\n');\nmodule.exports = require('./cli-table3-bundle.cjs');\n",
    );
    log = join(copy, 'loads.log');
    home = newHome();
    await ok(['buy', '--kg', '5', '--reference', 'travel'], { home });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  /** How many times cli-table3 was loaded by `carbon args`, in a pipe or on a terminal. */
  async function loads(args: string[], where: 'pipe' | 'terminal'): Promise<number> {
    writeFileSync(log, '');
    const argv = [process.execPath, join(copy, 'bin', 'carbon.cjs'), ...args];
    const r =
      where === 'pipe'
        ? await execa(argv[0]!, argv.slice(1), {
            env: baseEnv(home, { TABLE_LOAD_LOG: log }),
            extendEnv: false,
            reject: false,
            stdin: 'ignore',
          })
        : await execa('script', ['-qec', `stty cols 120 rows 40; exec ${argv.map(sh).join(' ')}`, '/dev/null'], {
            env: baseEnv(home, { TABLE_LOAD_LOG: log, TERM: 'xterm-256color' }),
            extendEnv: false,
            reject: false,
            input: '',
          });
    expect(r.exitCode, `carbon ${args.join(' ')}: ${String(r.stdout)}${String(r.stderr)}`).toBe(0);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
  }

  test.each([
    [['list'], 'pipe'],
    [['list', '--json'], 'pipe'],
    [['list', '--format', 'csv'], 'pipe'],
    [['list', '--all'], 'pipe'],
    [['sandbox', 'keys'], 'pipe'],
    [['report'], 'pipe'],
    [['list', '--json'], 'terminal'],
    [['balance'], 'terminal'],
  ] as const)('not loaded: %j in a %s', async (args, where) => {
    expect(await loads([...args], where)).toBe(0);
  });

  test.each([
    [['list'], 'terminal'],
    [['list', '--all'], 'terminal'],
    [['sandbox', 'keys'], 'terminal'],
    [['report'], 'terminal'],
    [['list', '--format', 'table'], 'pipe'],
  ] as const)('loaded once: %j in a %s', async (args, where) => {
    expect(await loads([...args], where)).toBe(1);
  });
});

describe('on a terminal, cli-table3 counts a cell as the layout does', () => {
  // Where cli-table3's own measure (string-width 4) would count otherwise: a Hebrew vowel point
  // takes no cell (string-width: one), ✌ one (two), ㉈ two (one). Counted here on their own.
  const REFERENCES = ['nikud \u05b0 point', 'victory ✌ sign', 'circled ㉈ ten', 'plain'];
  const cells = (line: string) => [...line].reduce((n, c) => n + (c === '\u05b0' ? 0 : c === '㉈' ? 2 : 1), 0);

  test('every row of the list is as wide as the next: the columns line up', async () => {
    const home = newHome();
    for (const reference of REFERENCES) await ok(['buy', '--kg', '5', '--reference', reference], { home });
    const { output, exitCode } = await carbonTty(['list'], { home, columns: 160 });
    expect(exitCode).toBe(0);
    const lines = plain(output).split('\n');
    const header = lines.find((l) => l.startsWith('ID '))!;
    const rows = lines.filter((l) => l.startsWith('off_'));
    expect(rows).toHaveLength(REFERENCES.length);
    // CREATED, the last column, starts at the same cell on every line, and is 23 cells long.
    for (const row of rows) expect(cells(row), row).toBe(header.indexOf('CREATED') + '2026-11-21 22:00:00 UTC'.length);
    for (const reference of REFERENCES) expect(rows.some((r) => r.includes(` ${reference} `))).toBe(true);
  });
});
