import { type Command, CommanderError } from 'commander';
import { describe, expect, test } from 'vitest';
import { buildProgram, STANDALONE_COMMANDS } from '../../src/cli/registry.js';

/**
 * argv → the command that runs, its positionals, its own options and the global ones. Every
 * action is replaced by a recorder, so nothing runs: this is commander's parse of our program.
 */

interface Parsed {
  command: string;
  args: unknown[];
  opts: Record<string, unknown>;
  globals: Record<string, unknown>;
}

function* commands(cmd: Command): Generator<Command> {
  yield cmd;
  for (const sub of cmd.commands) yield* commands(sub);
}

function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

async function parse(argv: string[]): Promise<Parsed> {
  // As main.ts builds it: only the command the first word names, when it names one.
  const program = buildProgram(argv[0]);
  let parsed: Parsed | undefined;
  for (const cmd of commands(program)) {
    // A group's own action only prints its help (or names the unknown command): kept as it is.
    if ((cmd as unknown as { _actionHandler: unknown })._actionHandler === null || cmd.commands.length > 0) continue;
    cmd.action((...args: unknown[]) => {
      const self = args.at(-1) as Command;
      parsed = { command: pathOf(self), args: args.slice(0, -2), opts: self.opts(), globals: self.optsWithGlobals() };
    });
  }
  await program.parseAsync(argv, { from: 'user' });
  if (!parsed) throw new Error(`nothing ran for ${argv.join(' ')}`);
  return parsed;
}

async function parseError(argv: string[]): Promise<CommanderError> {
  try {
    await parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err;
    throw err;
  }
  throw new Error(`${argv.join(' ')} parsed`);
}

describe('argv → command and options', () => {
  const cases: Array<[string, Partial<Parsed> & { command: string }]> = [
    ['buy --kg 500', { command: 'buy', args: [], opts: { kg: '500' } }],
    [
      'buy --amount 12.50 --reference flight --idempotency-key k1 --wait --max-cents 600 -y',
      { command: 'buy', opts: { amount: '12.50', reference: 'flight', idempotencyKey: 'k1', wait: true, maxCents: '600', yes: true } },
    ],
    ['buy --amount-cents 1250 --live --yes', { command: 'buy', opts: { amountCents: '1250', yes: true } }],
    ['quote --kg 1 --reference x', { command: 'quote', opts: { kg: '1', reference: 'x' } }],
    ['list', { command: 'list', opts: {} }],
    [
      'list --all --limit 7 --format csv --reference r',
      { command: 'list', opts: { all: true, limit: '7', format: 'csv', reference: 'r' } },
    ],
    ['list --starting-after off_1', { command: 'list', opts: { startingAfter: 'off_1' } }],
    ['show off_1 --wait', { command: 'show', args: ['off_1'], opts: { wait: true } }],
    ['balance', { command: 'balance', args: [] }],
    ['impact --live', { command: 'impact' }],
    ['config set test-key ck_test_x', { command: 'config set', args: ['test-key', 'ck_test_x'] }],
    ['config get mode --reveal', { command: 'config get', args: ['mode'], opts: { reveal: true } }],
    ['config unset base-url', { command: 'config unset', args: ['base-url'] }],
    ['config list', { command: 'config list', args: [] }],
    ['config use staging', { command: 'config use', args: ['staging'] }],
    ['sandbox status', { command: 'sandbox status', args: [] }],
    ['sandbox topup 250', { command: 'sandbox topup', args: ['250'], opts: {} }],
    ['sandbox topup --cents 25000', { command: 'sandbox topup', args: [undefined], opts: { cents: '25000' } }],
    ['sandbox keys', { command: 'sandbox keys list', opts: {} }],
    ['sandbox keys --reveal', { command: 'sandbox keys list', opts: { reveal: true } }],
    ['sandbox keys list --reveal', { command: 'sandbox keys list', opts: { reveal: true } }],
    ['sandbox keys create --read-only', { command: 'sandbox keys create', opts: { readOnly: true } }],
    ['sandbox keys revoke key_1', { command: 'sandbox keys revoke', args: ['key_1'] }],
    ['sandbox account suspended', { command: 'sandbox account', args: ['suspended'] }],
    ['sandbox rate 4125', { command: 'sandbox rate', args: ['4125'] }],
    ['sandbox review-limit 5000', { command: 'sandbox review-limit', args: ['5000'] }],
    ['sandbox rate-limit 0', { command: 'sandbox rate-limit', args: ['0'], opts: {} }],
    ['sandbox rate-limit 5 --window 1m', { command: 'sandbox rate-limit', args: ['5'], opts: { window: '1m' } }],
    ['sandbox review approve off_1', { command: 'sandbox review', args: ['approve', 'off_1'] }],
    ['sandbox fail off_1', { command: 'sandbox fail', args: ['off_1'] }],
    ['sandbox clock', { command: 'sandbox clock show', args: [] }],
    ['sandbox clock advance 90s', { command: 'sandbox clock advance', args: ['90s'] }],
    ['sandbox reset --yes', { command: 'sandbox reset', opts: { yes: true } }],
    ['serve', { command: 'serve', opts: { host: '127.0.0.1', port: '4010' } }],
    [
      'serve --port 0 --host 0.0.0.0 --public-url https://x.example --show-keys',
      { command: 'serve', opts: { host: '0.0.0.0', port: '0', publicUrl: 'https://x.example', showKeys: true } },
    ],
  ];

  test.each(cases)('%s', async (argv, expected) => {
    const parsed = await parse(argv.split(' '));
    expect(parsed.command).toBe(expected.command);
    if (expected.args !== undefined) expect(parsed.args).toEqual(expected.args);
    if (expected.opts !== undefined) expect(parsed.opts).toEqual(expected.opts);
  });
});

describe('global options, before or after the command', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['--json balance', { json: true }],
    ['balance --json', { json: true }],
    ['sandbox keys --json --reveal', { json: true }],
    ['--profile ci --live buy --kg 1', { profile: 'ci', live: true }],
    ['buy --kg 1 --test --profile ci', { profile: 'ci', test: true }],
    ['list --local --max-retries 0 --timeout 5', { local: true, maxRetries: '0', timeout: '5' }],
    ['--base-url http://127.0.0.1:4010/api/v1 --api-key k balance', { baseUrl: 'http://127.0.0.1:4010/api/v1', apiKey: 'k' }],
    ['--allow-insecure-http balance', { allowInsecureHttp: true }],
    ['--no-color impact', { color: false }],
    ['impact', { color: true }],
    ['sandbox topup 250 --live', { live: true }],
    ['config set --profile staging mode live', { profile: 'staging' }],
  ];

  test.each(cases)('%s', async (argv, expected) => {
    expect((await parse(argv.split(' '))).globals).toMatchObject(expected);
  });
});

describe('usage errors are CommanderErrors (main.ts turns them into exit 2), from subcommands too', () => {
  test.each([
    ['buy --nope', 'commander.unknownOption'],
    ['sandbox keys create --nope', 'commander.unknownOption'],
    ['nosuch', 'commander.unknownCommand'],
    ['sandbox nosuch', 'commander.unknownCommand'],
    ['config extra words', 'commander.unknownCommand'],
    ['show', 'commander.missingArgument'],
    ['config set test-key', 'commander.missingArgument'],
    ['list --format xml', 'commander.invalidArgument'],
    ['sandbox account closed', 'commander.invalidArgument'],
    ['sandbox review maybe off_1', 'commander.invalidArgument'],
    ['balance extra', 'commander.excessArguments'],
    ['buy --kg', 'commander.optionMissingArgument'],
  ])('%s → %s', async (argv, code) => {
    expect((await parseError(argv.split(' '))).code).toBe(code);
  });

  // commander checks options before the action that names an unknown command: the mistyped word,
  // not the options meant for the command it stands for, is the error.
  test.each([
    ['byu --kg 5', 'byu', 'buy'],
    ['lsit --limit 5', 'lsit', 'list'],
    ['--json byu --kg 5 --wait', 'byu', 'buy'],
    ['config sett --x', 'sett', 'set'],
    ['sandbox keys lsit --nope', 'lsit', 'list'],
  ])('%s → the unknown command %s, and the suggestion %s', async (argv, word, meant) => {
    const err = await parseError(argv.split(' '));
    expect([err.code, err.message]).toEqual(['commander.unknownCommand', `error: unknown command '${word}'\n(Did you mean ${meant}?)`]);
  });
});

test('every command has an example in its --help, and a subcommand names the global flags it takes, after its own', () => {
  for (const cmd of commands(buildProgram())) {
    // Hidden commands (the completion scripts' helper) are not for people.
    if ((cmd as unknown as { _hidden: boolean })._hidden) continue;
    let help = '';
    cmd.configureOutput({ writeOut: (s) => (help += s) });
    cmd.outputHelp();
    // addHelpText output goes through the 'afterHelp' event, which outputHelp emits.
    expect(help, pathOf(cmd) || 'carbon').toMatch(/Examples:\n {2}\$ carbon /);
    if (cmd.parent !== null) {
      // Named once, briefly, after the command's own flags and examples; explained in `carbon help`.
      const globals = help.slice(help.indexOf('Inherited flags (what each does: carbon help):'));
      expect(help.indexOf('Examples:'), pathOf(cmd)).toBeLessThan(help.indexOf('Inherited flags'));
      for (const flag of ['--json', '--profile <name>', '--timeout <seconds>', '--local'])
        expect(globals, `${pathOf(cmd)}: ${flag}`).toContain(flag);
      expect(help, pathOf(cmd)).not.toContain('Global Options:');
    }
  }
});

describe('a run that names its command gets only that one (start-up), and it is the same command', () => {
  const helpOf = (cmd: Command) => {
    let help = '';
    cmd.configureOutput({ writeOut: (t) => (help += t) });
    cmd.outputHelp();
    return help;
  };
  const tree = (program: Command) => new Map([...commands(program)].slice(1).map((c) => [pathOf(c), helpOf(c)]));
  const full = tree(buildProgram());

  test.each([...STANDALONE_COMMANDS])('%s: its commands, options and help as in the whole program, and no other', (name) => {
    const solo = tree(buildProgram(name));
    expect([...solo.keys()].every((path) => path === name || path.startsWith(`${name} `))).toBe(true);
    expect(solo).toEqual(new Map([...full].filter(([path]) => path === name || path.startsWith(`${name} `))));
  });

  test.each(['help', '--json', 'balanse', '__complete', 'completion', undefined])('%s: the whole program', (first) => {
    expect([...tree(buildProgram(first)).keys()]).toEqual([...full.keys()]);
  });
});
