import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { requestLog } from '../../src/cli/commands/serve/run.js';

/**
 * carbon serve's request log (README, "carbon serve"): every line written, in order; a line after
 * a quiet spell at the end of its turn; under load, the lines of 50 ms in one write. The model's
 * clock here is vitest's (setImmediate, setTimeout and performance.now all faked).
 */
/** A line as the access log makes it: its time first. */
const timed = (text: string) => `2026-11-30T12:00:00.000Z ${text}`;

describe('the request log', () => {
  let writes: string[];
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout', 'performance', 'Date'] });
    writes = [];
  });
  afterEach(() => vi.useRealTimers());

  test('a line after a quiet spell is written at the end of its turn', async () => {
    const { log } = requestLog((text) => writes.push(text));
    log(timed('first'));
    log(timed('second, same turn'));
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([`${timed('first')}\n${timed('second, same turn')}`]);
  });

  test('under load, a request a millisecond for a second is written in about twenty writes, every line once and in order', async () => {
    const { log } = requestLog((text) => writes.push(text));
    const lines = Array.from({ length: 1000 }, (_, i) => timed(`line ${i}`));
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
    log(timed('a'));
    await vi.advanceTimersByTimeAsync(0);
    log(timed('b'));
    log(timed('c'));
    flush();
    const written = [timed('a'), `${timed('b')}\n${timed('c')}`];
    expect(writes).toEqual(written);
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toEqual(written);
  });

  test('a line without its time (the start, the stop, an outage, an error) is given it, as the access lines have theirs', async () => {
    vi.setSystemTime(Date.UTC(2026, 10, 30, 9, 30, 0, 5));
    const { log, flush } = requestLog((text) => writes.push(text));
    log('SIGTERM: closing (send it again to stop at once)');
    log(timed('GET /api/v1/balance 200 0.4ms key=ck_test_...abcd req_1'));
    flush();
    expect(writes).toEqual([
      `2026-11-30T09:30:00.005Z SIGTERM: closing (send it again to stop at once)\n${timed('GET /api/v1/balance 200 0.4ms key=ck_test_...abcd req_1')}`,
    ]);
  });
});
