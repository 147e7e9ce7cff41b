import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { reportError } from '../../src/cli/report-error.js';

/** What reportError writes on stderr for `err`, with `env`. */
function reported(err: unknown, env: NodeJS.ProcessEnv): { code: number; text: string } {
  let text = '';
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  const code = reportError(err, { json: false, env, stderr, color: false });
  return { code, text };
}

describe('an unexpected error', () => {
  test('without CARBON_DEBUG: one line that says how to see the details, no stack', () => {
    const { code, text } = reported(new Error('boom'), {});
    expect([code, text]).toEqual([1, 'error: Unexpected error: boom (run with CARBON_DEBUG=1 for details)\n']);
  });

  test('with CARBON_DEBUG=1: the line without that hint, then the details', () => {
    const { code, text } = reported(new Error('boom'), { CARBON_DEBUG: '1' });
    const [line, ...stack] = text.trimEnd().split('\n');
    expect([code, line]).toEqual([1, 'error: Unexpected error: boom']);
    expect(stack[0]).toMatch(/^Error: boom$/);
    expect(stack.slice(1).every((frame) => /^\s+at /.test(frame))).toBe(true);
  });
});
