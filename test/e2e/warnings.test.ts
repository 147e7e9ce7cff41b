import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, serve } from '../support/cli.js';

/**
 * Node 22 prints `ExperimentalWarning: SQLite is an experimental feature` when node:sqlite loads
 * (24.21 and 26 do not). carbon silences that one warning and no other: a warning raised before
 * carbon starts, and one raised while node:sqlite loads, are both printed as Node prints them. (CI runs this file on
 * Node 22 too, where the SQLite warning would otherwise appear.)
 */

const newHome = homes();

describe('warnings', () => {
  test("node:sqlite's experimental warning is not printed; every other warning is", async () => {
    const home = newHome();
    const preload = join(home, 'warn.cjs');
    // One warning as carbon starts, and one raised while node:sqlite loads (inside the moment
    // carbon filters warnings), by a server and by one-shot commands, which exit straight after
    // their work (Node prints a warning on a later tick).
    writeFileSync(
      preload,
      `process.emitWarning('a warning before carbon starts', 'TestWarning');
       const get = process.getBuiltinModule;
       process.getBuiltinModule = function (id) {
         const loaded = get.call(process, id);
         if (id === 'node:sqlite') process.emitWarning('a warning while node:sqlite loads', 'TestWarning');
         return loaded;
       };`,
    );
    const server = await serve(home, [], { NODE_OPTIONS: `--require ${preload}` });
    // Ready means the ledger is open: node:sqlite has loaded.
    expect((await server.stop()).exitCode).toBe(0);
    expect(server.stderr()).toContain('TestWarning: a warning before carbon starts');
    expect(server.stderr()).toContain('TestWarning: a warning while node:sqlite loads');
    expect(server.stderr()).not.toContain('ExperimentalWarning');
    for (const args of [['balance'], ['buy', '--kg', '5', '--yes'], ['list', '--json']]) {
      const run = await carbon(args, { home, env: { NODE_OPTIONS: `--require ${preload}` } });
      expect(run.exitCode, args.join(' ')).toBe(0);
      expect(run.stderr, args.join(' ')).toContain('TestWarning: a warning before carbon starts');
      expect(run.stderr, args.join(' ')).toContain('TestWarning: a warning while node:sqlite loads');
      expect(run.stderr, args.join(' ')).not.toContain('ExperimentalWarning');
    }
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
