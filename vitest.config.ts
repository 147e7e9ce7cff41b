import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end tests spawn the binary and servers; two cores, so keep the fan-out modest.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
