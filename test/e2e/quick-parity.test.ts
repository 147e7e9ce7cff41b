import { chmodSync, cpSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { copyBinary } from '../support/binary.js';
import { BIN, baseEnv, homes, json, ok, sandboxKeys, sh } from '../support/cli.js';
import { limit } from '../support/load.js';
import { arbitraryArgs } from '../support/quick-args.js';

/**
 * `carbon balance`, `carbon impact`, `carbon list`, `carbon show <id>`, `carbon buy` and `carbon quote` with the everyday flags run from dist/quick.cjs, which
 * reads its arguments without commander (src/cli/quick.ts); anything else is the whole CLI's.
 * Two ways to one behaviour: here each row of the table runs twice, as installed and with the
 * quick start declining everything (a copy of the install whose quick.cjs answers false, so
 * bin/carbon.cjs loads cli.cjs as it does for any other command), and the two must agree byte
 * for byte: exit code, stdout and stderr, on a pipe and on a terminal. Each row also says which
 * bundle answered it as installed, so the table keeps comparing the quick start with the CLI
 * (not the CLI with itself) where it means to. test/cli/quick.test.ts holds the argument reading
 * to commander's; this holds everything after it: settings, config, warnings, errors, colour.
 */

interface Row {
  /** `<id>` stands for the id of the offset `withOffset` puts in the home. */
  args: string[];
  /** Whether quick.cjs answers this row itself as installed (false: it, or the bin, hands it to cli.cjs). */
  quick: boolean;
  /** Added to the environment; given the CARBON_HOME when it needs one of its keys. */
  env?: Record<string, string> | ((home: string) => Promise<Record<string, string>>);
  /** Prepares the CARBON_HOME (the same for both runs). */
  setup?: (home: string) => void | Promise<void>;
  /** On a pseudo-terminal (stdin, stdout and stderr: the two streams arrive merged). */
  tty?: boolean;
  /** The bin sends it to cli.cjs without loading quick.cjs at all (bin/carbon.cjs reads the arguments itself). */
  cliOnly?: boolean;
}

const config =
  (data: unknown, mode = 0o600) =>
  (home: string) => {
    writeFileSync(join(home, 'config.json'), typeof data === 'string' ? data : JSON.stringify(data), { mode });
    chmodSync(join(home, 'config.json'), mode);
  };
const ci = config({ profiles: { ci: { mode: 'live' } } });
/** Not a key of the local sandbox (well formed). */
const OTHER_TEST_KEY = 'ck_test_abcdefabcdef12';
const OTHER_LIVE_KEY = 'ck_live_abcdefabcdef12';
const sandboxTestKey = async (home: string) => ({ CARBON_API_KEY: (await sandboxKeys(home)).test });
const nowhere = 'http://127.0.0.1:1/api/v1';
/** A ledger with one placed test offset (made in beforeAll), copied whole into the home: the same id and times in both runs. */
let ledger: { data: string; id: string };
const withOffset = (home: string) => cpSync(ledger.data, join(home, 'data'), { recursive: true });
/**
 * A purchase made with the Idempotency-Key `k-1` (a row that buys with it again is answered with
 * this one), then placed: a replay answers the offset as it is now, which must not depend on how
 * much real time each of the two runs took.
 */
const boughtWithK1 = async (home: string) => {
  await ok(['buy', '--kg', '5', '--idempotency-key', 'k-1'], { home });
  await ok(['sandbox', 'clock', 'advance', '1m'], { home });
};

const ROWS: Row[] = [
  // The flags quick.ts takes, alone, twice, together and in any order.
  { args: ['balance'], quick: true },
  { args: ['impact'], quick: true },
  { args: ['balance', '--json'], quick: true },
  { args: ['impact', '--json', '--json'], quick: true },
  { args: ['balance', '--live'], quick: true },
  { args: ['impact', '--test', '--json'], quick: true },
  { args: ['balance', '--local', '--no-color'], quick: true },
  { args: ['impact', '--verbose'], quick: true },
  { args: ['balance', '--verbose', '--json', '--live'], quick: true },
  { args: ['balance', '--json', '--profile', 'ci', '--no-color', '--verbose', '--local', '--live'], quick: true, setup: ci },
  { args: ['impact', '--profile=ci', '--json'], quick: true, setup: ci },
  { args: ['balance', '--profile', 'nope', '--profile', 'ci'], quick: true, setup: ci },
  { args: ['balance', '--profile', 'default', '--test'], quick: true },
  // Taken by quick.ts, refused by the settings: the CLI's error.
  { args: ['balance', '--live', '--test'], quick: false },
  { args: ['impact', '--profile', 'nope'], quick: false },
  { args: ['balance', '--profile=nope', '--json'], quick: false },
  { args: ['balance', '--profile', 'ci', '--profile', 'nope'], quick: false, setup: ci },
  { args: ['impact', '--profile', '__proto__'], quick: false },
  // What quick.ts does not take: help, mistakes, the other global flags.
  { args: ['balance', '-h'], quick: false, cliOnly: true },
  { args: ['impact', '--json', '--help'], quick: false, cliOnly: true },
  { args: ['balance', '--help', '--nope'], quick: false, cliOnly: true },
  { args: ['balance', '-v'], quick: false },
  { args: ['balance', '--json=x'], quick: false },
  { args: ['balance', '--bogus'], quick: false },
  { args: ['impact', '--js'], quick: false },
  { args: ['balance', '--prof', 'ci'], quick: false, setup: ci },
  { args: ['balance', '--no-colo'], quick: false },
  { args: ['balance', '--color'], quick: false },
  { args: ['impact', 'extra'], quick: false },
  { args: ['balance', '--'], quick: false },
  { args: ['balance', '--', '--json'], quick: false },
  { args: ['balance', '--profile'], quick: false },
  { args: ['balance', '--profile', ''], quick: false },
  { args: ['impact', '--profile='], quick: false },
  { args: ['balance', '--profile', '--json'], quick: false },
  { args: ['balance', '--max-retries', 'x'], quick: false },
  { args: ['balance', '--max-retries', '-1', '--json'], quick: false },
  { args: ['impact', '--max-retries', '2', '--json'], quick: false },
  { args: ['balance', '--timeout', '0'], quick: false },
  { args: ['balance', '--timeout', ''], quick: false },
  { args: ['balance', '--api-key', 'junk'], quick: false },
  { args: ['balance', '--api-key', OTHER_LIVE_KEY, '--test'], quick: false },
  { args: ['impact', '--api-key', OTHER_TEST_KEY, '--json'], quick: false },
  { args: ['balance', '--database', ''], quick: false },
  // The environment.
  { args: ['balance'], quick: true, env: { NO_COLOR: '1' } },
  { args: ['impact'], quick: true, env: { FORCE_COLOR: '1' } },
  { args: ['balance', '--no-color'], quick: true, env: { FORCE_COLOR: '3' } },
  { args: ['balance', '--json'], quick: true, env: { CARBON_PROFILE: 'ci' }, setup: ci },
  { args: ['balance'], quick: true, env: { CARBON_PROFILE: '' } },
  { args: ['impact', '--json'], quick: false, env: { CARBON_PROFILE: 'nope' } },
  { args: ['balance'], quick: false, env: { CARBON_API_KEY: 'junk' } },
  { args: ['balance', '--json'], quick: true, env: { CARBON_API_KEY: OTHER_LIVE_KEY } },
  { args: ['balance', '--live'], quick: false, env: { CARBON_API_KEY: OTHER_TEST_KEY } },
  { args: ['impact', '--json'], quick: true, env: sandboxTestKey },
  { args: ['balance'], quick: false, env: { CARBON_MAX_RETRIES: 'x' } },
  { args: ['balance', '--json'], quick: false, env: { CARBON_TIMEOUT: '0' } },
  { args: ['impact'], quick: false, env: { CARBON_BUSY_TIMEOUT_MS: '5s' } },
  { args: ['impact'], quick: true, env: { CARBON_DEBUG: 'http' } },
  { args: ['balance', '--local', '--json'], quick: true, env: { CARBON_BASE_URL: nowhere } },
  { args: ['balance', '--json'], quick: false, env: { CARBON_BASE_URL: nowhere, CARBON_MAX_RETRIES: '0' } },
  // The config file and CARBON_HOME.
  { args: ['balance'], quick: false, setup: config('{bad') },
  { args: ['impact', '--json'], quick: false, setup: config('[]') },
  { args: ['balance'], quick: true, setup: config({}, 0o644) },
  { args: ['balance', '--profile', 'nope'], quick: false, setup: config({}, 0o644) },
  { args: ['impact', '--json'], quick: true, setup: config({ current_profile: 'ci', profiles: { ci: { mode: 'live' } } }) },
  // A current profile the file does not hold is refused (exit 2), as a --profile of none is: the whole CLI says it.
  { args: ['balance'], quick: false, setup: config({ current_profile: 'gone' }) },
  { args: ['balance', '--json'], quick: false, setup: config({ profiles: { default: { test_key: OTHER_LIVE_KEY } } }) },
  { args: ['balance', '--profile', 'ci', '--live'], quick: true, setup: config({ profiles: { ci: { live_key: OTHER_LIVE_KEY } } }) },
  { args: ['balance', '--profile', 'remote', '--json'], quick: false, setup: config({ profiles: { remote: { base_url: nowhere } } }) },
  { args: ['balance', '--profile', 'remote', '--local'], quick: true, setup: config({ profiles: { remote: { base_url: nowhere } } }) },
  { args: ['balance'], quick: true, setup: (home) => writeFileSync(join(home, 'data'), '') },
  {
    args: ['impact', '--json'],
    quick: true,
    setup: (home) => {
      mkdirSync(join(home, 'data'));
      writeFileSync(join(home, 'data', 'ledger.db'), 'not a database');
    },
  },
  {
    args: ['balance'],
    quick: true,
    env: { CARBON_DEBUG: '1' },
    setup: (home) => {
      mkdirSync(join(home, 'data'));
      writeFileSync(join(home, 'data', 'ledger.db'), 'not a database');
    },
  },
  // show <id>: its one argument, anywhere among the everyday flags.
  { args: ['show', '<id>'], quick: true, setup: withOffset },
  { args: ['show', '<id>', '--json'], quick: true, setup: withOffset },
  {
    args: ['show', '--json', '--profile', 'ci', '<id>'],
    quick: true,
    setup: (home) => {
      withOffset(home);
      ci(home);
    },
  },
  { args: ['show', '<id>', '--live'], quick: true, setup: withOffset },
  { args: ['show', 'off_nothere', '--json'], quick: true },
  // An empty id is commander's to refuse (registry.ts): quick.cjs hands it on.
  { args: ['show', ''], quick: false },
  { args: ['show', '<id>'], quick: true, setup: withOffset, env: { NO_COLOR: '1' } },
  { args: ['show', '<id>', '--json'], quick: false, setup: withOffset, env: { CARBON_TIMEOUT: '0' } },
  // Left to the CLI: no id, two, and show's own flags.
  { args: ['show'], quick: false },
  { args: ['show', '--json'], quick: false },
  { args: ['show', '<id>', 'off_nothere'], quick: false, setup: withOffset },
  { args: ['show', '<id>', '--wait', '--json'], quick: false, cliOnly: true, setup: withOffset },
  { args: ['show', '-q', '<id>'], quick: false, setup: withOffset },
  { args: ['show', '--', '<id>'], quick: false, setup: withOffset },
  { args: ['show', '<id>', '--help'], quick: false, cliOnly: true },
  // buy and quote with their own flags: bought, refused by a check, refused by the model.
  { args: ['buy', '--kg', '500'], quick: true },
  { args: ['buy', '--kg', '500', '--json'], quick: true },
  { args: ['buy', '--amount', '12.50', '--reference', 'flight-LHR-JFK', '-q'], quick: true },
  { args: ['buy', '--amount-cents=1250', '--quiet', '--verbose'], quick: true },
  { args: ['buy', '--kg', '1,000', '--max-cents', '5000', '--json'], quick: true },
  { args: ['buy', '--kg', '5', '--max-cents', '1'], quick: true },
  { args: ['buy', '--kg', '5', '--max-cents', '1.5'], quick: true },
  { args: ['buy', '--kg', '5', '--dry-run'], quick: true },
  { args: ['buy', '--dry-run', '--amount', '300', '--json'], quick: true },
  { args: ['buy', '--kg', '5', '--idempotency-key', 'k-1', '--json'], quick: true, setup: boughtWithK1 },
  { args: ['buy', '--kg', '6', '--idempotency-key', 'k-1'], quick: true, setup: boughtWithK1 },
  { args: ['buy', '--kg', '5', '--live'], quick: true },
  { args: ['buy', '--kg', '5', '--live', '--yes', '--json'], quick: true },
  { args: ['buy', '-y', '--kg', '5', '--profile', 'ci'], quick: true, setup: ci },
  { args: ['buy', '--kg', '0'], quick: true },
  { args: ['buy', '--kg', '1e3'], quick: true },
  { args: ['buy', '--kg', '5', '--amount', '1'], quick: true },
  { args: ['buy', '--reference', 'r'], quick: true },
  { args: ['buy'], quick: true },
  { args: ['buy', '--quiet', '--json', '--kg', '5'], quick: true },
  { args: ['buy', '--kg', '5'], quick: true, env: { CARBON_API_KEY: OTHER_TEST_KEY } },
  { args: ['quote', '--kg', '2000'], quick: true },
  { args: ['quote', '--json', '--amount-cents', '99'], quick: true },
  { args: ['quote', '--amount=12.5', '--live', '--json'], quick: true },
  { args: ['quote', '--kg', '2,000,000'], quick: true },
  { args: ['quote'], quick: true },
  // Left to the CLI: buy's own flags that quick.ts does not take, a flag twice or without its value.
  { args: ['buy', '--kg', '5', '--wait', '--dry-run'], quick: false, cliOnly: true },
  { args: ['buy', '--reference', '--wait', '--kg', '5'], quick: false, cliOnly: true },
  { args: ['list', '--reference', '-h'], quick: false, cliOnly: true },
  { args: ['buy', '--from-csv', 'nothere.csv'], quick: false, cliOnly: true },
  { args: ['buy', '--json', '--from-csv=-', '--dry-run'], quick: false, cliOnly: true },
  { args: ['buy', '--kg', '5', '--partial'], quick: false },
  { args: ['buy', '--kg', '5', '--kg', '6'], quick: false },
  { args: ['buy', '--kg', '--json'], quick: false },
  { args: ['buy', '--kg', '-5'], quick: false },
  { args: ['buy', '--yes=1', '--kg', '5'], quick: false },
  { args: ['quote', '--kg', '5', '--quiet'], quick: false },
  { args: ['quote', '--kg', '5', 'extra'], quick: false },
  { args: ['buy', '--kg', '5', '--json'], quick: false, env: { CARBON_TIMEOUT: '0' } },
  // list with its own flags, but for --all.
  { args: ['list'], quick: true },
  { args: ['list', '--json'], quick: true, setup: withOffset },
  { args: ['list', '--limit', '1', '--page-size=1', '--json'], quick: true, setup: withOffset },
  { args: ['list', '--status', 'placed', '--format', 'csv'], quick: true, setup: withOffset },
  { args: ['list', '--since', '7d', '--until', 'today', '-q'], quick: true, setup: withOffset },
  { args: ['list', '--format=json', '--live'], quick: true, setup: withOffset },
  { args: ['list', '--starting-after', '<id>', '--json'], quick: true, setup: withOffset },
  { args: ['list', '--reference', 'nope', '--format', 'plain'], quick: true, setup: withOffset },
  { args: ['list', '--quiet', '--json'], quick: true },
  { args: ['list', '--limit', '0'], quick: true },
  { args: ['list', '--page-size', '101', '--json'], quick: true },
  { args: ['list', '--since', 'tomorrow'], quick: true },
  { args: ['list', '--since', 'today', '--until', 'yesterday'], quick: true },
  { args: ['list', '--starting-after', 'off_nothere'], quick: true },
  // Left to the CLI: --all (from the bin itself), a value outside a flag's choices, a flag twice.
  { args: ['list', '--all', '--json'], quick: false, cliOnly: true, setup: withOffset },
  { args: ['list', '--format', 'csv', '--all'], quick: false, cliOnly: true, setup: withOffset },
  { args: ['list', '--format', 'xml'], quick: false },
  { args: ['list', '--status', 'done', '--json'], quick: false },
  { args: ['list', '--limit', '5', '--limit', '6'], quick: false },
  // A terminal.
  { args: ['list'], quick: true, tty: true, setup: withOffset },
  { args: ['list', '--limit', '1'], quick: true, tty: true, setup: withOffset },
  { args: ['list', '--format', 'plain', '--no-color'], quick: true, tty: true, setup: withOffset },
  { args: ['buy', '--kg', '500'], quick: true, tty: true },
  { args: ['buy', '--kg', '5', '--live'], quick: true, tty: true },
  { args: ['quote', '--kg', '2000'], quick: true, tty: true },
  { args: ['buy', '--kg', '5', '--dry-run', '--no-color'], quick: true, tty: true },
  { args: ['show', '<id>'], quick: true, tty: true, setup: withOffset },
  { args: ['show', '<id>', '--no-color', '--json'], quick: true, tty: true, setup: withOffset },
  { args: ['balance'], quick: true, tty: true },
  { args: ['impact', '--json'], quick: true, tty: true },
  { args: ['balance', '--no-color', '--live'], quick: true, tty: true },
  { args: ['impact'], quick: true, tty: true, env: { NO_COLOR: '1' } },
  { args: ['balance', '--verbose'], quick: true, tty: true },
  { args: ['balance', '--profile', 'nope'], quick: false, tty: true },
  { args: ['balance', '--help'], quick: false, cliOnly: true, tty: true },
  { args: ['impact'], quick: false, tty: true, setup: config('{bad') },
];

const newHome = homes();
let whole: { dir: string; bin: string };
let scratch: string;

beforeAll(async () => {
  const made = newHome();
  const { id } = await json<{ id: string }>(['buy', '--kg', '1234', '--json'], { home: made });
  // Placed long ago by the model's clock: it reads the same in both runs, however far apart.
  await ok(['sandbox', 'clock', 'advance', '1d'], { home: made });
  ledger = { data: join(made, 'data'), id };
  whole = copyBinary();
  // The quick start declining everything: bin/carbon.cjs then loads cli.cjs, as for any command.
  writeFileSync(join(whole.dir, 'dist', 'quick.cjs'), '(function (exports) { exports.start = () => false; })\n');
  scratch = newHome();
});
afterAll(() => rmSync(whole.dir, { recursive: true, force: true }));

interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The bundles bin/carbon.cjs compiled, in order. */
  bundles: string[];
}

let runs = 0;

/** Runs `bin` for `row` in a new CARBON_HOME; the outcome with that home and the install's place written alike for both. */
async function run(bin: string, row: Row): Promise<Outcome> {
  const home = newHome();
  await row.setup?.(home);
  // A terminal starts from no colour variable at all (the base env's FORCE_COLOR=0 is for pipes).
  const env = baseEnv(home, {
    ...(row.tty ? { FORCE_COLOR: undefined, TERM: 'xterm-256color' } : {}),
    ...(typeof row.env === 'function' ? await row.env(home) : row.env),
  });
  // Preloaded: the bundles the bin compiles (vm.Script), written at exit.
  const n = runs++;
  const probe = join(scratch, `probe-${n}.cjs`);
  const list = join(scratch, `bundles-${n}.txt`);
  writeFileSync(
    probe,
    `const vm = require('node:vm'); const compiled = [];
vm.Script = class extends vm.Script { constructor(source, options) { super(source, options); compiled.push(require('node:path').basename(options.filename)); } };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, compiled.join('\\n')));`,
  );
  const argv = [process.execPath, '--require', probe, bin, ...row.args.map((a) => (a === '<id>' ? ledger.id : a))];
  const options = { env, extendEnv: false, reject: false, stripFinalNewline: false, timeout: limit(20_000) } as const;
  const r = row.tty
    ? await execa('script', ['-qec', `stty cols 120 rows 40; exec ${argv.map(sh).join(' ')}`, '/dev/null'], { ...options, input: '' })
    : await execa(argv[0]!, argv.slice(1), { ...options, stdin: 'ignore' });
  // As a stack trace names it: the real path (the copy sits under node_modules, which may be a link).
  const install = realpathSync(dirname(dirname(bin)));
  const same = (text: unknown) =>
    String(text)
      .replaceAll(home, '<home>')
      .replaceAll(install, '<install>')
      // What differs by the run, not by the path it took: --verbose's time and Request-Id, a
      // purchase's id and times, and a stack frame's function name (each bundle minifies its own;
      // the file and line are the same).
      .replace(/ \d+(\.\d+)?ms req_\w+ /g, ' <ms> <req> ')
      .replace(/off_[A-Za-z0-9]{24}(?![A-Za-z0-9])/g, '<offset>')
      .replace(/\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d\.\d{3}Z| \d\d:\d\d:\d\d UTC)/g, '<time>')
      .replace(/\bat (async )?\S+ \(<install>/g, 'at $1<fn> (<install>');
  return {
    exitCode: r.exitCode ?? -1,
    stdout: same(r.stdout),
    stderr: same(r.stderr),
    bundles: readFileSync(list, 'utf8').split('\n').filter(Boolean),
  };
}

describe('the quick start and the whole CLI answer alike', () => {
  const name = (row: Row) =>
    [row.tty ? '(terminal)' : '', row.setup === undefined ? '' : '(home set up)', typeof row.env === 'function' ? '(sandbox key)' : '']
      .concat(Object.entries(typeof row.env === 'object' ? row.env : {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`))
      .concat(
        'carbon',
        row.args.map((a) => (a === '' ? "''" : a)),
      )
      .filter(Boolean)
      .join(' ');
  test.each(ROWS.map((row) => [name(row), row] as const))('%s', async (_name, row) => {
    const quick = await run(BIN(), row);
    const cli = await run(whole.bin, row);
    // The installed run took the path the row is about; the other always loaded cli.cjs.
    expect(quick.bundles.at(-1) === 'quick.cjs', `bundles ${quick.bundles.join(', ')}`).toBe(row.quick);
    if (row.cliOnly) expect(quick.bundles).toEqual(['cli.cjs']);
    expect(cli.bundles.at(-1)).toBe('cli.cjs');
    expect({ exitCode: quick.exitCode, stdout: quick.stdout, stderr: quick.stderr }).toEqual({
      exitCode: cli.exitCode,
      stdout: cli.stdout,
      stderr: cli.stderr,
    });
  });
});

describe('seeded argument lists: the quick start and the whole CLI answer alike', () => {
  test('every list, and the quick start answers a share of them itself', { timeout: limit(240_000) }, async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(arbitraryArgs, fc.boolean(), async (args, setUp) => {
        // Which bundle answers is not known beforehand: `quick` is the table's, not read here.
        const row: Row = { args, quick: false, setup: setUp ? withOffset : undefined };
        const [quick, cli] = await Promise.all([run(BIN(), row), run(whole.bin, row)]);
        if (quick.bundles.at(-1) === 'quick.cjs') answered++;
        expect(cli.bundles.at(-1)).toBe('cli.cjs');
        expect({ exitCode: quick.exitCode, stdout: quick.stdout, stderr: quick.stderr }).toEqual({
          exitCode: cli.exitCode,
          stdout: cli.stdout,
          stderr: cli.stderr,
        });
      }),
      // Each list is two processes, so 50 of them here; test/cli/quick.test.ts reads 2,000 in-process.
      { numRuns: 50, endOnFailure: true },
    );
    // Not only hand-overs: quick.cjs answered some of the lists itself (10–17 of 50 in six seeds).
    expect(answered).toBeGreaterThanOrEqual(3);
  });
});
