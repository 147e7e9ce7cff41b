import { configDefaults, defineConfig } from 'vitest/config';
import { BASE_TEST_LIMIT_MS } from './test/support/load.js';

/**
 * Two projects. `unit`: everything that runs in this process (the rules, the model over SQLite,
 * the contract suite on the in-process engine, the server in-process): the fast loop,
 * `npm run test:unit`. `integration`: everything that starts processes (the built binary,
 * `carbon serve` children, shells, Chromium), and the contract suite over HTTP. `npm test` runs
 * both. The contract files run in both, each project on its own engines (CARBON_CONTRACT_ENGINES).
 */
const SPAWNING = [
  'test/e2e/**/*.test.ts',
  'test/pages/**/*.test.ts',
  'test/completions/{bash,zsh,fish,protocol}.test.ts',
  'test/reliability/!(fuzz-service).test.ts',
  'test/server/{signals,certificate-screenshot,server}.test.ts',
  'test/service/multi-process.test.ts',
];

export default defineConfig({
  test: {
    // Limits catch hangs; they are not timings. test/support/limits.ts scales them for the machine's
    // load as each file starts, and a test that sets its own uses limit() (test/support/load.ts).
    testTimeout: BASE_TEST_LIMIT_MS,
    hookTimeout: BASE_TEST_LIMIT_MS,
    // End-to-end tests spawn the binary and servers; two cores, so keep the fan-out modest.
    maxWorkers: 2,
    reporters: ['default'],
    // One seed for every randomised test (fast-check, the kill rounds, the fuzzers).
    setupFiles: ['test/support/seed.ts', 'test/support/limits.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          // In-process files share their worker's module registry: each file loading src/ afresh was
          // half of this project's time. A file that counts what a module does at load (a vi.mock)
          // calls vi.resetModules() first; a file that changes the environment or the timers sets them back.
          isolate: false,
          exclude: [...configDefaults.exclude, ...SPAWNING],
          env: { CARBON_CONTRACT_ENGINES: 'local' },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [...SPAWNING, 'test/contract/{contract,fidelity}.test.ts'],
          env: { CARBON_CONTRACT_ENGINES: 'http' },
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
