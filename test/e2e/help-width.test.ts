import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, test } from 'vitest';
import type { CommandSpec } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { BIN, baseEnv, homes, pipeline, plain, sandboxKeys, serve, sh } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Help fits the terminal: every command's --help (and the bare groups'), on a real pseudo-terminal
 * sized with stty, has no line wider than the terminal, and no word broken: the words are the same,
 * in the same order, as on a terminal too wide to wrap anything. Examples too long for the width go
 * on with a ` \` continuation. The serve banner fits too.
 */

const newHome = homes();

/** Terminal cells: this file's help is ASCII apart from '…' and '●', one cell each. */
const cells = (line: string): number => [...line].length;

/** Every command a person can ask for help on, by its words (hidden ones left out). */
function paths(specs: readonly CommandSpec[], above: string[] = []): string[][] {
  return specs.filter((s) => s.hidden !== true).flatMap((s) => [[...above, s.name], ...paths(s.subcommands ?? [], [...above, s.name])]);
}
const PATHS = [[], ...paths(COMMANDS)];
const MARK = '=====carbon-help=====';

/** Each command's --help on a terminal of `columns`, in one `script` run: the help of PATHS[i] at [i]. */
async function helpAt(columns: number, home: string): Promise<string[]> {
  const runs = PATHS.map((words) => `${[process.execPath, BIN(), ...words, '--help'].map(sh).join(' ')}; echo ${MARK}`);
  const r = await execa('script', ['-qec', `stty cols ${columns} rows 50; ${runs.join('; ')}`, '/dev/null'], {
    env: baseEnv(home, { TERM: 'xterm-256color', FORCE_COLOR: undefined }),
    extendEnv: false,
    reject: false,
    input: '',
    timeout: limit(120_000),
  });
  expect(r.exitCode).toBe(0);
  const parts = plain(String(r.stdout))
    .replace(/\r\n/g, '\n')
    .split(new RegExp(`${MARK}\n?`));
  expect(parts).toHaveLength(PATHS.length + 1);
  return parts.slice(0, -1);
}

/** Exit code 2's row of `carbon --help` at 80 columns: one item, continued under its description, no line left short. */
const EXIT_2_AT_80 =
  /^ {4}2 {2}usage: bad options or arguments, a malformed setting \(a key that is no\n {7}test or live key\), a live purchase with nobody to confirm and no --yes,\n {7}400, 422 validation_error \/ amount_too_small, a snapshot refused \(the\n {7}ledger untouched\)\n {4}3 {2}/m;

/** The words of a help text, a ` \` continuation taken out. */
const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '' && w !== '\\');

describe('help fits the terminal', () => {
  const wide: string[] = [];
  let home: string;
  beforeAll(async () => {
    home = newHome();
    wide.push(...(await helpAt(1000, home)));
  }, limit(120_000));

  test.each([60, 80, 100])('%i columns: every command, no line wider, no word broken', async (columns) => {
    const helps = await helpAt(columns, home);
    helps.forEach((help, i) => {
      const name = ['carbon', ...PATHS[i]!].join(' ');
      expect(help, name).toMatch(/^Usage: carbon/);
      for (const line of help.split('\n')) expect(cells(line), `${name} at ${columns}: ${line}`).toBeLessThanOrEqual(columns);
      expect(words(help), name).toEqual(words(wide[i]!));
    });
    if (columns === 80) {
      // The footer of carbon --help, and an example continued with ` \`.
      expect(helps[0]).toMatch(/^Environment: CARBON_API_KEY, CARBON_BASE_URL, CARBON_PROFILE, CARBON_HOME\n\(config and data\), /m);
      expect(helps[0]).toMatch(EXIT_2_AT_80);
      // The same into a pipe, where the bin prints dist/help.txt, saved by the build at 80 columns.
      const piped = await execa(process.execPath, [BIN(), '--help'], { env: baseEnv(home), extendEnv: false });
      expect(piped.stdout).toMatch(EXIT_2_AT_80);
      const buy = helps[PATHS.findIndex((p) => p.join(' ') === 'buy')]!;
      expect(buy).toMatch(/^ {2}\$ carbon \S.* \\\n {6}\S/m);
    }
  });

  test.each([80, 100])(
    'the serve banner at %i columns: no line wider, no word broken, the command to try continued with \\',
    async (columns) => {
      const banner = await bannerAt(columns, newHome());
      for (const line of banner.split('\n')) expect(cells(line), line).toBeLessThanOrEqual(columns);
      expect(banner).toMatch(/^ {2}developer page( |\n {4})http:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]+$/m);
      // Pasted, the command runs: the continuations joined give the one line a log gets.
      const tryIt = banner.slice(banner.indexOf('Try: ') + 5, banner.indexOf('\n  Ctrl-C'));
      expect(tryIt.replace(/ \\\n {4}/g, ' ')).toMatch(
        /^CARBON_API_KEY=\$\(carbon sandbox keys --reveal --json \| jq -r '\.\[\] \| select\(\.default=="test"\) \| \.secret'\) CARBON_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/api\/v1 carbon buy --kg 500$/,
      );
      if (columns === 80) expect(tryIt).toContain(' \\\n    ');
    },
  );

  test('the serve banner in a log: every line whole; its command to try, pasted into a shell, buys', async () => {
    const home = newHome();
    const server = await serve(home, [], { COLUMNS: '40' });
    try {
      const tryIt = /^ {2}Try: (CARBON_API_KEY=.* CARBON_BASE_URL=\S+ carbon buy --kg 500)$/m.exec(plain(server.stderr()));
      expect(tryIt).not.toBeNull();
      const pasted = await pipeline(tryIt![1]!, { home });
      expect(pasted.exitCode, pasted.stderr).toBe(0);
      // Bought through the server: $20 of the test balance's $1,000.
      const balance = await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${(await sandboxKeys(home)).test}` } });
      expect(await balance.json()).toMatchObject({ available_cents: 98_000 });
    } finally {
      await server.stop();
    }
  });
});

/** What `carbon serve` prints on stderr, a terminal of `columns`, until it is stopped (SIGTERM). */
async function bannerAt(columns: number, home: string): Promise<string> {
  const ready = join(home, 'ready.json');
  const command = `stty cols ${columns} rows 50; exec ${[process.execPath, BIN(), 'serve', '--port', '0'].map(sh).join(' ')} > ${sh(ready)}`;
  const child = execa('script', ['-qec', command, '/dev/null'], {
    env: baseEnv(home, { TERM: 'xterm-256color', FORCE_COLOR: undefined }),
    extendEnv: false,
    reject: false,
    input: '',
    timeout: limit(30_000),
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  // The banner ends with this line; the ready line is written to the file just after it.
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.includes('Ctrl-C stops it.')) resolve();
    });
    void child.then(() => reject(new Error(`carbon serve ended first: ${out}`)));
  });
  const started = Date.now();
  while (!(existsSync(ready) && readFileSync(ready, 'utf8').includes('\n'))) {
    if (Date.now() - started > limit(10_000)) throw new Error('no ready line');
    await new Promise((r) => setTimeout(r, 20));
  }
  process.kill((JSON.parse(readFileSync(ready, 'utf8')) as { pid: number }).pid, 'SIGTERM');
  await child;
  return plain(out).replace(/\r\n/g, '\n');
}
