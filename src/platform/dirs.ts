import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` that always ends. Node's own recursive mkdirSync never returns under /proc (the
 * kernel answers ENOENT for a parent that exists, and it retries forever): carbon with
 * CARBON_HOME=/proc/… spun at 100 % CPU. Here each missing directory is made once, from the top
 * down, and any refusal is thrown as it is (ENOENT, ENOTDIR, EACCES, EROFS).
 */
export function makeDirs(path: string, mode: number): void {
  const missing: string[] = [];
  for (let p = resolve(path); ; ) {
    try {
      if (!statSync(p).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(p);
      const parent = dirname(p);
      if (parent === p) break;
      p = parent;
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
