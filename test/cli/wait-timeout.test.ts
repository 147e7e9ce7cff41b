import { expect, test } from 'vitest';
import { DEFAULT_WAIT_SECONDS, timeoutNamed } from '../../src/cli/offsets/wait.js';

/** A wait that ends at its time names --timeout; when none was given, it says its seconds are the default. */
test('--timeout as the line that ends a wait names it: given, its seconds; not given, the default, said so', () => {
  expect(timeoutNamed(2)).toBe('--timeout (2 s)');
  expect(timeoutNamed(undefined)).toBe(`--timeout (${DEFAULT_WAIT_SECONDS} s, the default)`);
  expect(DEFAULT_WAIT_SECONDS).toBe(120);
});
