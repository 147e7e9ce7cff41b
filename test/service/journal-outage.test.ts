import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { monotonicUs } from '../../src/platform/host.js';
import { Journal } from '../../src/service/journal.js';
import { JOURNAL_DEFAULTS } from '../../src/service/journal-settings.js';
import { LedgerError } from '../../src/store/ledger-error.js';
import type { LedgerStore } from '../../src/store/port.js';
import { T0 } from '../support/world.js';

/**
 * What the request journal says of the entries an outage dropped (docs/reliability.md, "The request
 * journal"), and when: once the ledger answers again, with no request after the outage (a quiet
 * sandbox), not at the next request or the server's stop. The ledger here is one that stops
 * answering and starts again when the test says; vitest's clock drives the journal's timers.
 */

/** A ledger the test takes down and brings back: while down, every write and check fails as a stall's does. */
function ledger() {
  const state = { down: false, written: 0, checks: 0 };
  const unavailable = () => new LedgerError('the database did not answer in time', 'postgres://ledger', 'try again', true);
  const store = {
    label: 'postgres://ledger',
    account: async () => {
      if (state.down) throw unavailable();
      return null;
    },
    appendJournal: async (records: unknown[]) => {
      if (state.down) throw unavailable();
      state.written += records.length;
    },
    health: async () => {
      state.checks++;
      return { ok: !state.down };
    },
  };
  return { state, store: store as unknown as LedgerStore };
}

describe('entries the ledger did not take, said once it answers again', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => vi.useRealTimers());

  const opened = (store: LedgerStore) => {
    const lines: string[] = [];
    const journal = new Journal(
      store,
      { ...JOURNAL_DEFAULTS, instance: 'test:1', flushMs: 50, probeMs: 1000, log: (l) => lines.push(l) },
      () => T0,
    );
    const answer = (i: number) =>
      journal.record(
        `req_${i}`,
        { method: 'GET', path: '/api/v1/nope', query: {}, headers: {}, body: '' },
        { status: 404, headers: {}, body: { error: { code: 'resource_missing' } } },
        journal.trace(),
      );
    return { journal, lines, answer };
  };

  test('three requests dropped in an outage: the line comes within a check of its end, with no request after it', async () => {
    const { state, store } = ledger();
    const { journal, lines, answer } = opened(store);
    state.down = true;
    for (const i of [1, 2, 3]) answer(i);
    // A write that must not wait (carbon logs reading, as a stop's does) meets the outage: dropped.
    await journal.flush();
    expect(journal.dropped).toBe(3);
    // While the ledger still does not answer, nothing is said: one line an outage, at its end.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lines).toEqual([]);
    const whileDown = state.checks;
    // The outage ends; no request comes. Before, the line waited for the next request or the stop.
    state.down = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(lines).toEqual([
      'the request journal dropped 3 entries the ledger did not take (requests answered from 2030-01-15T12:00:00.000Z to 2030-01-15T12:00:00.000Z): carbon logs will not show them',
    ]);
    // Asked a second while down (a check at a time); said once, the checks stop with it, and the close says nothing more.
    expect(whileDown).toBe(10);
    const checks = state.checks;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.checks).toBe(checks);
    await journal.close();
    expect(lines).toHaveLength(1);
  });

  test('a journal closed during the outage says the line at its close, and asks nothing after', async () => {
    const { state, store } = ledger();
    const { journal, lines, answer } = opened(store);
    state.down = true;
    answer(1);
    await journal.flush();
    await journal.close();
    expect(lines).toEqual([expect.stringMatching(/^the request journal dropped 1 entry the ledger did not take/)]);
    const checks = state.checks;
    state.down = false;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.checks).toBe(checks);
    expect(lines).toHaveLength(1);
  });

  test('a stall under load holds at most 2,000 entries in memory: the rest are dropped and said, not kept', async () => {
    // A ledger whose writes hang until their deadline and then fail, as a stalled PostgreSQL's do.
    const state = { stalled: true, written: 0 };
    const store = {
      label: 'postgres://ledger',
      account: async () => null,
      appendJournal: (records: unknown[]) =>
        new Promise<void>((resolve, reject) => {
          if (!state.stalled) {
            state.written += records.length;
            resolve();
          } else
            setTimeout(() => reject(new LedgerError('the database did not answer in time', 'postgres://ledger', 'try again', true)), 4_000);
        }),
      health: async () => ({ ok: !state.stalled }),
    } as unknown as LedgerStore;
    const { journal, lines, answer } = opened(store);
    // The first hundred start a write, which hangs; ten thousand more are answered meanwhile: 2,000 wait.
    for (let i = 0; i < 10_100; i++) answer(i);
    expect(journal.dropped).toBe(8_000);
    await vi.advanceTimersByTimeAsync(4_000);
    state.stalled = false;
    await journal.flush();
    // Before: all ten thousand waited in memory, and were written once the ledger answered.
    expect(state.written).toBeLessThanOrEqual(2_000);
    expect(state.written + journal.dropped).toBe(10_100);
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^the request journal dropped ${journal.dropped} entries the ledger did not take`)),
    ]);
  });
});

describe("a command's end, with another process holding the lock", () => {
  test('waits EXITING_WAIT_MS in all, however many batches are left: each waits only what is left of it', async () => {
    // A ledger locked by another process: a write waits as long as it is told to, then gives up.
    const waits: number[] = [];
    const store = {
      label: 'ledger.db',
      account: async () => null,
      appendJournal: async (_records: unknown[], _retention: unknown, options: { waitMs?: number } = {}) => {
        const waitMs = options.waitMs ?? Number.POSITIVE_INFINITY;
        waits.push(waitMs);
        // Until the clock the journal reads has moved that far (a timer may fire a little early).
        const until = monotonicUs() + Math.min(waitMs, 60_000) * 1000;
        while (monotonicUs() < until) await new Promise((resolve) => setTimeout(resolve, Math.ceil((until - monotonicUs()) / 1000)));
        throw new LedgerError('the ledger is locked by another process', 'ledger.db', 'try again', true, true);
      },
      health: async () => ({ ok: true }),
    } as unknown as LedgerStore;
    const journal = new Journal(store, { ...JOURNAL_DEFAULTS, instance: 'test:1', flushMs: 3_600_000 }, () => T0);
    // 1,800 answers: a backlog goes a thousand a batch, so three batches are tried, two of them at the end.
    for (let i = 0; i < 1_800; i++) {
      journal.record(
        `req_${i}`,
        { method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' },
        { status: 200, headers: {}, body: { object: 'balance' } },
        journal.trace(),
      );
    }
    await journal.close({ exiting: true });
    expect(journal.dropped).toBe(1_800);
    expect(waits.filter((w) => w > 0)).not.toHaveLength(0);
    expect(waits.length).toBeGreaterThanOrEqual(3);
    // Before: each batch waited the whole 250 ms (1,000 ms here).
    expect(waits.reduce((sum, w) => sum + w, 0)).toBeLessThanOrEqual(250);
  });
});

describe("a ledger that refuses the account's read for good (a right on its tables taken away)", () => {
  test('the requests it refused are still written, at the clock an entry of the batch was answered under, and nothing is dropped', async () => {
    const written: Array<{ request_id: string; model_ms: number; real_ms: number }> = [];
    const store = {
      label: 'postgres://ledger',
      // 42501 on the balances the account's read brings back: not passing, a person mends it.
      account: async () => {
        throw new LedgerError("refused carbon's user (42501: permission denied for table balances)", 'postgres://ledger', 'grant', false);
      },
      appendJournal: async (records: typeof written) => {
        written.push(...records);
      },
      health: async () => ({ ok: true }),
    } as unknown as LedgerStore;
    const lines: string[] = [];
    const journal = new Journal(store, { ...JOURNAL_DEFAULTS, instance: 'test:1', flushMs: 50, log: (l) => lines.push(l) }, () => T0);
    const request = { method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' };
    const refused = { status: 503, headers: {}, body: { error: { code: 'service_unavailable' } } };
    // One answered after the account was read, its model time an hour on (the sandbox's clock moved); one refused before.
    journal.record('req_timed', request, { status: 200, headers: {}, body: {} }, { ...journal.trace(), now: T0 + 3_600_000 });
    journal.record('req_refused', request, refused, journal.trace());
    await journal.flush();
    expect([journal.dropped, lines]).toEqual([0, []]);
    expect(written.map((n) => [n.request_id, n.model_ms - n.real_ms])).toEqual([
      ['req_timed', 3_600_000],
      ['req_refused', 3_600_000],
    ]);
    await journal.close();
  });
});
