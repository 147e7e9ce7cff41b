import { randomUUID as nodeRandomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { randomBytes, randomUUID } from '../../src/platform/random.js';

describe('random bytes from the OS without node:crypto', () => {
  test('as many bytes as asked, different every time, every byte value reachable', () => {
    for (const size of [0, 1, 16, 4096]) expect(randomBytes(size)).toHaveLength(size);
    const a = randomBytes(32);
    const b = randomBytes(32);
    expect(a.equals(b)).toBe(false);
    // 64 KiB of uniform bytes holds every value 0–255 (missing one has odds below 2^-360).
    expect(new Set(randomBytes(65_536)).size).toBe(256);
  });

  test('UUIDs are version 4, variant 1, as crypto.randomUUID() makes them, and do not repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = randomUUID();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
    // The same shape as node's own: 36 characters, the version and dashes in the same places.
    const shape = (s: string) => s.replace(/[0-9a-f]/g, 'x').slice(0, 14) + s.slice(14, 15) + s.replace(/[0-9a-f]/g, 'x').slice(15);
    expect(shape(randomUUID())).toBe(shape(nodeRandomUUID()));
  });
});
