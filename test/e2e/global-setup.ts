import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

/**
 * Builds the CLI once for the end-to-end tests (only when dist/ is older than the source), then
 * runs the tests against a snapshot of bin/ + dist/ in node_modules/.cache. The snapshot is a
 * byte-for-byte copy of the built binary; it exists because this working tree is shared and
 * `npm run build` deletes dist/ before writing it, so a build started elsewhere in the middle
 * of a test run would otherwise fail commands at random. From node_modules/.cache, Node still
 * resolves better-sqlite3 (the one external module) from the repository's node_modules.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the snapshot's bin/carbon.js. */
    carbonBin: string;
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'carbon-e2e');

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function stale(): boolean {
  const cli = join(ROOT, 'dist', 'cli.js');
  if (!existsSync(cli)) return true;
  const built = statSync(cli).mtimeMs;
  return [join(ROOT, 'src'), join(ROOT, 'scripts', 'build.mjs'), join(ROOT, 'package.json')].some((p) => newestMtime(p) > built);
}

function build(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
}

/** Snapshots left by runs that were killed before their teardown (older than an hour). */
function removeAbandoned(): void {
  for (const name of readdirSync(CACHE)) {
    const dir = join(CACHE, name);
    if (Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
  }
}

/** Copies bin/ and dist/, and checks the copy runs: a copy taken during someone's build is retried. */
function snapshot(): string {
  mkdirSync(CACHE, { recursive: true });
  removeAbandoned();
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1 || stale()) build();
    const dir = mkdtempSync(join(CACHE, 'run-'));
    try {
      cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
      cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
      const bin = join(dir, 'bin', 'carbon.js');
      execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore', timeout: 20_000 });
      return dir;
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 3) throw err;
    }
  }
}

export default function setup(project: TestProject): () => void {
  const dir = snapshot();
  project.provide('carbonBin', join(dir, 'bin', 'carbon.js'));
  return () => rmSync(dir, { recursive: true, force: true });
}
