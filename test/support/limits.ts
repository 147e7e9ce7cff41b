import { vi } from 'vitest';
import { BASE_TEST_LIMIT_MS, limit } from './load.js';

/**
 * A setup file: each test file starts with vitest's default test and hook limits scaled for the
 * machine's load at that moment (see load.ts). Limits a test gives itself use `limit()` too.
 */
vi.setConfig({ testTimeout: limit(BASE_TEST_LIMIT_MS), hookTimeout: limit(BASE_TEST_LIMIT_MS) });
