import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildIfStale, copyBinary } from './binary.js';

/**
 * Once per run of the integration project: the CLI built (only when dist/ is older than the
 * source) and one checked copy of it handed to every test process, and one temporary root that
 * every test process uses as its TMPDIR. Teardown removes both, so a run leaves nothing behind:
 * not in /tmp, not in node_modules/.cache (test processes never run exit hooks of their own).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the copy's bin/carbon.cjs. */
    carbonBin: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'carbon-test-run-'));
  const outer = process.env.TMPDIR;
  // Set before the test processes start: they inherit it, and os.tmpdir() answers it.
  process.env.TMPDIR = root;
  buildIfStale();
  const { dir, bin } = copyBinary();
  project.provide('carbonBin', bin);
  return () => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
  };
}
