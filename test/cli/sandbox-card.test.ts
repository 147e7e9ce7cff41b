import { describe, expect, it } from 'vitest';
import { makePaint } from '../../src/cli/render/paint.js';
import { statusCard } from '../../src/cli/render/sandbox.js';
import { stripAnsi } from '../../src/cli/render/width.js';
import type { SandboxStatus } from '../../src/service/sandbox.js';

const STATUS: SandboxStatus = {
  account: { status: 'active', rate: 4000, review_limit_cents: 500_000, rate_limit_requests: null, rate_limit_window_ms: 1000 },
  clock: { now: '2030-01-15T12:00:00.000Z', offset_ms: 0 },
  balances: { test: 100_000, live: 0 },
  impact: { test: { placed_kg: 0, processing_kg: 250, offsets: 1 }, live: { placed_kg: 0, processing_kg: 0, offsets: 0 } },
  faults: null,
};

/** Where each line's value starts: after the label and the two spaces that follow the widest. */
const valueColumns = (card: string) =>
  stripAnsi(card)
    .trimEnd()
    .split('\n')
    .map((line) => /^\S+(?: \S+)?\s{2,}/.exec(line)![0].length);

describe('carbon sandbox status on a terminal', () => {
  it.each([false, true])('lines every value up in one column, with colour %s', (colour) => {
    const columns = valueColumns(statusCard(STATUS, makePaint(colour)));
    expect(columns).toHaveLength(10);
    expect(new Set(columns)).toEqual(new Set([columns[0]]));
  });
});
