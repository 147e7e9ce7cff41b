import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { openLocal } from '../../src/engine/local.js';
import { tempDirs } from '../support/temp.js';

const dirs = tempDirs('carbon-two-connections-');
afterAll(() => dirs.removeAll());

/**
 * The library opened twice on one directory in one process (two modules of an app each calling
 * openLocal): their purchases at once all go through, each exactly once. Before, the second's
 * BEGIN waited in SQLite's busy handler, which sleeps on the one thread the first's commit needed:
 * the process stood still for the busy timeout (5 s), then the second failed "locked by another process".
 */
test('purchases through two clients on one directory, all at once: every one made, once, and the books add up', async () => {
  const dir = dirs.make();
  const a = await openLocal(dir);
  const b = await openLocal(dir);
  try {
    const before = (await a.client.balance()).available_cents;
    const buys = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).client.buy({ kg: 1 }, { idempotencyKey: `two-${i}` }));
    const settled = await Promise.allSettled(buys);
    expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
    const made = settled.map((s) => (s as PromiseFulfilledResult<{ offset: { id: string; amount_cents: number } }>).value.offset);
    expect(new Set(made.map((o) => o.id)).size).toBe(20);
    const spent = made.reduce((sum, o) => sum + o.amount_cents, 0);
    expect((await b.client.balance()).available_cents).toBe(before - spent);
  } finally {
    await a.client.close();
    await b.client.close();
  }
}, 30_000);

/**
 * One of the two closed, then another process opens and closes the ledger: the one still open goes
 * on. Before, the close dropped the process's locks on the file (POSIX locks are the process's, and
 * closing any descriptor drops them), so the other process, taking itself for the last, deleted the
 * log under the one still open, and every write of that one was refused.
 */
test('one of two clients closed, another process in and out: the other client goes on buying, its log where it was', async () => {
  const dir = dirs.make();
  const a = await openLocal(dir);
  const b = await openLocal(dir);
  try {
    await a.client.buy({ kg: 1 });
    await b.client.buy({ kg: 1 });
    await a.client.close();
    // Another process opens the ledger, reads and closes: the last close of all deletes the log, and only that.
    execFileSync(process.execPath, [
      '-e',
      "const db = new (require('node:sqlite').DatabaseSync)(process.argv[1]); db.prepare('SELECT 1').get(); db.close();",
      join(dir, 'ledger.db'),
    ]);
    expect(existsSync(join(dir, 'ledger.db-wal'))).toBe(true);
    expect((await b.client.buy({ kg: 2 })).offset.kg).toBe(2);
  } finally {
    await b.client.close();
  }
}, 30_000);
