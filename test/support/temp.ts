import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary directories (a CARBON_HOME, a data directory), the one maker every suite uses. Each
 * sits in os.tmpdir(), which the integration project's global setup points at the run's own root.
 */

/** A fresh, empty temporary directory named `prefix…`; the caller removes it. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Directories made by `make`, all removed together by `removeAll`. */
export interface TempDirs {
  make(prefix?: string): string;
  removeAll(): void;
}

/** A set of temporary directories named `prefix…` (unless `make` is given another prefix). */
export function tempDirs(prefix: string): TempDirs {
  const made: string[] = [];
  return {
    make(own = prefix) {
      const dir = tempDir(own);
      made.push(dir);
      return dir;
    },
    removeAll() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
