import type { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { QUICK_COMMANDS, quickArgs } from '../../src/cli/quick.js';
import { buildProgram } from '../../src/cli/registry.js';

// The quick start (src/cli/quick.ts) reads `carbon balance` and `carbon impact` without commander:
// what it takes, it must read exactly as commander does, and anything else it must leave to the CLI.

/** The options commander hands the command's action for `argv` (the action itself is not run). */
async function commanderGlobals(argv: string[]): Promise<unknown> {
  const program = buildProgram(argv[0]);
  let seen: unknown;
  program.hook('preAction', (_program, action: Command) => {
    seen = action.optsWithGlobals();
    throw new Error('read');
  });
  await expect(program.parseAsync(argv, { from: 'user' })).rejects.toThrow('read');
  return seen;
}

describe('the quick start reads its arguments as commander does', () => {
  test.each([
    [['balance']],
    [['balance', '--json']],
    [['impact', '--live', '--json']],
    [['balance', '--test', '--local', '--verbose', '--no-color']],
    [['balance', '--profile', 'ci', '--json']],
    [['impact', '--profile=ci']],
    [['balance', '--json', '--json', '--live', '--test']],
  ])('%j', async (argv) => {
    const quick = quickArgs(argv);
    expect(quick?.spec.name).toBe(argv[0]);
    expect(quick?.globals).toEqual(await commanderGlobals(argv));
  });
});

describe('anything else is left to the whole CLI', () => {
  test.each([
    [[]],
    [['list']],
    [['--json', 'balance']],
    [['balance', '--help']],
    [['balance', '-h']],
    [['balance', 'extra']],
    [['balance', '--max-retries', '2']],
    [['balance', '--database', 'postgres://db/carbon']],
    [['balance', '--profile']],
    [['balance', '--profile', '--json']],
    [['balance', '--profile=']],
    [['balance', '--']],
    [['balance', '--js']],
    [['balance', 'constructor']],
    [['impact', '__proto__']],
  ])('%j', (argv) => {
    expect(quickArgs(argv)).toBeUndefined();
  });

  test('the quick commands are balance and impact, which take no arguments or flags of their own', () => {
    expect(QUICK_COMMANDS.map((c) => c.name)).toEqual(['balance', 'impact']);
    for (const spec of QUICK_COMMANDS) {
      expect(spec.args).toBeUndefined();
      expect(spec.flags).toBeUndefined();
      expect(spec.subcommands).toBeUndefined();
    }
  });
});
