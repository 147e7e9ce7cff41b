import { expect, test, vi } from 'vitest';

// Every start loads every declaration, so a declaration's flag tables are read only when its own
// command is built (a `get flags()`). A spread of a declaration reads its getter at once: this
// file counts the tables read, through flags.js.

const read = vi.hoisted(() => [] as string[]);
vi.mock('../../src/cli/flags.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/cli/flags.js')>();
  return {
    ...real,
    flagTable: (...args: Parameters<typeof real.flagTable>) => {
      read.push(args[0].trim().split(/\s/)[0]!);
      return real.flagTable(...args);
    },
  };
});

test("loading the declarations reads no flag table; building one command reads the root's and its own", async () => {
  // The unit files share a module registry (vitest.config.ts): an earlier file may have loaded them without the counting flags.js.
  vi.resetModules();
  const { COMMANDS } = await import('../../src/cli/commands/index.js');
  expect(COMMANDS.length).toBeGreaterThan(10);
  expect(read).toEqual([]);

  const { buildProgram } = await import('../../src/cli/registry.js');
  buildProgram('balance');
  // The root's table starts with --json; balance has no flags of its own.
  expect(read).toEqual(['--json']);

  read.length = 0;
  buildProgram('sandbox');
  expect(read).toContain('--error-rate');
  expect(read).toContain('--print');

  // The whole tree (help, completion) reads every table.
  read.length = 0;
  buildProgram();
  expect(read).toEqual(expect.arrayContaining(['--json', '--error-rate', '--print', '--limit', '--idempotency-key']));
});
