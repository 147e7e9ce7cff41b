import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import { afterAll, describe, expect, test } from 'vitest';
import { localSettings, QUICK_COMMANDS, quickArgs } from '../../src/cli/quick.js';
import { buildProgram } from '../../src/cli/registry.js';
import { tempDir } from '../support/temp.js';

// The quick start (src/cli/quick.ts) reads `carbon balance`, `carbon impact` and `carbon show <id>`
// without commander: what it takes, it must read exactly as commander does, and anything else it
// must leave to the CLI.

/** The options and the arguments commander hands the command's action for `argv` (the action itself is not run). */
async function commanderReads(argv: string[]): Promise<{ globals: unknown; positionals: unknown }> {
  const program = buildProgram(argv[0]);
  let seen: { globals: unknown; positionals: unknown } | undefined;
  program.hook('preAction', (_program, action: Command) => {
    seen = { globals: action.optsWithGlobals(), positionals: action.processedArgs };
    throw new Error('read');
  });
  await expect(program.parseAsync(argv, { from: 'user' })).rejects.toThrow('read');
  return seen!;
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
    [['show', 'off_123']],
    [['show', '--json', 'off_123']],
    [['show', 'off_123', '--live', '--json']],
    [['show', '--profile', 'ci', 'off_123', '--no-color']],
    [['show', '--profile=ci', 'constructor']],
    [['show', '']],
  ])('%j', async (argv) => {
    const quick = quickArgs(argv);
    const commander = await commanderReads(argv);
    expect(quick?.spec.name).toBe(argv[0]);
    expect(quick?.globals).toEqual(commander.globals);
    expect(quick?.positionals).toEqual(commander.positionals);
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
    [['show']],
    [['show', '--json']],
    [['show', 'off_123', 'off_456']],
    [['show', 'off_123', '--wait']],
    [['show', '-q', 'off_123']],
    [['show', '--quiet', 'off_123']],
    [['show', '--', 'off_123']],
    [['show', '-x']],
    [['show', 'off_123', '--help']],
  ])('%j', (argv) => {
    expect(quickArgs(argv)).toBeUndefined();
  });

  test("the quick commands are balance, impact and show; show takes its one argument, and its own flags are the CLI's", () => {
    expect(QUICK_COMMANDS.map((c) => c.name)).toEqual(['balance', 'impact', 'show']);
    for (const spec of QUICK_COMMANDS) {
      expect(spec.args?.map((a) => a.name) ?? []).toEqual(spec.name === 'show' ? ['<id>'] : []);
      expect(spec.subcommands).toBeUndefined();
    }
    // Not one flag of a quick command's own is read here: each makes quickArgs hand over.
    for (const spec of QUICK_COMMANDS) {
      for (const flag of spec.flags ?? []) {
        for (const name of flag.flags.split(/[ ,]+/).filter((f) => f.startsWith('-'))) {
          expect(quickArgs([spec.name, ...(spec.args ?? []).map(() => 'off_123'), name]), `${spec.name} ${name}`).toBeUndefined();
        }
      }
    }
  });
});

describe('the quick start runs the local engine on SQLite only', () => {
  const home = tempDir('carbon-quick-');
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  test('the settings of a local SQLite ledger are taken; a remote API, PostgreSQL or settings in error are not', () => {
    expect(localSettings({ color: true }, { CARBON_HOME: home })).toMatchObject({ engine: 'local', store: { kind: 'sqlite' } });
    expect(localSettings({ color: true, live: true }, { CARBON_HOME: home })).toMatchObject({ engine: 'local', mode: 'live' });
    // --local wins over a base URL, as it does in the CLI.
    expect(localSettings({ local: true }, { CARBON_HOME: home, CARBON_BASE_URL: 'https://api.example.com/api/v1' })).toBeDefined();
    for (const env of [
      { CARBON_BASE_URL: 'https://api.example.com/api/v1' },
      { CARBON_DATABASE_URL: 'postgres://db.example/carbon' },
      { CARBON_PROFILE: 'nope' },
      { CARBON_BUSY_TIMEOUT_MS: '5s' },
    ]) {
      expect(localSettings({ color: true }, { CARBON_HOME: home, ...env }), JSON.stringify(env)).toBeUndefined();
    }
  });
});
