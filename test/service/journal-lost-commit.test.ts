import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { Journal } from '../../src/service/journal.js';
import { JOURNAL_DEFAULTS } from '../../src/service/journal-settings.js';
import { journalQuery, NO_FILTER } from '../../src/service/journal-view.js';
import { LedgerError } from '../../src/store/ledger-error.js';
import { openStore } from '../../src/store/open.js';
import type { LedgerStore } from '../../src/store/port.js';
import { T0 } from '../support/world.js';

/**
 * A batch of the journal whose COMMIT was made but whose answer was lost (PostgreSQL's connection cut
 * right after it): the journal tries the batch again, and must not write its entries a second time.
 * Before, each of them was in the journal twice (`carbon logs --request-id` printed two entries).
 */
const dir = mkdtempSync(join(tmpdir(), 'carbon-lost-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a batch committed with its answer lost is not written again; the entries after it are', async () => {
  const real = await openStore({ kind: 'sqlite', dir });
  const calls = { append: 0, lose: 1 };
  // The ledger itself, but the first append's answer is lost after it committed.
  const store = Object.create(real) as LedgerStore;
  store.appendJournal = async (...args) => {
    calls.append++;
    await real.appendJournal(...args);
    if (calls.lose-- > 0) throw new LedgerError('Connection terminated unexpectedly (57P01).', 'postgres://ledger', 'Try again.', true);
  };
  const journal = new Journal(store, { ...JOURNAL_DEFAULTS, instance: 'test:1', flushMs: 5, log: () => {} }, () => T0);
  const answer = (i: number) =>
    journal.record(
      `req_${i}`,
      { method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' },
      { status: 200, headers: {}, body: {} },
      journal.trace(),
    );
  try {
    for (const i of [1, 2, 3]) answer(i);
    // The lost answer, then the batch tried again (the next write, with what came meanwhile).
    await vi.waitFor(() => expect(calls.append).toBeGreaterThanOrEqual(2));
    answer(4);
    await journal.flush();
    const ids = (await real.journal(journalQuery({ ...NO_FILTER, limit: 100 }))).map((e) => e.request_id);
    expect(ids.toSorted()).toEqual(['req_1', 'req_2', 'req_3', 'req_4']);
  } finally {
    await real.close();
  }
});
