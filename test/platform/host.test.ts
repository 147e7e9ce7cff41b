import { hostname } from 'node:os';
import { describe, expect, test } from 'vitest';
import { hostName, monotonicUs } from '../../src/platform/host.js';

// The machine's name and a clock without node:os or node:perf_hooks (src/platform/host.ts).
describe('host', () => {
  test("hostName() is node:os's hostname(), read once", () => {
    expect(hostName()).toBe(hostname());
    expect(hostName()).toBe(hostName());
  });

  test('monotonicUs() counts whole microseconds, as performance.now() does in milliseconds', () => {
    const a = monotonicUs();
    const p = performance.now();
    while (performance.now() - p < 2);
    const b = monotonicUs();
    expect(Number.isInteger(a)).toBe(true);
    expect(b - a).toBeGreaterThanOrEqual(2000);
    expect(b - a).toBeLessThan(60_000_000);
  });
});
