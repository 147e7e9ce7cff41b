import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

/**
 * The built binary under test, for every suite that runs it (e2e, serve, reliability,
 * completions). Tests run a private copy of bin/, dist/ and package.json taken once per test
 * process: the working tree may be rebuilt beside a test run, and a process in flight must not
 * have its lazily loaded chunks replaced under it. The copy sits inside node_modules/.cache so
 * pg still resolves from the project's node_modules, exactly as for bin/carbon.cjs.
 */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'carbon-bin');

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** True when dist/ is missing or older than the source, the build script or package.json. */
function stale(): boolean {
  const cli = join(ROOT, 'dist', 'cli.cjs');
  if (!existsSync(cli)) return true;
  const built = statSync(cli).mtimeMs;
  return [join(ROOT, 'src'), join(ROOT, 'scripts', 'build.mjs'), join(ROOT, 'package.json')].some((p) => newestMtime(p) > built);
}

/** Builds dist/ when it is stale (the build writes beside dist/ and renames it into place). */
export function buildIfStale(): void {
  if (stale())
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
}

/** Copies left behind by test processes that were killed before they could remove them. */
function removeAbandoned(): void {
  for (const name of existsSync(CACHE) ? readdirSync(CACHE) : []) {
    const dir = join(CACHE, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process removed it first.
    }
  }
}

/** Every relative import of every bundled file resolves, and the copy answers --version. */
function check(dir: string): void {
  for (const file of readdirSync(join(dir, 'dist'), { recursive: true }) as string[]) {
    if (!file.endsWith('.js')) continue;
    const text = readFileSync(join(dir, 'dist', file), 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.\.?\/[^"'\s]+\.js)["']/g)) {
      if (!existsSync(resolve(dirname(join(dir, 'dist', file)), m[1]!))) throw new Error(`the copy misses ${m[1]}`);
    }
  }
  if (spawnSync(process.execPath, [join(dir, 'bin', 'carbon.cjs'), '--version'], { timeout: 20_000 }).status !== 0) {
    throw new Error('the copy of the binary does not run');
  }
}

/** Takes a checked copy of the built binary; retried when taken in the middle of a build. */
export function copyBinary(): { dir: string; bin: string } {
  mkdirSync(CACHE, { recursive: true });
  removeAbandoned();
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(CACHE, 'run-'));
    try {
      if (!existsSync(join(ROOT, 'dist', 'cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build` first.');
      for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
      check(dir);
      return { dir, bin: join(dir, 'bin', 'carbon.cjs') };
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 10) throw err;
      spawnSync('sleep', ['0.5']);
    }
  }
}

/** The run's copy of bin/carbon.cjs, made once by the global setup (which also removes it). */
export function binary(): string {
  return inject('carbonBin');
}
