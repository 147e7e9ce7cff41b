import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, ok } from './helpers.js';

/** `carbon report`: kg and dollars per period or reference, over a span, in every format. */

const newHome = homes();

/** Purchases spread over months of model time: two now, one refunded, one 40 days on. */
async function ledger(): Promise<{ home: string; first: string }> {
  const home = newHome();
  const first = (await json<{ created: string }>(['buy', '--kg', '100', '--reference', 'ops-a'], { home })).created.slice(0, 10);
  await ok(['buy', '--kg', '200', '--reference', 'dev-x'], { home });
  const gone = await json<{ id: string }>(['buy', '--kg', '999', '--reference', 'ops-gone'], { home });
  await ok(['sandbox', 'fail', gone.id], { home });
  await ok(['sandbox', 'clock', 'advance', '40d'], { home });
  await ok(['buy', '--kg', '50', '--reference', 'ops-b'], { home });
  return { home, first };
}

describe('carbon report', () => {
  test('by month (the default), as JSON: totals without the refunded offset, placed and processing apart', async () => {
    const { home } = await ledger();
    const r = await json<{ object: string; by: string; rows: Array<{ group: string; kg: number; amount_cents: number; placed_kg: number; processing_kg: number }>; total: { kg: number; amount_cents: number; offsets: number } }>(['report'], { home });
    expect([r.object, r.by]).toEqual(['report', 'month']);
    expect(r.rows).toHaveLength(2);
    expect(r.rows.map((x) => x.kg)).toEqual([300, 50]);
    expect(r.rows[0]).toMatchObject({ placed_kg: 300, processing_kg: 0, amount_cents: 1200 });
    expect(r.rows[1]).toMatchObject({ placed_kg: 0, processing_kg: 50, amount_cents: 200 });
    expect(r.total).toMatchObject({ kg: 350, amount_cents: 1400, offsets: 3 });
  });

  test('by reference with a prefix, in Markdown and CSV; a span with --since and --until', async () => {
    const { home, first } = await ledger();
    const md = await ok(['report', '--by', 'reference', '--prefix-sep', '-', '--format', 'md'], { home });
    expect(md.stdout).toContain('| dev | 1 | 200 | 200 | 0 | $8.00 |');
    expect(md.stdout).toContain('| ops | 2 | 150 | 100 | 50 | $6.00 |');
    expect(md.stdout).toContain('| **total** | 3 | 350 | 300 | 50 | $14.00 |');
    const csv = await ok(['report', '--by', 'reference', '--format', 'csv'], { home });
    expect(csv.stdout.split('\r\n')[0]).toBe('reference,offsets,kg,placed_kg,processing_kg,amount_cents');
    expect(csv.stdout).toContain('dev-x,1,200,200,0,800\r\n');
    const span = await json<{ total: { kg: number } }>(['report', '--since', first, '--until', first], { home });
    expect(span.total.kg).toBe(300);
  });

  test('on a terminal: a table with a bar per row and the total; in a pipe: tab-separated rows', async () => {
    const { home } = await ledger();
    const tty = await carbonTty(['report', '--by', 'quarter'], { home, env: { FORCE_COLOR: '0' } });
    expect(tty.exitCode).toBe(0);
    expect(tty.output).toMatch(/█/);
    expect(tty.output).toMatch(/^total +3 +350 kg +\$14\.00$/m);
    const plain = await ok(['report', '--by', 'quarter'], { home });
    for (const line of plain.stdout.trim().split('\n')) expect(line.split('\t')).toHaveLength(6);
  });

  test.each([
    [['report', '--by', 'day'], /--by|day/],
    [['report', '--since', '2026-13-01'], /--since must be a day/],
    [['report', '--since', '2027-01-02', '--until', '2027-01-01'], /--since must come before --until/],
    [['report', '--prefix-sep', '-'], /goes with --by reference/],
  ])('%j is a usage error (exit 2)', async (args, says) => {
    const r = await carbon(args, { home: newHome() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(says);
  });
});
