import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildIfStale, copyBinary } from './binary.js';
import { throwawayPostgres } from './postgres-cluster.js';

/**
 * Once per run of the integration project: the CLI built (only when dist/ is older than the
 * source) and one checked copy of it handed to every test process, and one temporary root that
 * every test process uses as its TMPDIR. Teardown removes both, so a run leaves nothing behind:
 * not in /tmp, not in node_modules/.cache (test processes never run exit hooks of their own).
 * Outside CI, without CARBON_TEST_DATABASE_URL, it also starts a throw-away PostgreSQL when the
 * server binaries are installed (postgres-cluster.ts).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the copy's bin/carbon.cjs. */
    carbonBin: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const root = mkdtempSync(join(tmpdir(), 'carbon-test-run-'));
  const outer = process.env.TMPDIR;
  // Set before the test processes start: they inherit it, and os.tmpdir() answers it.
  process.env.TMPDIR = root;
  buildIfStale();
  const { dir, bin } = copyBinary();
  project.provide('carbonBin', bin);
  // Outside CI, with no PostgreSQL given: a throw-away one when the server binaries are here.
  const cluster = process.env.CARBON_TEST_DATABASE_URL || process.env.CI === 'true' ? null : await throwawayPostgres(root);
  if (cluster !== null) process.env.CARBON_TEST_DATABASE_URL = cluster.url;
  return () => {
    if (cluster !== null) {
      cluster.stop();
      delete process.env.CARBON_TEST_DATABASE_URL;
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
  };
}
