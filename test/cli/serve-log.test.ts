import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { requestLog } from '../../src/cli/commands/serve/run.js';

/**
 * carbon serve's request log (README, "carbon serve"): every line written, in order; a line after
 * a quiet spell at the end of its turn; under load, the lines of 50 ms in one write. The model's
 * clock here is vitest's (setImmediate, setTimeout and performance.now all faked).
 */
describe('the request log', () => {
  let writes: string[];
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout', 'performance'] });
    writes = [];
  });
  afterEach(() => vi.useRealTimers());

  test('a line after a quiet spell is written at the end of its turn', async () => {
    const { log } = requestLog((text) => writes.push(text));
    log('first');
    log('second, same turn');
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toEqual(['first\nsecond, same turn']);
  });

  test('under load, a request a millisecond for a second is written in about twenty writes, every line once and in order', async () => {
    const { log } = requestLog((text) => writes.push(text));
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
    for (const line of lines) {
      log(line);
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(100);
    expect(writes.length).toBeGreaterThanOrEqual(19);
    expect(writes.length).toBeLessThanOrEqual(22);
    expect(writes.join('\n').split('\n')).toEqual(lines);
  });

  test('flush() writes what waits at once (the server closing), and nothing twice', async () => {
    const { log, flush } = requestLog((text) => writes.push(text));
    log('a');
    await vi.advanceTimersByTimeAsync(0);
    log('b');
    log('c');
    flush();
    expect(writes).toEqual(['a', 'b\nc']);
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toEqual(['a', 'b\nc']);
  });
});
