import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { buildIfStale, copyBinary } from '../support/binary.js';

/** Builds the CLI once for the end-to-end tests (only when dist/ is older than the source) and hands them a copy. */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the copy's bin/carbon.cjs. */
    carbonBin: string;
  }
}

export default function setup(project: TestProject): () => void {
  buildIfStale();
  const { dir, bin } = copyBinary();
  project.provide('carbonBin', bin);
  return () => rmSync(dir, { recursive: true, force: true });
}
