import { execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { BIN, baseEnv, carbon, homes } from '../support/cli.js';

/**
 * carbon needs Node.js 22.13 or later. On an older Node every command is refused by
 * bin/carbon.cjs before it reads or writes anything: one line on stderr, exit 11.
 *
 * The old Node: CARBON_TEST_OLD_NODE (.ci/run sets it to the machine's system Node, 20), else the
 * first `node` on PATH older than 22.13. In CI one must be there; elsewhere the test says why it
 * is skipped.
 */

function tooOld(version: string): boolean {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number) as [number, number];
  return major < 22 || (major === 22 && minor < 13);
}

function findOldNode(): string | undefined {
  const candidates = [
    process.env.CARBON_TEST_OLD_NODE,
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
  ].filter((p): p is string => p !== undefined && p !== '');
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      if (tooOld(execFileSync(path, ['--version'], { encoding: 'utf8' }).trim())) return path;
    } catch {
      // Not there, or not a Node.
    }
  }
  return undefined;
}

const oldNode = findOldNode();
if (oldNode === undefined && process.env.CI === 'true') throw new Error('CI must have a Node older than 22.13 (CARBON_TEST_OLD_NODE)');
if (oldNode === undefined) process.stderr.write('old-node.test.ts skipped: no Node older than 22.13 here (set CARBON_TEST_OLD_NODE).\n');

const newHome = homes();

describe.runIf(oldNode !== undefined)('on a Node older than 22.13', () => {
  test.each([
    [['buy', '--kg', '500']],
    [['balance', '--json']],
    [['list']],
    [['serve', '--port', '0']],
    [['sandbox', 'status']],
    [['config', 'set', 'base_url', 'http://127.0.0.1:1']],
    [['--version']],
    [['--help']],
    [[]],
  ])('carbon %j prints one line naming the Node it needs, exits 11, and writes nothing', async (args) => {
    const home = newHome();
    const r = await execa(oldNode!, [BIN(), ...args], { env: baseEnv(home), extendEnv: false, reject: false, stdin: 'ignore' });
    const version = execFileSync(oldNode!, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    expect(r.exitCode).toBe(11);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')).toEqual([
      `carbon: needs Node.js 22.13 or later, and this is Node.js ${version}. Install Node 24 or 26 (LTS) from nodejs.org or with your version manager (nvm install 24), then run carbon again.`,
    ]);
    expect(readdirSync(home)).toEqual([]);
  });

  test("in a checkout, the line names `npx carbon` and the Node `npm ci` put beside it (the copy above has none: a package's line)", async () => {
    const home = newHome();
    const r = await execa(oldNode!, [join(ROOT, 'bin', 'carbon.cjs'), 'buy', '--kg', '500'], {
      env: baseEnv(home),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    const version = execFileSync(oldNode!, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'node', 'package.json'), 'utf8')).version;
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([
      11,
      '',
      `carbon: needs Node.js 22.13 or later, and this is Node.js ${version}. In this checkout, \`npx carbon\` runs it on the Node ${installed} that npm ci installed; or install Node 24 or 26 (LTS) from nodejs.org or with your version manager (nvm install 24), then run carbon again.`,
    ]);
    expect(readdirSync(home)).toEqual([]);
  });
});

describe('on a Node without node:sqlite (started with --no-experimental-sqlite)', () => {
  test('a command that opens the ledger says so in one line, exits 1, and makes no ledger', async () => {
    const home = newHome();
    const r = await carbon(['balance'], { home, env: { NODE_OPTIONS: '--no-experimental-sqlite' } });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: This Node\.js \(v[\d.]+\) has no node:sqlite, which the local ledger needs\. .*--no-experimental-sqlite/,
      ),
    ]);
    expect(readdirSync(home)).toEqual([]);
  });
});
