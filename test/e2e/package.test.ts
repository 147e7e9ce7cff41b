import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { baseEnv } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * The npm package as a user gets it: `npm pack`, then `npm install` of the tarball into an empty
 * prefix (dependencies from the registry, as on a clean machine), then the
 * installed `carbon` run. What is in the tarball, and what the install prints, are checked too.
 */

const dir = mkdtempSync(join(tmpdir(), 'carbon-pack-'));

/** Every native part under `root`: a compiled addon (.node) or a node-gyp project (binding.gyp). */
function nativeParts(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.node') || basename(p) === 'binding.gyp');
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm pack', () => {
  test("the tarball: built, with its licence, and nothing of the repository's own", async () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = packed!.files.map((f) => f.path).sort();
    for (const needed of [
      'LICENSE',
      'README.md',
      'package.json',
      'bin/carbon.cjs',
      'dist/cli.cjs',
      'dist/quick.cjs',
      'dist/index.js',
      'dist/help.txt',
      'dist/vendor/pg.cjs',
      'dist/vendor/csv-parse.cjs',
      'openapi.yaml',
      'completions/carbon.bash',
    ]) {
      expect(files).toContain(needed);
    }
    expect(files.filter((f) => /^(src|test|bench|scripts|docs)\//.test(f) || f.endsWith('.v8cache') || f.startsWith('.'))).toEqual([]);
    // csv-parse is read by `buy --from-csv` alone, from its vendor bundle: every other command's
    // start-up reads dist/cli.cjs without it (one of its error codes stands for its code).
    expect(readFileSync(join(ROOT, 'dist', 'vendor', 'csv-parse.cjs'), 'utf8')).toContain('CSV_INVALID_OPTION_DELIMITER');
    expect(readFileSync(join(ROOT, 'dist', 'cli.cjs'), 'utf8')).not.toContain('CSV_INVALID_OPTION_DELIMITER');
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // No script npm would run (or warn about) when the package is installed.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts[hook], hook).toBeUndefined();
  });

  // Nothing to compile: the limits scale with the load.
  const installLimit = { timeout: limit(300_000) };
  test('installs into an empty prefix without warnings of ours, and runs: --version, buy, --help', installLimit, async () => {
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, stdio: 'ignore' });
    const tarballs = readdirSync(dir).filter((n) => n.endsWith('.tgz'));
    expect(tarballs).toHaveLength(1);
    const tarball = join(dir, tarballs[0]!);
    const prefix = join(dir, 'prefix');
    mkdirSync(prefix);
    // A registry connection that stalls is given up after 30 s and tried again, as npm tries (its own
    // default waits 5 minutes a try: a stalled one held this test for 9 minutes once, in a 2 s install).
    const patience = ['--fetch-timeout=30000'];
    const install = await execa(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', ...patience, tarball],
      {
        reject: false,
        all: true,
        timeout: installLimit.timeout - limit(20_000),
      },
    );
    expect(install.exitCode, String(install.all)).toBe(0);
    // No install script runs: nothing of carbon-offsets-cli, and nothing native in what it depends on.
    expect(String(install.all)).not.toMatch(/carbon-offsets-cli@[\d.]+ \(/);
    expect(nativeParts(join(prefix, 'node_modules'))).toEqual([]);
    expect(String(install.all)).not.toMatch(/npm (warn|WARN) deprecated/);

    const home = join(dir, 'home');
    mkdirSync(home);
    const carbon = (args: string[]) =>
      execa(join(prefix, 'node_modules', '.bin', 'carbon'), args, { env: baseEnv(home), extendEnv: false, reject: false, stdin: 'ignore' });
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((await carbon(['--version'])).stdout).toBe(version);
    const bought = await carbon(['buy', '--kg', '500', '--json']);
    expect(bought.stderr).toBe('');
    expect(bought.exitCode).toBe(0);
    expect(JSON.parse(String(bought.stdout))).toMatchObject({ object: 'offset', kg: 500, amount_cents: 2000, livemode: false });
    const help = await carbon(['--help']);
    expect(help.exitCode).toBe(0);
    expect(String(help.stdout)).toMatch(/^Usage: carbon \[options\] \[command\]/);
  });

  test('a checkout not yet built packs whole (prepack builds it, declarations too): strict TypeScript takes the README, import and require load it, SQLite reads no pg', {
    timeout: limit(240_000),
  }, async () => {
    // A clone: no dist/ at all, as after `git clone`; the dependencies are this checkout's.
    const checkout = join(dir, 'checkout');
    execFileSync('git', ['clone', '--quiet', ROOT, checkout]);
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    const packed = join(dir, 'packed');
    mkdirSync(packed);
    const pack = await execa('npm', ['pack', '--json', '--pack-destination', packed], { cwd: checkout, reject: false, all: true });
    expect(pack.exitCode, String(pack.all)).toBe(0);
    const files = (
      JSON.parse(String(pack.stdout).slice(String(pack.stdout).indexOf('['))) as Array<{ files: Array<{ path: string }> }>
    )[0]!.files.map((f) => f.path);
    for (const needed of ['dist/cli.cjs', 'dist/index.js', 'dist/types/index.d.ts']) expect(files).toContain(needed);
    expect(files.some((f) => /^dist\/lib\/postgres-store-\w+\.js$/.test(f))).toBe(true);

    // An app of a user's: the package unpacked into its node_modules, with Node's types.
    const app = join(dir, 'app');
    const installed = join(app, 'node_modules', 'carbon-offsets-cli');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['xzf', join(packed, readdirSync(packed)[0]!), '-C', installed, '--strip-components=1']);
    mkdirSync(join(app, 'node_modules', '@types'));
    symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'));
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const snippet = /## As a library\n\n```js\n([\s\S]*?)```/.exec(readme)![1]!;
    writeFileSync(join(app, 'package.json'), '{"type":"module"}');
    writeFileSync(join(app, 'readme.ts'), snippet);
    // "a field left `undefined` keeps its default", under the strictest optional types too (before: TS2375 there).
    writeFileSync(
      join(app, 'options.ts'),
      `import { CarbonClient, HttpTransport } from 'carbon-offsets-cli';
export const client = new CarbonClient({
  apiKey: 'ck_test_x',
  transport: new HttpTransport({ baseUrl: 'https://api.example.com/api/v1' }),
  retry: { maxRetries: undefined, baseDelayMs: 100 },
});
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2023',
          noEmit: true,
          exactOptionalPropertyTypes: true,
          types: ['node'],
        },
        files: ['readme.ts', 'options.ts'],
      }),
    );
    const tsc = await execa(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', app], { reject: false, all: true });
    expect(tsc.exitCode, String(tsc.all)).toBe(0);

    // import and require both load it; importing it reads nothing of pg.
    const loaded = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const esm = await import('carbon-offsets-cli');
const cjs = require('carbon-offsets-cli');
const pg = Object.keys(require.cache).filter((k) => k.includes('/node_modules/pg'));
console.log(JSON.stringify([typeof esm.openLocal, cjs.CarbonClient === esm.CarbonClient, pg.length]));`,
      ],
      { cwd: app, reject: false, all: true },
    );
    expect(String(loaded.all)).toBe('["function",true,0]');
  });
});
