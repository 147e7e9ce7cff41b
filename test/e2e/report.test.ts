import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, ok, plain, serve, TTY } from '../support/cli.js';
import { headerless } from '../support/headerless-proxy.js';

/** `carbon report`: kg and dollars per period or reference, over a span, in every format. */

const newHome = homes();

/** The months from the one of `from` to the one of `to` (ISO times or YYYY-MM), as YYYY-MM. */
function monthsFrom(from: string, to: string): string[] {
  const out: string[] = [];
  let [y, m] = from.split('-').map(Number) as [number, number];
  for (let name = from.slice(0, 7); name <= to.slice(0, 7); name = `${y}-${String(m).padStart(2, '0')}`) {
    out.push(name);
    [y, m] = m === 12 ? [y + 1, 1] : [y, m + 1];
  }
  return out;
}

/** The month `n` months from that of `time`, as YYYY-MM. */
function shiftMonth(time: string, n: number): string {
  const [y, m] = time.split('-').map(Number) as [number, number];
  const i = y * 12 + m - 1 + n;
  return `${Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}`;
}

/**
 * Purchases spread over months of model time: two now, one refunded, one 40 days on. In live
 * mode, every purchase held for review (a limit of $0): each status is what the test made it
 * (approved: placed; failed: refunded; left: processing), never what seconds of real time did.
 */
async function ledger(): Promise<{ home: string; first: string; last: string }> {
  const home = newHome();
  await ok(['config', 'set', 'mode', 'live'], { home });
  await ok(['sandbox', 'topup', '250'], { home });
  await ok(['sandbox', 'review-limit', '0'], { home });
  const buy = (kg: string, reference: string) =>
    json<{ id: string; created: string }>(['buy', '--kg', kg, '--reference', reference, '--yes'], { home });
  const a = await buy('100', 'ops-a');
  const first = a.created.slice(0, 10);
  const x = await buy('200', 'dev-x');
  for (const placed of [a, x]) await ok(['sandbox', 'review', 'approve', placed.id], { home });
  const gone = await buy('999', 'ops-gone');
  await ok(['sandbox', 'fail', gone.id], { home });
  await ok(['sandbox', 'clock', 'advance', '40d'], { home });
  const b = await buy('50', 'ops-b');
  return { home, first, last: b.created.slice(0, 10) };
}

describe('carbon report', () => {
  test('by month (the default), as JSON: totals without the refunded offset, placed and processing apart', async () => {
    const { home } = await ledger();
    const r = await json<{
      object: string;
      by: string;
      rows: Array<{ group: string; kg: number; amount_cents: number; placed_kg: number; processing_kg: number }>;
      total: { kg: number; amount_cents: number; offsets: number };
    }>(['report'], { home });
    expect([r.object, r.by]).toEqual(['report', 'month']);
    // 40 days on is the next month or the one after (then the one between is a row of zeros).
    expect(r.rows.length).toBeGreaterThanOrEqual(2);
    expect(r.rows.map((x) => x.kg).filter((kg) => kg > 0)).toEqual([300, 50]);
    expect(r.rows[0]).toMatchObject({ placed_kg: 300, processing_kg: 0, amount_cents: 1200 });
    expect(r.rows.at(-1)).toMatchObject({ placed_kg: 0, processing_kg: 50, amount_cents: 200 });
    expect(r.total).toMatchObject({ kg: 350, amount_cents: 1400, offsets: 3 });
  });

  test('by reference with a prefix, in Markdown and CSV; a span with --since and --until', async () => {
    const { home, first } = await ledger();
    const md = await ok(['report', '--by', 'reference', '--prefix-sep', '-', '--format', 'md'], { home });
    expect(md.stdout).toContain('| dev | 1 | 200 | 200 | 0 | \\$8.00 |');
    expect(md.stdout).toContain('| ops | 2 | 150 | 100 | 50 | \\$6.00 |');
    expect(md.stdout).toContain('| **total** | 3 | 350 | 300 | 50 | \\$14.00 |');
    // Read apart from its command, the grouping is said: `ops` is a prefix, not a reference of its own.
    expect(md.stdout).toContain('references grouped by the part before "-"');
    const html = (await ok(['report', '--by', 'reference', '--prefix-sep', '-', '--format', 'html'], { home })).stdout;
    expect(html).toContain('<h1>Carbon offsets by reference, the part before &#34;-&#34;</h1>');
    const csv = await ok(['report', '--by', 'reference', '--format', 'csv'], { home });
    // The local engine's report says, on every row, that the purchases were the sandbox's.
    expect(csv.stdout.split('\r\n')[0]).toBe('reference,offsets,kg,placed_kg,processing_kg,amount_cents,livemode,environment');
    expect(csv.stdout).toContain('dev-x,1,200,200,0,800,true,sandbox: not a real purchase\r\n');
    const span = await json<{ total: { kg: number } }>(['report', '--since', first, '--until', first], { home });
    expect(span.total.kg).toBe(300);
    // Read apart from its command, a report says what it counts: JSON its separator, Markdown its mode and span.
    expect(await json(['report', '--by', 'reference', '--prefix-sep', '-'], { home })).toMatchObject({ by: 'reference', prefix_sep: '-' });
    expect(await json(['report', '--by', 'reference'], { home })).toMatchObject({ prefix_sep: null });
    // The HTML page's headline keeps what is still processing apart from what is placed.
    expect((await ok(['report', '--format', 'html'], { home })).stdout).toContain(
      '<caption>350 kg bought for $14.00 in 3 purchases: 300 kg placed, 50 kg processing</caption>',
    );
    const spanMd = await ok(['report', '--since', first, '--until', first, '--format', 'md', '--live'], { home });
    expect(spanMd.stdout).toContain(
      `\n\n*live mode; placed and processing offsets, refunded ones left out; months in UTC; from ${first}; until ${first}.*\n`,
    );
  });

  test("a reference a spreadsheet would run as a formula is written with a leading ' in the report's CSV, and in a batch's results", async () => {
    const home = newHome();
    const rows = join(home, 'formulas.csv');
    writeFileSync(rows, 'kg,reference\n5,=1+1\n6,@SUM(A1)\n7,-2+3\n');
    /** Column `at` of the three rows after the header. */
    const column = (csv: string, at: number) =>
      csv
        .split('\r\n')
        .slice(1, 4)
        .map((line) => line.split(',')[at]);
    expect(column((await ok(['buy', '--from-csv', rows], { home })).stdout, 5)).toEqual(["'=1+1", "'@SUM(A1)", "'-2+3"]);
    expect(column((await ok(['report', '--by', 'reference', '--format', 'csv'], { home })).stdout, 0)).toEqual([
      "'-2+3",
      "'@SUM(A1)",
      "'=1+1",
    ]);
    // --json keeps each as it was sent.
    const asJson = await json<{ rows: Array<{ group: string }> }>(['report', '--by', 'reference'], { home });
    expect(asJson.rows.map((r) => r.group)).toEqual(['-2+3', '@SUM(A1)', '=1+1']);
  });

  test('--since today and --until yesterday are days of the model clock (moved 40 days on), printed as dates', async () => {
    const { home, last: today } = await ledger();
    const recent = await json<{ since: string; total: { kg: number } }>(['report', '--since', 'today'], { home });
    expect(recent).toMatchObject({ since: today, total: { kg: 50 } });
    const before = await json<{ until: string; total: { kg: number } }>(['report', '--until', 'yesterday'], { home });
    expect(before.total.kg).toBe(300);
    expect(Date.parse(before.until)).toBe(Date.parse(today) - 86_400_000);
    const md = await ok(['report', '--since', 'yesterday', '--format', 'md'], { home });
    expect(md.stdout).toContain('| **total** | 1 | 50 | 0 | 50 | \\$2.00 |');
  });

  test('on a terminal: a table with a bar per row and the total; in a pipe: tab-separated rows', async () => {
    const { home } = await ledger();
    const tty = await carbonTty(['report', '--by', 'quarter'], { home, env: { FORCE_COLOR: '0' } });
    expect(tty.exitCode).toBe(0);
    expect(tty.output).toMatch(/█/);
    expect(tty.output).toMatch(/^total +3 +350 kg +300 kg +50 kg +\$14\.00$/m);
    const plain = await ok(['report', '--by', 'quarter'], { home });
    for (const line of plain.stdout.trim().split('\n')) expect(line.split('\t')).toHaveLength(6);
    // In colour, a bar's placed kg green and its processing kg yellow, as the statuses are (50 of the 350 kg are processing).
    const coloured = await carbonTty(['report', '--by', 'quarter'], { home, env: TTY });
    expect(coloured.output).toMatch(/\u001b\[32m█+\u001b\[39m/);
    expect(coloured.output).toMatch(/\u001b\[33m█+\u001b\[39m/);
  });

  test('the HTML page is made at the model clock\'s time, as its "today" is: a sandbox moved on is not made before its purchases', async () => {
    const home = newHome();
    await ok(['sandbox', 'clock', 'advance', '400d'], { home });
    const bought = await json<{ created: string }>(['buy', '--kg', '5'], { home });
    const html = (await ok(['report', '--format', 'html', '--since', 'today'], { home })).stdout;
    const clock = await json<{ now: string }>(['sandbox', 'clock'], { home });
    const made = /<time datetime="([^"]+)">([^<]+)<\/time>/.exec(html);
    expect(made).not.toBeNull();
    const at = Date.parse(made![1]!);
    expect(at).toBeGreaterThanOrEqual(Date.parse(bought.created));
    expect(at).toBeLessThanOrEqual(Date.parse(clock.now));
    expect(made![2]).toBe(`${made![1]!.slice(0, 10)} ${made![1]!.slice(11, 19)} UTC`);
  });

  test('a span given as an age: the JSON report names its moment, the HTML page the same moment to the minute', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    const { since } = await json<{ since: string }>(['report', '--since', '7d'], { home });
    expect(since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const html = (await ok(['report', '--format', 'html', '--since', '7d'], { home })).stdout;
    const shown = /Span: ([^<]+)</.exec(html)![1]!;
    // The page is made a moment after the JSON: the same minute, or the next.
    expect(shown).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC to today$/);
    expect(Math.abs(Date.parse(`${shown.slice(0, 16).replace(' ', 'T')}:00Z`) - Date.parse(since))).toBeLessThan(120_000);
  });

  test("periods are UTC's, whatever TZ says, and the table and the HTML page say so: an offset bought an hour before a month ends in UTC", async () => {
    const home = newHome();
    // The model's clock moved to an hour before the end of next month in UTC (next month's, not
    // this one's, which has passed in this month's last hour): the month after's afternoon in
    // Kiritimati (UTC+14), the same month's afternoon in Los Angeles.
    const { now } = await json<{ now: string }>(['sandbox', 'clock'], { home });
    const at = new Date(now);
    const end = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 2, 1) - 3_600_000;
    await ok(['sandbox', 'clock', 'advance', `${end - at.getTime()}ms`], { home });
    const bought = await json<{ created: string }>(['buy', '--kg', '10', '--yes'], { home });
    const month = bought.created.slice(0, 7);
    expect(month).toBe(new Date(end).toISOString().slice(0, 7));
    // Placed now (3 s of the model's clock), still in that month: the reports below, seconds of
    // real time apart, read one state, not processing in one and placed in the next.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    for (const by of ['month', 'week', 'quarter']) {
      const utc = (await ok(['report', '--by', by, '--format', 'csv'], { home, env: { TZ: 'UTC' } })).stdout;
      for (const TZ of ['America/Los_Angeles', 'Pacific/Kiritimati', 'Asia/Kathmandu'])
        expect((await ok(['report', '--by', by, '--format', 'csv'], { home, env: { TZ } })).stdout, `${by} ${TZ}`).toBe(utc);
    }
    const csv = (await ok(['report', '--format', 'csv'], { home, env: { TZ: 'Pacific/Kiritimati' } })).stdout;
    expect(csv.split('\r\n')[1]).toMatch(new RegExp(`^${month},1,10,10,0,`));
    const tty = await carbonTty(['report'], { home, env: { ...TTY, TZ: 'Pacific/Kiritimati' }, columns: 160 });
    expect(plain(tty.output)).toMatch(/refunded ones left out; months in UTC\./);
    const weeks = await carbonTty(['report', '--by', 'week'], { home, env: TTY, columns: 160 });
    expect(plain(weeks.output)).toMatch(/; ISO weeks \(Monday to Sunday\) in UTC\./);
    const html = (await ok(['report', '--format', 'html', '--by', 'quarter'], { home })).stdout;
    expect(html).toContain('left out. Quarters in UTC. Amounts in US dollars');
    const byReference = (await ok(['report', '--format', 'html', '--by', 'reference'], { home })).stdout;
    expect(byReference).not.toContain('in UTC.');
  });

  test("the HTML chart cuts a long reference between characters a reader sees, never inside an emoji or a flag (no '�' on the page)", async () => {
    const home = newHome();
    const globes = `a${'🌍'.repeat(20)}`;
    const flags = `trip ${'🇬🇧'.repeat(8)} London`;
    for (const reference of [globes, flags]) await ok(['buy', '--kg', '10', '--reference', reference], { home });
    const html = (await ok(['report', '--by', 'reference', '--format', 'html'], { home })).stdout;
    expect(html).not.toContain('\uFFFD');
    // Cut to the label's room, an emoji or a flag drawn as wide as a CJK character; isolated (U+2068 … U+2069).
    const labels = [...html.matchAll(/<text x="112" [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels.sort()).toEqual([`\u2068a${'🌍'.repeat(8)}…\u2069`, `\u2068trip ${'🇬🇧'.repeat(6)}…\u2069`].sort());
    // The table has the references whole.
    for (const reference of [globes, flags]) expect(html).toContain(`<th scope="row" class="reference">${reference}</th>`);
  });

  test('by reference: a key pasted into a reference is masked where a person reads the report (a terminal, Markdown, HTML), kept in its data (JSON, CSV, a pipe)', async () => {
    const home = newHome();
    const secret = 't6OScJLbnvMIkK278EbeBoJorBHRPRJE';
    await ok(['buy', '--kg', '3', '--reference', `ci-ck_live_${secret}`], { home });
    const tty = await carbonTty(['report', '--by', 'reference'], { home, env: { FORCE_COLOR: '0' } });
    expect(tty.exitCode).toBe(0);
    expect(tty.output).toContain('ci-ck_live_…PRJE');
    for (const [format, masked] of [
      ['md', 'ci-ck\\_live\\_…PRJE'],
      ['html', 'ci-ck_live_…PRJE'],
    ] as const) {
      const r = await ok(['report', '--by', 'reference', '--format', format], { home });
      expect(r.stdout, format).toContain(masked);
      expect(r.stdout, format).not.toContain(secret.slice(0, 20));
    }
    expect(tty.output).not.toContain(secret.slice(0, 20));
    for (const format of ['json', 'csv', 'plain']) {
      expect((await ok(['report', '--by', 'reference', '--format', format], { home })).stdout, format).toContain(`ci-ck_live_${secret}`);
    }
  });

  test("by reference: groups of the same kg are in the order of their characters' code points, whatever the machine's language", async () => {
    const home = newHome();
    for (const reference of ['zebra', 'äpple', 'Zebra', 'apple', 'ıtem', 'item'])
      await ok(['buy', '--kg', '10', '--reference', reference], { home });
    const order = ['Zebra', 'apple', 'item', 'zebra', 'äpple', 'ıtem'];
    // A CI job's CSV is the same on a Swedish, Turkish or American machine: ICU orders ä after z in
    // Swedish, before it in English, and ı before i in Turkish.
    for (const LC_ALL of ['en_US.UTF-8', 'sv_SE.UTF-8', 'tr_TR.UTF-8', 'C.UTF-8']) {
      const csv = (await ok(['report', '--by', 'reference', '--format', 'csv'], { home, env: { LC_ALL } })).stdout.split('\r\n');
      expect(
        csv.slice(1, -1).map((l) => l.split(',')[0]),
        LC_ALL,
      ).toEqual(order);
      const r = await json<{ rows: Array<{ group: string }> }>(['report', '--by', 'reference'], { home, env: { LANG: LC_ALL } });
      expect(
        r.rows.map((x) => x.group),
        LC_ALL,
      ).toEqual(order);
    }
  });

  test('by reference: the offsets without one are a group of their own, never merged with a reference reading "(no reference)"', async () => {
    const home = newHome();
    for (const args of [
      ['--kg', '100', '--reference', '(no reference)'],
      ['--kg', '50'],
      ['--kg', '3', '--reference', '-lead'],
    ])
      await ok(['buy', ...args], { home });
    const r = await json<{ rows: Array<{ group: string | null; kg: number }> }>(['report', '--by', 'reference', '--prefix-sep', '-'], {
      home,
    });
    // JSON: null; a reference that starts with the separator counts as itself, never as an empty group.
    expect(r.rows.map((x) => [x.group, x.kg])).toEqual([
      ['(no reference)', 100],
      [null, 50],
      ['-lead', 3],
    ]);
    const csv = (await ok(['report', '--by', 'reference', '--format', 'csv'], { home })).stdout.split('\r\n');
    expect(csv.filter((l) => /^(\(no reference\))?,1,/.test(l)).map((l) => l.split(',').slice(0, 3))).toEqual([
      ['(no reference)', '1', '100'],
      ['', '1', '50'],
    ]);
    const rows = (await ok(['report', '--by', 'reference'], { home })).stdout.split('\n');
    expect(rows.map((l) => l.split('\t').slice(0, 3).join('|'))).toEqual(['(no reference)|1|100', '|1|50', '-lead|1|3', '']);
    const md = (await ok(['report', '--by', 'reference', '--format', 'md'], { home })).stdout;
    expect(md).toContain('| \\(no reference\\) | 1 | 100 |');
    expect(md).toContain('| *\\(no reference\\)* | 1 | 50 |');
    const html = (await ok(['report', '--by', 'reference', '--format', 'html'], { home })).stdout;
    expect(html).toContain('<th scope="row" class="reference">(no reference)</th><td class="n">1</td><td class="n">100</td>');
    expect(html).toContain('<th scope="row" class="reference"><em>(no reference)</em></th><td class="n">1</td><td class="n">50</td>');
    // On a terminal, dimmed: the reference typed so is not.
    const tty = (await carbonTty(['report', '--by', 'reference'], { home, env: TTY, columns: 160 })).output;
    expect(tty).toMatch(/^\(no reference\) +1 +100 kg/m);
    expect(tty).toMatch(/^\u001b\[2m\(no reference\)\u001b\[22m +1 +50 kg/m);
  });

  test("every month of the span is a row, one without purchases with zeros, in every format; the span is the flags', or the purchases'", async () => {
    const home = newHome();
    const first = (await json<{ created: string }>(['buy', '--kg', '100'], { home })).created;
    // 62 days on is two months on at least: one month or more between has no purchase.
    await ok(['sandbox', 'clock', 'advance', '62d'], { home });
    const last = (await json<{ created: string }>(['buy', '--kg', '7'], { home })).created;
    const months = monthsFrom(first, last);
    const gaps = months.slice(1, -1);
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    const zeros = { offsets: 0, kg: 0, placed_kg: 0, processing_kg: 0, amount_cents: 0 };
    const r = await json<{ rows: Array<{ group: string; kg: number }>; total: { kg: number; offsets: number } }>(['report'], { home });
    expect(r.rows.map((x) => x.group)).toEqual(months);
    expect(r.rows.map((x) => x.kg)).toEqual([100, ...gaps.map(() => 0), 7]);
    for (const gap of r.rows.slice(1, -1)) expect(gap).toEqual({ group: gap.group, ...zeros });
    expect(r.total).toMatchObject({ kg: 107, offsets: 2 });
    const gap = gaps[0]!;
    const csv = (await ok(['report', '--format', 'csv'], { home })).stdout.split('\r\n');
    expect(csv).toContain(`${gap},0,0,0,0,0,false,sandbox: not a real purchase`);
    expect(csv).toHaveLength(months.length + 2);
    expect((await ok(['report', '--format', 'md'], { home })).stdout).toContain(`| ${gap} | 0 | 0 | 0 | 0 | \\$0.00 |`);
    expect((await ok(['report'], { home })).stdout).toContain(`${gap}\t0\t0\t0\t0\t0\n`);
    const html = (await ok(['report', '--format', 'html'], { home })).stdout;
    expect(html).toContain(`<tr><th scope="row">${gap}</th><td class="n">0</td>`);
    // On a terminal the month is there, without a bar.
    const tty = plain((await carbonTty(['report'], { home, env: TTY, columns: 160 })).output);
    expect(tty).toMatch(new RegExp(`^${gap} +0 +0 kg +0 kg +0 kg +\\$0\\.00$`, 'm'));
    // Quarters and weeks alike: as many rows as the span has.
    const weeks = await json<{ rows: Array<{ kg: number }> }>(['report', '--by', 'week'], { home });
    expect(weeks.rows.length).toBeGreaterThanOrEqual(9);
    expect(weeks.rows.filter((x) => x.kg > 0)).toHaveLength(2);
    // --since and --until bound it: the month before the first purchase and the one after the last are rows too.
    const [before, after] = [shiftMonth(first, -1), shiftMonth(last, 1)];
    const spanned = await json<{ rows: Array<{ group: string }> }>(['report', '--since', `${before}-01`, '--until', `${after}-28`], {
      home,
    });
    expect(spanned.rows.map((x) => x.group)).toEqual([before, ...months, after]);
    // A span without a purchase: its months, with zeros.
    const none = await json<{ rows: unknown[]; total: { kg: number } }>(['report', '--since', '2020-01-15', '--until', '2020-03-01'], {
      home,
    });
    expect([none.rows, none.total.kg]).toEqual([['2020-01', '2020-02', '2020-03'].map((group) => ({ group, ...zeros })), 0]);
  });

  test("a span of more than 1,000 periods is refused (exit 2), the flags' before a page is read, the purchases' after", async () => {
    const home = newHome();
    const at = await ok(['report', '--since', '1943-01-01', '--until', '2026-04-30', '--json'], { home });
    expect(JSON.parse(at.stdout).rows).toHaveLength(1000);
    const over = await carbon(['report', '--since', '1943-01-01', '--until', '2026-05-01'], { home });
    expect([over.exitCode, over.stdout, over.stderr]).toEqual([
      2,
      '',
      'error: 1943-01 to 2026-05 is 1,001 months; a report has at most 1,000 rows. Give a shorter span with --since and --until, or --by quarter.\n',
    ]);
    // By week over as many months: too many months too, so the coarser period named is the quarter.
    const weekly = await carbon(['report', '--since', '1943-01-01', '--until', '2026-05-01', '--by', 'week'], { home });
    expect([weekly.exitCode, weekly.stderr]).toEqual([
      2,
      'error: 1942-W53 to 2026-W18 is 4,349 weeks; a report has at most 1,000 rows. Give a shorter span with --since and --until, or --by quarter.\n',
    ]);
    await ok(['buy', '--kg', '5'], { home });
    await ok(['sandbox', 'clock', 'advance', '7100d'], { home });
    await ok(['buy', '--kg', '5'], { home });
    expect((await json<{ rows: unknown[] }>(['report'], { home })).rows.length).toBeGreaterThan(200);
    const weeks = await carbon(['report', '--by', 'week'], { home });
    expect([weeks.exitCode, weeks.stdout]).toEqual([2, '']);
    expect(weeks.stderr).toMatch(
      /^error: \d{4}-W\d\d to \d{4}-W\d\d is 1,01\d weeks; a report has at most 1,000 rows\. Give a shorter span with --since and --until, or --by month\.\n$/,
    );
  });

  test("without --until the span ends on the model's today: a sandbox whose clock was moved on reports from a day after the real one", async () => {
    const home = newHome();
    await ok(['sandbox', 'clock', 'advance', '60d'], { home });
    await ok(['buy', '--kg', '7'], { home });
    const modelToday = (await json<{ now: string }>(['sandbox', 'clock'], { home })).now.slice(0, 10);
    const dayBefore = new Date(Date.parse(modelToday) - 86_400_000).toISOString().slice(0, 10);
    // A day 59 days after the real today, whatever that is: it was refused as "after today (<the real one>)".
    const report = await json<{ rows: Array<{ kg: number }>; total: { kg: number } }>(['report', '--since', dayBefore, '--by', 'week'], {
      home,
    });
    expect(report.total.kg).toBe(7);
    const after = new Date(Date.parse(modelToday) + 86_400_000).toISOString().slice(0, 10);
    const refused = await carbon(['report', '--since', after], { home });
    expect([refused.exitCode, refused.stdout]).toEqual([2, '']);
    expect(refused.stderr).toContain(`error: --since ${after} is after today (${modelToday}), where the span would end`);
  });

  test.each([
    [['report', '--by', 'day'], /--by|day/],
    [['report', '--since', '2026-13-01'], /--since must be a day/],
    [['report', '--since', '2027-01-02', '--until', '2027-01-01'], /--since must come before --until/],
    // Without --until the span ends today: a --since after it would make a span that runs backwards.
    [['report', '--since', '9000-01-01', '--format', 'html'], /^error: --since 9000-01-01 is after today \(\d{4}-\d\d-\d\d\)/],
    [['report', '--prefix-sep', '-'], /goes with --by reference/],
    // Cut at an empty separator, every reference would group under one blank name.
    [['report', '--by', 'reference', '--prefix-sep', ''], /^error: --prefix-sep needs a separator such as - or \/, not an empty one\.\n$/],
  ])('%j is a usage error (exit 2)', async (args, says) => {
    const r = await carbon(args, { home: newHome() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(says);
  });
});

describe('carbon api METHOD PATH', () => {
  test('a raw request through the configured engine: the answer on stdout as JSON, the status as the exit code', async () => {
    const home = newHome();
    const balance = await ok(['api', 'GET', '/balance'], { home });
    expect(JSON.parse(balance.stdout)).toMatchObject({ object: 'balance', available_cents: 100_000 });
    const bought = await ok(['api', 'POST', '/offsets', '-d', '{"kg": 5}'], { home });
    expect(JSON.parse(bought.stdout)).toMatchObject({ object: 'offset', kg: 5 });
    const page = await ok(['api', 'get', '/api/v1/offsets?limit=1'], { home });
    expect(JSON.parse(page.stdout).data).toHaveLength(1);
    const missing = await carbon(['api', 'GET', '/offsets/off_nope'], { home });
    expect([missing.exitCode, JSON.parse(missing.stdout).error.code]).toEqual([5, 'resource_missing']);
    const invalid = await carbon(['api', 'POST', '/quotes', '-d', '{"kg": 0}'], { home });
    expect([invalid.exitCode, JSON.parse(invalid.stdout).error.param]).toEqual([2, 'kg']);
    const notJson = await carbon(['api', 'POST', '/quotes', '-d', 'kg=5'], { home });
    expect([notJson.exitCode, notJson.stdout]).toEqual([2, '']);
    // A body file that cannot be read is said in words, and nothing is sent.
    for (const [file, why] of [
      ['missing.json', 'there is no such file'],
      [home, 'it is a directory'],
    ]) {
      const unread = await carbon(['api', 'POST', '/offsets', '-d', `@${file}`], { home });
      expect([unread.exitCode, unread.stdout, unread.stderr]).toEqual([2, '', `error: Cannot read ${file}: ${why}; nothing was sent.\n`]);
    }
    // An empty file name, or an empty path ("$VAR" unset): nothing to send, nothing sent.
    expect(await carbon(['api', 'POST', '/quotes', '-d', '@'], { home })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'error: -d @FILE needs a file (or @- for stdin), and was given an empty name; nothing was sent.\n',
    });
    for (const path of ['', ' '])
      expect(await carbon(['api', 'GET', path], { home })).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: 'error: The path is empty: give one such as /balance or /offsets?limit=2; nothing was sent.\n',
      });
    // A GET's --data is refused, not sent as a body the API would never read.
    const getBody = await carbon(['api', 'GET', '/offsets', '-d', '{"limit": 2}'], { home });
    expect([getBody.exitCode, getBody.stdout, getBody.stderr]).toEqual([
      2,
      '',
      "error: A GET sends no body, so --data has nowhere to go; nothing was sent. Put the parameters in the path's query, as in '/offsets?limit=2'.\n",
    ]);
    // A query parameter given twice is sent twice, and refused naming it, as carbon serve refuses it: not the last one alone.
    const twice = await carbon(['api', 'GET', '/offsets?limit=1&limit=3'], { home });
    expect([twice.exitCode, JSON.parse(twice.stdout).error]).toEqual([
      2,
      { type: 'invalid_request_error', code: 'validation_error', message: 'limit may be given only once.', param: 'limit' },
    ]);
    // `__proto__` is a parameter like any other: not one the list reads.
    const proto = await carbon(['api', 'GET', '/offsets?__proto__=1&limit=1'], { home });
    expect([proto.exitCode, JSON.parse(proto.stdout).error.code]).toEqual([2, 'validation_error']);
    // The same key twice: the POST /offsets replays, as the API does.
    const again = await ok(['api', 'POST', '/offsets', '-d', '{"kg": 5}', '--idempotency-key', 'api-1'], { home });
    const replay = await ok(['api', 'POST', '/offsets', '-d', '{"kg": 5}', '--idempotency-key', 'api-1'], { home });
    expect(JSON.parse(replay.stdout).id).toBe(JSON.parse(again.stdout).id);
  });
});

describe('carbon open ID: the certificate', () => {
  test('local engine: rendered from the model into the data directory, its address printed without a display', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    // Held for review, so it is processing however long the commands take (unheld, real time places it after a minute).
    await ok(['sandbox', 'review-limit', '0'], { home });
    const bought = await json<{ id: string }>(['buy', '--kg', '300', '--live', '--yes', '--reference', 'private-label'], { home });
    const early = await carbon(['open', bought.id, '--live'], { home });
    expect([early.exitCode, early.stderr.trim()]).toEqual([
      5,
      `error: ${bought.id} has no certificate: it is processing; only placed offsets have one.`,
    ]);
    await ok(['sandbox', 'review', 'approve', bought.id], { home });
    const r = await ok(['open', bought.id, '--live'], { home, env: { DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });
    const url = r.stdout.trim();
    expect(url).toMatch(new RegExp(`^file://${home}/data/certificates/cert_[0-9a-f]{24}\\.html$`));
    const { readFileSync } = await import('node:fs');
    const { fileURLToPath } = await import('node:url');
    const html = readFileSync(fileURLToPath(url), 'utf8');
    expect(html).toContain('300 <small>kg of CO<sub>2</sub>, simulated</small>');
    expect(html).toContain('Sandbox — not a real purchase.');
    expect(html).toContain(bought.id);
    expect(html).not.toContain('private-label');
    expect((await ok(['open', bought.id, '--live', '--print'], { home })).stdout.trim()).toBe(url);
    // --json: one JSON document for jq, with or without --print (and no browser opened).
    for (const args of [['--print', '--json'], ['--json']]) {
      const doc = await ok(['open', bought.id, '--live', ...args], { home, env: { DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });
      expect(JSON.parse(doc.stdout)).toEqual({ offset: bought.id, url });
    }
    const test = await json<{ id: string }>(['buy', '--kg', '1'], { home });
    expect((await carbon(['open', test.id], { home })).stderr).toContain('test offsets have none');
  });
});

describe('carbon open ID on the remote engine: a certificate_url that is no web address', () => {
  test('is not handed to the desktop opener (xdg-open takes files and options): exit 1, nothing opened', async () => {
    const home = newHome();
    // A desktop opener that notes what it was given, first on PATH, and a display for it.
    const bin = join(home, 'bin');
    mkdirSync(bin);
    const opened = join(home, 'opened.txt');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" >> ${opened}\n`, { mode: 0o755 });
    let certificateUrl = '';
    const server = createServer((req, res) => {
      req.resume();
      const offset = { object: 'offset', id: 'off_abc', livemode: true, status: 'placed', kg: 1, amount_cents: 4, currency: 'usd' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...offset, certificate_url: certificateUrl }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      DISPLAY: ':0',
      CARBON_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
      CARBON_API_KEY: 'ck_live_abcdefghijklmnop',
    };
    try {
      for (const bad of ['--help', 'file:///etc/passwd', '/usr/share/applications/x.desktop', 'javascript:alert(1)']) {
        certificateUrl = bad;
        const r = await carbon(['open', 'off_abc', '--live'], { home, env });
        expect([bad, r.exitCode, r.stdout, r.stderr]).toEqual([
          bad,
          1,
          '',
          'error: The API answered off_abc with a certificate_url that is not an http(s) address; it is not opened. Is the base URL right?\n',
        ]);
      }
      expect(existsSync(opened)).toBe(false);
      // A web address is opened.
      certificateUrl = 'https://sandbox.example.com/certificates/cert_1';
      expect((await carbon(['open', 'off_abc', '--live'], { home, env })).exitCode).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(readFileSync(opened, 'utf8')).toBe('https://sandbox.example.com/certificates/cert_1\n');
      // An opener that fails (xdg-open with no browser to hand it to: exit 4) fails the command, the address on stdout.
      writeFileSync(join(bin, 'xdg-open'), '#!/bin/sh\nexit 4\n', { mode: 0o755 });
      const failed = await carbon(['open', 'off_abc', '--live'], { home, env });
      expect([failed.exitCode, failed.stdout]).toEqual([1, 'https://sandbox.example.com/certificates/cert_1\n']);
      expect(failed.stderr).toContain(
        'error: Could not open https://sandbox.example.com/certificates/cert_1: xdg-open exited with 4. Its address is on stdout: open it yourself.\n',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('report on a terminal', () => {
  test('at 160 columns: placed kg and processing kg, as the README promises; at 60 they go first', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '100', '--reference', 'ops-a'], { home });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const wide = plain((await carbonTty(['report'], { home, env: TTY, columns: 160 })).output);
    expect(wide).toMatch(/^month +offsets +kg +placed kg +processing kg +amount/m);
    expect(wide).toMatch(/^total +1 +100 kg +100 kg +0 kg +\$4\.00$/m);
    const narrow = plain((await carbonTty(['report'], { home, env: TTY, columns: 50 })).output);
    expect(narrow).not.toContain('processing kg');
    expect(narrow).toMatch(/^total +1 +100 kg/m);
    // The sandbox's note under it is broken at spaces to the width, not by the terminal mid-word.
    const note = narrow.slice(narrow.indexOf('Sandbox: not real purchases.')).trimEnd().split('\n');
    expect(note.length).toBeGreaterThan(2);
    for (const line of note) expect(line.length, line).toBeLessThanOrEqual(50);
    expect(note.join(' ')).toContain('No carbon credits were bought or retired, and no money was paid');
  });

  test('a count of offsets past 1,000 is grouped in the table and in Markdown, as on the HTML page; CSV and plain keep it bare', async () => {
    const home = newHome();
    const csv = join(home, 'many.csv');
    writeFileSync(csv, `kg\n${'1\n'.repeat(1_234)}`);
    await ok(['buy', '--from-csv', csv], { home });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const table = plain((await carbonTty(['report'], { home, env: TTY, columns: 160 })).output);
    expect(table).toMatch(/^total +1,234 +1,234 kg +1,234 kg +0 kg +\$49\.36$/m);
    const md = (await ok(['report', '--format', 'md'], { home })).stdout;
    expect(md).toContain('| **total** | 1,234 | 1,234 | 1,234 | 0 | \\$49.36 |');
    expect((await ok(['report', '--format', 'html'], { home })).stdout).toContain('<td class="n">1,234</td><td class="n">1,234</td>');
    expect((await ok(['report'], { home })).stdout).toMatch(/\t1234\t1234\t1234\t0\t4936\n$/);
    expect((await ok(['report', '--format', 'csv'], { home })).stdout).toMatch(/,1234,1234,1234,0,4936,/);
  });
});

describe('carbon report on the remote engine', () => {
  test("through carbon serve the report says the purchases were the sandbox's; a service that does not say so gets nothing added", async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
    await ok(['buy', '--kg', '5'], { home, env });
    expect(await json(['report'], { home, env })).toMatchObject({ sandbox: true });
    const csv = (await ok(['report', '--format', 'csv'], { home, env })).stdout.split('\r\n');
    expect(csv[0]).toBe('month,offsets,kg,placed_kg,processing_kg,amount_cents,livemode,environment');
    expect(csv[1]).toMatch(/,sandbox: not a real purchase$/);
    expect((await ok(['report', '--format', 'md'], { home, env })).stdout).toMatch(/Sandbox: not real purchases\./);
    // The watermark every printed page of a sandbox report carries (test/pages/sandbox-papers.test.ts).
    expect((await ok(['report', '--format', 'html'], { home, env })).stdout).toContain(
      '<div class="watermark" aria-hidden="true">SANDBOX</div>',
    );

    const other = await headerless(server.url);
    const elsewhere = { ...env, CARBON_BASE_URL: other.url };
    expect(await json(['report'], { home, env: elsewhere })).toMatchObject({ sandbox: false });
    expect((await ok(['report', '--format', 'csv'], { home, env: elsewhere })).stdout.split('\r\n')[0]).toBe(
      'month,offsets,kg,placed_kg,processing_kg,amount_cents,livemode',
    );
    expect((await ok(['report', '--format', 'md'], { home, env: elsewhere })).stdout).not.toMatch(/sandbox/i);
    expect((await ok(['report', '--format', 'html'], { home, env: elsewhere })).stdout).not.toMatch(/class="(sandbox|watermark)"/);
    other.close();
    await server.stop();
  });

  test('through carbon serve, a sandbox whose clock moved on: the HTML report is never made before its own purchases', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    await ok(['sandbox', 'clock', 'advance', '32d'], { home });
    const newest = await json<{ created: string }>(['buy', '--kg', '7'], { home });
    const server = await serve(home, ['--show-keys']);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
      const html = (await ok(['report', '--format', 'html'], { home: newHome(), env })).stdout;
      const made = /Made <time datetime="([^"]+)"/.exec(html)![1]!;
      expect(Date.parse(made)).toBeGreaterThanOrEqual(Date.parse(newest.created));
    } finally {
      await server.stop();
    }
  });
});
