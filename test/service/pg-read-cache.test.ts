import { describe, expect, test } from 'vitest';
import { PgReadCache } from '../../src/store/postgres/pg-cache.js';
import type { Queryable } from '../../src/store/postgres/pg-reads.js';

/**
 * PostgreSQL's kept reads (pg-cache.ts) against a pool whose answers this test releases: a check
 * that began before this process's own commit read the ledger as it was before it, and must not
 * answer a read that follows the commit (the contract's "setStatus('active') then GET /balance"
 * saw 403 once in a full run).
 */

function pool() {
  const pending: Array<(status: string) => void> = [];
  const q: Queryable = {
    query: <R extends object>() =>
      new Promise<{ rows: R[]; rowCount: number }>((resolve) => {
        pending.push((status) => {
          const version = status === 'suspended' ? 1 : 2;
          const row = { version, keys_version: 1, id: 1, status, rate: 4000, review_limit_cents: 0, clock_offset_ms: 0 };
          resolve({
            rows: [{ ...row, rate_limit_requests: 100, rate_limit_window_ms: 1000, test: 0, live: 0 } as unknown as R],
            rowCount: 1,
          });
        });
      }),
  };
  return { q, pending };
}

describe('PostgreSQL kept reads and this process’s commits', () => {
  test('a check begun before a commit answers its own readers only; a read after the commit checks again', async () => {
    const { q, pending } = pool();
    const cache = new PgReadCache(q);
    // A read before the commit: its check is sent, and reads the ledger as it was (suspended).
    const before = cache.fresh();
    expect(pending).toHaveLength(1);
    // This process commits (the account made active), then its check's old answer arrives.
    cache.committed(false);
    pending.shift()!('suspended');
    expect((await before).account?.status).toBe('suspended');
    // In the same drain of microtasks, a read that follows the commit: a check of its own.
    const after = cache.fresh();
    await Promise.resolve();
    expect(pending).toHaveLength(1);
    pending.shift()!('active');
    expect((await after).account?.status).toBe('active');
  });
});
