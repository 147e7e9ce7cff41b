import { expect, test } from 'vitest';
import { refuseNonUtf8Arguments } from '../../src/cli/argv-text.js';

/** Arguments Node read as U+FFFD: refused unless the command line's own bytes were UTF-8 (argv-text.ts). */

const bytes =
  (...args: (string | number[])[]) =>
  () =>
    args.map((a) => (typeof a === 'string' ? Buffer.from(a) : Buffer.from(a)));
const refusal = (argv: string[], raw: () => Buffer[] | undefined) => {
  try {
    refuseNonUtf8Arguments(argv, raw);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

test('an argument with U+FFFD whose bytes were not UTF-8 is refused, naming its flag or its place, never its value', () => {
  const raw = bytes('node', 'carbon.cjs', 'buy', '--idempotency-key', [0x62, 0xe9]);
  expect(refusal(['buy', '--idempotency-key', 'b\uFFFD'], raw)).toMatch(/^The value of --idempotency-key is not UTF-8 text/);
  expect(refusal(['buy', '--reference=ab\uFFFD'], raw)).toMatch(/^The value of --reference is not UTF-8 text/);
  expect(refusal(['show', 'off_\uFFFD'], raw)).toMatch(/^Argument 2 is not UTF-8 text/);
  expect(refusal(['buy', '--idempotency-key', 'secret-\uFFFD'], raw)).not.toContain('secret');
});

test('U+FFFD typed as UTF-8 passes; where the bytes cannot be read, it is refused; without U+FFFD nothing is read', () => {
  expect(refusal(['buy', '--reference', 'caf\uFFFD'], bytes('node', 'carbon.cjs', 'buy', '--reference', 'caf\uFFFD'))).toBeUndefined();
  expect(refusal(['buy', '--reference', 'caf\uFFFD'], () => undefined)).toMatch(/not UTF-8 text/);
  // Bytes that are not UTF-8 in the path carbon was run from are not the arguments'.
  expect(
    refusal(['buy', '--reference', 'caf\uFFFD'], bytes('node', [0x2f, 0xe9, 0x2f], 'buy', '--reference', 'caf\uFFFD')),
  ).toBeUndefined();
  expect(
    refusal(['buy', '--reference', 'café'], () => {
      throw new Error('read');
    }),
  ).toBeUndefined();
});
