import { readFileSync, rmSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { carbon, coloured, homes, json, ok, pipeline, sandboxKeys, serve } from '../support/cli.js';

/**
 * Every command with --json (one JSON document, the API's object) and without it in a pipe
 * (plain tab-separated rows, no colour), from a zero-configuration CARBON_HOME; jq pipelines
 * over --json; --help with an example everywhere; --version.
 */

const newHome = homes();

test('zero configuration: carbon buy --kg 500 exits 0 on the local engine in test mode', async () => {
  const home = newHome();
  const r = await carbon(['buy', '--kg', '500'], { home });
  expect(r.exitCode).toBe(0);
  expect(r.stderr).toBe('✓ Bought 500 kg for $20.00 (test mode, sandbox: not a real purchase).\n');
  const fields = Object.fromEntries(
    r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]),
  );
  expect(fields).toMatchObject({
    status: 'processing',
    livemode: 'false',
    kg: '500',
    amount_cents: '2000',
    currency: 'usd',
    requested_kg: '500',
    reference: '',
    placed: '',
  });
  expect(fields.id).toMatch(/^off_/);
  expect(coloured(r.stdout + r.stderr)).toBe(false);
  // No config file was needed or written; the ledger lives under CARBON_HOME/data.
  expect(() => readFileSync(`${home}/config.json`)).toThrow();
  expect(readFileSync(`${home}/data/sandbox-keys.json`, 'utf8')).toContain('ck_test_');
});

test("sandbox-keys.json deleted: the ledger's keys are not known here, and the error says that file is one way it happens", async () => {
  const home = newHome();
  await ok(['buy', '--kg', '5'], { home });
  rmSync(`${home}/data/sandbox-keys.json`);
  const r = await carbon(['balance'], { home });
  expect([r.exitCode, r.stdout]).toEqual([4, '']);
  // Before: only a snapshot or another CARBON_HOME were named, neither of which had happened.
  expect(r.stderr).toMatch(
    /^error: The local sandbox's test keys are not known here: .* or this home's sandbox-keys.json was deleted, so carbon has no test key to send\. Run `carbon sandbox keys create`/,
  );
  // The way on it names works: a new key, used from then on, and the ledger as it was.
  await ok(['sandbox', 'keys', 'create'], { home });
  expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(99980);
});

/**
 * On both engines: the local model in-process, and the API over HTTP from a real `carbon serve`
 * (the sandbox and config commands act on this machine only, so they run on the local one).
 */
describe.each(['local', 'remote'] as const)('each command, --json and plain (%s engine)', (engine) => {
  let home: string;
  let env: Record<string, string> = {};
  let offsetId: string;
  beforeAll(async () => {
    home = newHome();
    if (engine === 'remote') {
      const server = await serve(home);
      env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: (await sandboxKeys(home)).test };
    }
    offsetId = (await json<{ id: string }>(['buy', '--kg', '250', '--reference', 'seed'], { home, env })).id;
  });

  /** Plain output: tab-separated, no colour, no table borders, and never JSON. */
  function expectPlain(stdout: string): string[][] {
    expect(stdout).not.toBe('');
    expect(coloured(stdout)).toBe(false);
    expect(stdout.trimStart()).not.toMatch(/^[{[]/);
    expect(stdout).not.toMatch(/[│─┌└]/);
    return stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
  }

  const cases: Array<{ name: string; args: () => string[]; object: Record<string, unknown> | 'array'; plain: (rows: string[][]) => void }> =
    [
      {
        name: 'buy --kg 10',
        args: () => ['buy', '--kg', '10'],
        object: { object: 'offset', kg: 10, amount_cents: 40 },
        plain: (rows) => expect(rows).toContainEqual(['kg', '10']),
      },
      {
        name: 'quote --amount 12.50',
        args: () => ['quote', '--amount', '12.50'],
        object: { object: 'quote', kg: 312, amount_cents: 1248, sufficient_balance: true, requires_review: false },
        plain: (rows) => expect(rows).toContainEqual(['amount_cents', '1248']),
      },
      {
        name: 'list',
        args: () => ['list'],
        object: { object: 'list', has_more: false },
        plain: (rows) => {
          expect(rows.length).toBeGreaterThanOrEqual(1);
          for (const row of rows) expect(row).toHaveLength(6);
        },
      },
      {
        name: 'show offsetId',
        args: () => ['show', offsetId],
        object: { object: 'offset', reference: 'seed' },
        plain: (rows) => expect(rows).toContainEqual(['reference', 'seed']),
      },
      {
        name: 'balance',
        args: () => ['balance'],
        object: { object: 'balance', livemode: false, currency: 'usd', rate_millicents_per_kg: 4000 },
        plain: (rows) => expect(rows).toContainEqual(['rate_millicents_per_kg', '4000']),
      },
      {
        name: 'impact',
        args: () => ['impact'],
        object: { object: 'impact', livemode: false },
        plain: (rows) => expect(rows.map((r) => r[0])).toEqual(['livemode', 'placed_kg', 'processing_kg', 'offsets']),
      },
      {
        name: 'sandbox status',
        args: () => ['sandbox', 'status'],
        object: { account: { status: 'active', rate: 4000 } },
        plain: (rows) => expect(rows).toContainEqual(['account.status', 'active']),
      },
      {
        name: 'sandbox clock',
        args: () => ['sandbox', 'clock'],
        object: { offset_ms: 0 },
        plain: (rows) => expect(rows).toContainEqual(['offset_ms', '0']),
      },
      {
        name: 'sandbox keys',
        args: () => ['sandbox', 'keys'],
        object: 'array',
        plain: (rows) => {
          expect(rows).toHaveLength(3);
          for (const row of rows) expect(row[1]).toMatch(/^ck_(test|live)_…[A-Za-z0-9]{4}$/);
        },
      },
      {
        name: 'config list',
        args: () => ['config', 'list'],
        object: { current_profile: 'default', profiles: {} },
        // No profiles: nothing to list, so nothing on stdout (the JSON form says so explicitly).
        plain: () => {},
      },
    ];

  const local = (c: (typeof cases)[number]) => c.name.startsWith('sandbox') || c.name.startsWith('config');
  const ran = cases.filter((c) => engine === 'local' || !local(c));
  test.each(ran.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const machine = await ok([...c.args(), '--json'], { home, env });
    const doc = JSON.parse(machine.stdout);
    if (c.object === 'array') expect(Array.isArray(doc)).toBe(true);
    else expect(doc).toMatchObject(c.object);
    // One document: JSON.parse would have thrown on anything after it; and stderr has no data.
    expect(machine.stderr).not.toContain('{');

    const human = await ok(c.args(), { home, env });
    if (c.args()[0] === 'config') expect(human.stdout).toBe('');
    else c.plain(expectPlain(human.stdout));
  });
});

describe('jq pipelines over --json', () => {
  let home: string;
  beforeAll(async () => {
    home = newHome();
    for (const kg of [100, 200, 300]) await ok(['buy', '--kg', String(kg), '--reference', `trip-${kg}`], { home });
  });

  test.each([
    ['carbon balance --json | jq .available_cents', '97600\n'],
    ["carbon list --json | jq -r '.data[].kg'", '300\n200\n100\n'],
    ["carbon list --json | jq '.data | length'", '3\n'],
    ["carbon list --all --json | jq -s 'map(.kg) | add'", '600\n'],
    ["carbon list --reference trip-200 --json | jq -r '.data[0].reference'", 'trip-200\n'],
    ['carbon quote --amount-cents 1250 --json | jq .kg', '312\n'],
    ['carbon impact --json | jq .offsets', '3\n'],
    ["carbon show $(carbon list --json | jq -r '.data[0].id') --json | jq .kg", '300\n'],
    ['carbon sandbox status --json | jq .balances.test', '97600\n'],
  ])('%s (reads only: the three purchases above are all it sees, in any order of tests)', async (script, expected) => {
    const r = await pipeline(script, { home });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(expected);
  });

  test('carbon buy --kg 5 --json | jq -r .status, in a home of its own', async () => {
    const r = await pipeline('carbon buy --kg 5 --json | jq -r .status', { home: newHome() });
    expect([r.exitCode, r.stdout]).toEqual([0, 'processing\n']);
  });

  test('a failure in a pipeline: the exit code survives pipefail and jq reads nothing', async () => {
    const r = await pipeline('carbon show off_missing --json | jq .id', { home });
    expect(r.exitCode).toBe(5);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr.trim()).error.code).toBe('resource_missing');
  });

  test('list --all piped into head stops quietly (EPIPE), exit 0', async () => {
    const r = await pipeline('carbon list --all | head -1', { home });
    expect(r.exitCode).toBe(0);
    // Placed once 3 s have passed since the purchases: either state is right here.
    expect(r.stdout.split('\n')[0]).toMatch(/^off_\S+\t(processing|placed)\t\d+\t/);
    expect(r.stderr).toBe('');
  });

  // A reader that goes away is a quiet end; output that never arrived (a full disk under
  // `> offset.json`) is not: exit 1 and one line, never 0 with an empty or cut file.
  test.each([
    ['carbon balance', 'error: '],
    ['carbon balance --json', '{"error":'],
    ['carbon list', 'error: '],
    ['carbon list --all --json', '{"error":'],
    ['carbon list --all --format csv', 'error: '],
    ['carbon impact', 'error: '],
  ])('%s > /dev/full: exit 1, one line saying stdout could not be written', async (command, start) => {
    const r = await pipeline(`${command} > /dev/full`, { home });
    expect(r.exitCode).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(start)).toBe(true);
    expect(lines[0]).toContain('Could not write to stdout (ENOSPC): what was printed there is incomplete.');
  });
});

describe.concurrent('help and version', () => {
  const home = () => newHome();

  test('carbon --version', async () => {
    const r = await ok(['--version'], { home: home() });
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  // Text asked for by name, which --json does not change (README, "A tour"), as help asked for by name.
  test('carbon --version --json is the version, and completion bash --json the script', async () => {
    expect((await ok(['--version', '--json'], { home: home() })).stdout).toBe(`${pkg.version}\n`);
    expect((await ok(['completion', 'bash', '--json'], { home: home() })).stdout).toMatch(/^# bash completion for carbon/);
  });

  // bin/carbon.cjs answers --version, and --help into a pipe or a file, without loading the CLI;
  // a stdout that cannot take the text ends as any command's does (exit 1, the same line), not 0.
  // /dev/full is ENOSPC; a file past `ulimit -f` is EFBIG (--help into a terminal-like /dev/full
  // goes through the CLI, so the file is what reaches the fast path).
  test.each([
    ['carbon --version > /dev/full', 'carbon balance > /dev/full'],
    ['carbon -v > /dev/full', 'carbon balance > /dev/full'],
    ['ulimit -f 0; carbon --help > "$CARBON_HOME/help.txt"', 'ulimit -f 0; carbon help > "$CARBON_HOME/help.txt"'],
    ['ulimit -f 0; carbon -h > "$CARBON_HOME/help.txt"', 'ulimit -f 0; carbon help > "$CARBON_HOME/help.txt"'],
    ['ulimit -f 0; carbon --version > "$CARBON_HOME/version.txt"', 'ulimit -f 0; carbon help > "$CARBON_HOME/help.txt"'],
  ])('%s: exit 1 and the line `%s` gives', async (fast, command) => {
    const h = home();
    const [r, reference] = [await pipeline(fast, { home: h }), await pipeline(command, { home: h })];
    expect(reference.exitCode).toBe(1);
    expect(reference.stderr).toMatch(/^error: Could not write to stdout \((ENOSPC|EFBIG)\): what was printed there is incomplete\./);
    expect([r.exitCode, r.stderr]).toEqual([1, reference.stderr]);
  });

  test('carbon --help lists the commands, the environment and the exit codes', async () => {
    const r = await ok(['--help'], { home: home() });
    for (const word of ['buy', 'quote', 'list', 'show', 'balance', 'impact', 'config', 'sandbox', 'serve', 'CARBON_HOME', 'Exit codes:']) {
      expect(r.stdout).toContain(word);
    }
    for (let code = 0; code <= 12; code++) expect(r.stdout).toMatch(new RegExp(`^ +${code} {2}\\S`, 'm'));
  });

  const commands = [
    'buy',
    'quote',
    'list',
    'show',
    'balance',
    'impact',
    'serve',
    'config',
    'config set',
    'config get',
    'config unset',
    'config list',
    'config use',
    'sandbox',
    'sandbox status',
    'sandbox topup',
    'sandbox keys',
    'sandbox keys list',
    'sandbox keys create',
    'sandbox keys revoke',
    'sandbox account',
    'sandbox rate',
    'sandbox review-limit',
    'sandbox rate-limit',
    'sandbox review',
    'sandbox fail',
    'sandbox clock',
    'sandbox clock show',
    'sandbox clock advance',
    'sandbox reset',
  ];
  test.each(commands)('carbon %s --help has an example', async (command) => {
    const r = await ok([...command.split(' '), '--help'], { home: home() });
    expect(r.stdout).toMatch(new RegExp(`^Usage: carbon ${command.split(' ')[0]}`));
    expect(r.stdout).toMatch(/Examples:\n {2}\$ carbon /);
    expect(r.stderr).toBe('');
  });
});
