import { describe, expect, test } from 'vitest';
import { PgReadCache } from '../../src/store/postgres/pg-cache.js';
import type { Queryable } from '../../src/store/postgres/pg-reads.js';

/**
 * PostgreSQL's kept reads (pg-cache.ts) against a pool whose answers this test releases: a check
 * that began before a commit of this process (through this store or another on the same ledger)
 * read the ledger as it was before it, and must not answer a read that follows the commit (the
 * contract's "setStatus('active') then GET /balance" saw 403 once in a full run, and again in a
 * CI run after the first fix, which covered this store's own commits only).
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

  test('another store of this process commits while a check is out: a read after that commit, in the same turn, checks again', async () => {
    // The contract's shape: the service on one engine, `sandbox.setStatus` through a second engine
    // on the same ledger, in this process. Before: the served engine's check, sent while the other's
    // COMMIT was on its way, answered the GET that followed it (403 for an account made active).
    const served = pool();
    const cache = new PgReadCache(served.q);
    const other = new PgReadCache(pool().q);
    const before = cache.fresh();
    expect(served.pending).toHaveLength(1);
    // The other engine's COMMIT comes back (the account made active) in the turn the check was sent.
    other.committed(false);
    const after = cache.fresh();
    await Promise.resolve();
    expect(served.pending).toHaveLength(2);
    served.pending.shift()!('suspended');
    expect((await before).account?.status).toBe('suspended');
    served.pending.shift()!('active');
    expect((await after).account?.status).toBe('active');
  });
});
