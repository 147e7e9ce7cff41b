import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { localSettings, OWN_FLAGS, QUICK_COMMANDS, quickArgs } from '../../src/cli/quick.js';
import { buildProgram } from '../../src/cli/registry.js';
import { arbitraryArgs } from '../support/quick-args.js';
import { tempDir } from '../support/temp.js';

// The quick start (src/cli/quick.ts) reads `carbon balance`, `carbon impact`, `carbon list`,
// `carbon show <id>`, `carbon buy` and `carbon quote` without commander: what it takes, it must read exactly as
// commander does, and anything else it must leave to the CLI.

/** The options and the arguments commander hands the command's action for `argv` (the action itself is not run). */
async function commanderReads(argv: string[]): Promise<{ globals: unknown; positionals: unknown; flags: unknown }> {
  const program = buildProgram(argv[0]);
  let seen: { globals: unknown; positionals: unknown; flags: unknown } | undefined;
  program.hook('preAction', (_program, action: Command) => {
    seen = { globals: action.optsWithGlobals(), positionals: action.processedArgs, flags: action.opts() };
    throw new Error('read');
  });
  await expect(program.parseAsync(argv, { from: 'user' })).rejects.toThrow('read');
  return seen!;
}

/** The quick start's reading of `argv` is commander's: the command, its flags, the global flags and the arguments. */
async function expectReadAlike(argv: string[], quick: ReturnType<typeof quickArgs>): Promise<void> {
  const commander = await commanderReads(argv);
  expect(quick?.spec.name).toBe(argv[0]);
  expect({ ...quick?.globals, ...quick?.flags }).toEqual(commander.globals);
  expect(quick?.flags).toEqual(commander.flags);
  expect(quick?.positionals).toEqual(commander.positionals);
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
    [['buy', '--kg', '500']],
    [['buy', '--kg=500', '--json']],
    [['buy', '--amount', '12.50', '--reference', 'flight LHR-JFK', '-q']],
    [['buy', '--amount-cents=1250', '--quiet', '--live', '--yes']],
    [['buy', '-y', '--kg', '1,000', '--max-cents', '5000', '--idempotency-key', 'k-1', '--dry-run']],
    [['buy', '--json', '--kg', '0', '--profile', 'ci', '--reference=a=b']],
    [['buy', '--kg', 'x', '--amount', '1e3']],
    [['buy']],
    [['quote', '--kg', '2000']],
    [['quote', '--json', '--amount-cents', '99', '--no-color']],
    [['quote', '--reference', 'constructor', '--amount=5']],
    [['list']],
    [['list', '--json', '--limit', '250', '--status', 'placed', '--since', '30d']],
    [['list', '--format=csv', '-q', '--page-size', '5', '--until', 'today', '--reference', 'flight']],
    [['list', '--starting-after', 'off_123', '--format', 'table', '--live']],
  ])('%j', async (argv) => {
    await expectReadAlike(argv, quickArgs(argv));
  });
});

describe('seeded argument lists (test/support/quick-args.ts)', () => {
  test('what the quick start takes, commander reads alike: the command, its flags, the global flags and the arguments', async () => {
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(arbitraryArgs, async (drawn) => {
        const argv = drawn.map((a) => (a === '<id>' ? 'off_123' : a));
        const quick = quickArgs(argv);
        if (quick === undefined) return;
        taken++;
        await expectReadAlike(argv, quick);
      }),
      { numRuns: 2000 },
    );
    // Not only declines: the quick start took a share of the lists itself.
    expect(taken).toBeGreaterThanOrEqual(200);
  });
});

describe('anything else is left to the whole CLI', () => {
  test.each([
    [[]],
    [['logs']],
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
    // An empty id is commander's to refuse (registry.ts), as a usage error.
    [['show', '']],
    [['show', ' ', '--json']],
    // buy's flags that are the CLI's (a purchase that waits, a batch), and quote's flags on buy alone.
    [['buy', '--kg', '5', '--wait']],
    [['buy', '--from-csv', 'flights.csv']],
    [['buy', '--from-csv=-', '--partial']],
    [['buy', '--kg', '5', '--batch-id', 'b']],
    [['buy', '--kg', '5', '--rebuy-changed']],
    [['buy', '--kg', '5', '--help']],
    // An own flag twice, without its value, with an empty one or one that reads as a flag, or a boolean given a value.
    [['buy', '--kg', '5', '--kg', '6']],
    [['buy', '-q', '--quiet', '--kg', '5']],
    [['buy', '--kg']],
    [['buy', '--kg=']],
    [['buy', '--reference', '', '--kg', '5']],
    [['buy', '--kg', '--json']],
    [['buy', '--kg', '-5']],
    [['buy', '--reference', '-x', '--kg', '5']],
    [['buy', '--yes=true', '--kg', '5']],
    [['buy', '-y=1', '--kg', '5']],
    [['buy', '-qy', '--kg', '5']],
    [['buy', '--kg', '5', 'extra']],
    [['buy', '--', '--kg', '5']],
    [['buy', '--KG', '5']],
    [['quote', '--kg', '5', '--quiet']],
    [['quote', '--kg', '5', '--yes']],
    [['quote', '--kg', '5', '--dry-run']],
    [['quote', '--kg', '5', '--max-cents', '1']],
    // list --all is the CLI's (bin/carbon.cjs does not even read quick.cjs for it), and a value outside a flag's choices commander's to refuse.
    [['list', '--all']],
    [['list', '--all', '--json']],
    [['list', '--format', 'xml']],
    [['list', '--format=TABLE']],
    [['list', '--status', 'done']],
    [['list', 'extra']],
    [['list', '--limit']],
  ])('%j', (argv) => {
    expect(quickArgs(argv)).toBeUndefined();
  });

  test('the quick commands are balance, impact, list, show, buy and quote; show takes its one argument; the own flags taken are those OWN_FLAGS names', () => {
    expect(QUICK_COMMANDS.map((c) => c.name)).toEqual(['balance', 'impact', 'list', 'show', 'buy', 'quote']);
    for (const spec of QUICK_COMMANDS) {
      expect(spec.args?.map((a) => a.name) ?? []).toEqual(spec.name === 'show' ? ['<id>'] : []);
      expect(spec.subcommands).toBeUndefined();
    }
    // Every spelling of every flag of a quick command's own: taken when OWN_FLAGS names it (with a
    // value where it takes one), and then as commander takes it; left to the CLI otherwise.
    for (const spec of QUICK_COMMANDS) {
      const taken = OWN_FLAGS[spec.name] ?? [];
      for (const flag of spec.flags ?? []) {
        const names = flag.flags.split(/[ ,]+/).filter((f) => f.startsWith('-'));
        const own = taken.includes(names.find((n) => n.startsWith('--'))!);
        // A default would be commander's to apply: none of the flags taken has one.
        if (own) expect(flag.default, flag.flags).toBeUndefined();
        for (const name of names) {
          const value = flag.flags.includes('<') ? [flag.choices?.[0] ?? '7'] : [];
          const argv = [spec.name, ...(spec.args ?? []).map(() => 'off_123'), name, ...value];
          expect(quickArgs(argv) !== undefined, argv.join(' ')).toBe(own);
        }
      }
    }
    // OWN_FLAGS names no flag its command does not have.
    for (const [name, flags] of Object.entries(OWN_FLAGS)) {
      const spec = QUICK_COMMANDS.find((c) => c.name === name)!;
      const declared = (spec.flags ?? []).flatMap((f) => f.flags.split(/[ ,]+/));
      for (const flag of flags) expect(declared, `${name} ${flag}`).toContain(flag);
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
