import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes } from '../support/cli.js';

/**
 * Node 22 prints `ExperimentalWarning: SQLite is an experimental feature` when node:sqlite loads
 * (24.21 and 26 do not). carbon silences that one warning and no other: a warning raised while the
 * ledger opens, and one raised later, are both printed as Node prints them. (CI runs this file on
 * Node 22 too, where the SQLite warning would otherwise appear.)
 */

const newHome = homes();

describe('warnings', () => {
  test("node:sqlite's experimental warning is not printed; every other warning is", async () => {
    const home = newHome();
    const preload = join(home, 'warn.cjs');
    // One warning as the command starts, one a turn later (while the ledger is being opened).
    writeFileSync(
      preload,
      `process.emitWarning('a warning before carbon starts', 'TestWarning');
       setImmediate(() => process.emitWarning('a warning while carbon runs', 'TestWarning'));`,
    );
    const r = await carbon(['buy', '--kg', '5', '--json'], { home, env: { NODE_OPTIONS: `--require ${preload}` } });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('TestWarning: a warning before carbon starts');
    expect(r.stderr).toContain('TestWarning: a warning while carbon runs');
    expect(r.stderr).not.toContain('ExperimentalWarning');
    expect(r.stderr).not.toContain('SQLite');
  });

  test('a 400-row batch and list --all print nothing on stderr that was not asked for', async () => {
    const home = newHome();
    const csv = join(home, 'rows.csv');
    writeFileSync(csv, `kg,reference\n${Array.from({ length: 400 }, (_, i) => `${1 + (i % 50)},row-${i}`).join('\n')}\n`);
    const batch = await carbon(['buy', '--from-csv', csv, '--json'], { home });
    expect(batch.exitCode, batch.stderr).toBe(0);
    const listed = await carbon(['list', '--all', '--json'], { home });
    expect(listed.exitCode).toBe(0);
    expect(listed.stderr).toBe('');
    expect(listed.stdout.trim().split('\n')).toHaveLength(400);
  });
});
