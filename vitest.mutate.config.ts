import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run mutate`: StrykerJS runs the fast loop only (the unit project's in-process tests), in
 * worker threads, where process.umask() is refused: the few tests that set it are left out.
 */
const unit = (base.test!.projects as Array<{ test: { include: string[]; exclude: string[]; env: Record<string, string> } }>)[0]!.test;

export default defineConfig({
  test: {
    include: unit.include,
    exclude: [...unit.exclude, ...configDefaults.exclude, 'test/service/data-dir.test.ts'],
    env: unit.env,
    setupFiles: ['test/support/seed.ts'],
    testTimeout: 30_000,
  },
});
