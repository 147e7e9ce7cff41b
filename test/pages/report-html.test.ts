import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchIn, withChromium } from '../support/chromium.js';
import { carbon, carbonTty, homes, json, ok } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Issue 25, item 6: `carbon report --format html`, the page a sustainability team hands on:
 * made by the built binary, opened and printed to PDF in a real Chromium, checked with axe-core.
 * CARBON_SCREENSHOTS=1 writes docs/report.png (the README links it).
 */

// In the page (evaluated there): the tests' TypeScript has no DOM.
declare function getComputedStyle(el: unknown): { backgroundColor: string };

const run = withChromium(describe, 'Report page browser tests');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const newHome = homes();

interface Report {
  rows: Array<{ group: string; offsets: number; kg: number; placed_kg: number; processing_kg: number; amount_cents: number }>;
  total: { kg: number; amount_cents: number; offsets: number };
}

/**
 * A ledger over three months on the model's clock: placed, processing and refunded offsets. Live,
 * each held for review (a limit of $0): every status is what the test made it (approved: placed;
 * failed: refunded; left: processing), never what seconds of real time did (a test offset places
 * itself 3 s after its purchase, which a busy machine can let pass between the HTML report and
 * the JSON one).
 */
async function ledger(): Promise<string> {
  const home = newHome();
  await ok(['config', 'set', 'mode', 'live'], { home });
  await ok(['sandbox', 'topup', '2000'], { home });
  await ok(['sandbox', 'review-limit', '0'], { home });
  const buy = async (kg: number, reference: string) =>
    (await json<{ id: string }>(['buy', '--kg', String(kg), '--reference', reference, '--yes'], { home })).id;
  const placed = async (kg: number, reference: string) => ok(['sandbox', 'review', 'approve', await buy(kg, reference)], { home });
  await placed(12_000, 'ops-flights');
  await placed(4_500, 'fin-travel');
  await ok(['sandbox', 'clock', 'advance', '31d'], { home });
  await placed(8_000, 'ops-servers');
  await ok(['sandbox', 'fail', await buy(3_000, 'ops-refunded')], { home });
  await ok(['sandbox', 'clock', 'advance', '31d'], { home });
  await buy(6_500, 'hr-commute');
  await buy(2_000, 'ops-flights');
  return home;
}

/**
 * The largest month one batch can make: 2,000 rows of 1,000,000 kg, 2,000,000,000 kg for
 * $80,000,000.00, placed (the clock moved on): the widest numbers the report shows.
 */
/** Made once for the tests that read it (none writes to it): 2,000 purchases take a few seconds. */
let largestHome: Promise<string> | undefined;
function largest(): Promise<string> {
  largestHome ??= makeLargest();
  return largestHome;
}
async function makeLargest(): Promise<string> {
  const home = newHome();
  await ok(['sandbox', 'topup', '80000000'], { home });
  const csv = join(home, 'largest.csv');
  writeFileSync(csv, `kg\n${'1000000\n'.repeat(2_000)}`);
  await ok(['buy', '--from-csv', csv], { home });
  await ok(['sandbox', 'clock', 'advance', '1m'], { home });
  return home;
}

run('carbon report --format html, in Chromium', () => {
  let home: string;
  let html: string;
  let report: Report;
  let browser: Browser;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    home = await ledger();
    const r = await carbon(['report', '--format', 'html'], { home });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    html = r.stdout;
    report = await json<Report>(['report'], { home });
    dir = mkdtempSync(join(tmpdir(), 'carbon-report-'));
    browser = await launchIn(dir);
    page = await (await browser.newContext({ viewport: { width: 1000, height: 800 } })).newPage();
    // Offline: a self-contained page needs nothing from anywhere.
    await page.route('**/*', (route) => route.abort());
    await page.setContent(html);
  }, limit(90_000));

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('is one self-contained document: no script, nothing loaded from elsewhere', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|src=|url\(|@import/i);
    expect(html).not.toMatch(/https?:\/\//);
  });

  test('has the same rows and totals as the JSON report, the span, the mode and when it was made', async () => {
    const rows = await page.$$eval('tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent)));
    expect(rows).toEqual(
      report.rows.map((r) => [
        r.group,
        String(r.offsets),
        r.kg.toLocaleString('en-US'),
        r.placed_kg.toLocaleString('en-US'),
        r.processing_kg.toLocaleString('en-US'),
        `$${(r.amount_cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`,
      ]),
    );
    // Three months with purchases (31 days apart: a month between may be a row of zeros).
    expect(report.rows.filter((r) => r.offsets > 0)).toHaveLength(3);
    const foot = await page.$$eval('tfoot th, tfoot td', (cells) => cells.map((c) => c.textContent));
    expect(foot).toEqual(['Total', '5', '33,000', expect.any(String), expect.any(String), '$1,320.00']);
    // One row, shaded alike: its heading cell is not a column heading's grey (it was, cut off from its row).
    const shades = await page.$$eval('tfoot th, tfoot td', (cells) => cells.map((c) => getComputedStyle(c).backgroundColor));
    expect(new Set(shades)).toEqual(new Set(['rgba(0, 0, 0, 0)']));
    expect(report.total).toMatchObject({ kg: 33_000, amount_cents: 132_000, offsets: 5 });
    const meta = await page.textContent('.meta');
    expect(meta).toContain('Span: every purchase');
    expect(meta).toContain('Live mode');
    expect(await page.getAttribute('time', 'datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  test('draws a bar per row in inline SVG, placed and processing, proportional to kg', async () => {
    const bars = await page.$$eval('svg g', (gs) =>
      gs.map((g) => [...g.querySelectorAll('rect')].map((r) => Number(r.getAttribute('width')))),
    );
    expect(bars).toHaveLength(report.rows.length);
    const widths = bars.map(([placed, processing]) => placed! + processing!);
    const kgs = report.rows.map((r) => r.kg);
    const largest = Math.max(...kgs);
    for (const [i, w] of widths.entries()) expect(w / Math.max(...widths)).toBeCloseTo(kgs[i]! / largest, 2);
    // The newest month is still processing: its bar is all the second colour.
    expect(bars.at(-1)![0]).toBe(0);
    expect(await page.getAttribute('svg', 'role')).toBe('img');
  });

  test('a row of 1 kg beside one of 100,000 has a bar that shows (3 px or more at 390 px, on screen and in print); a zero part has none', async () => {
    const tiny = newHome();
    await ok(['sandbox', 'topup', '5000'], { home: tiny });
    await ok(['buy', '--kg', '100000', '--reference', 'fleet', '--yes'], { home: tiny });
    await ok(['buy', '--kg', '1', '--reference', 'coffee', '--yes'], { home: tiny });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home: tiny });
    const report = (await ok(['report', '--by', 'reference', '--format', 'html'], { home: tiny })).stdout;
    const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await phone.route('**/*', (route) => route.abort());
    await phone.setContent(report);
    for (const media of ['screen', 'print'] as const) {
      await phone.emulateMedia({ media });
      // Each row's placed and processing parts, as drawn: px wide.
      const drawn = await phone.$$eval('svg g', (gs) =>
        gs.map((g) => [...g.querySelectorAll('rect')].map((r) => r.getBoundingClientRect().width)),
      );
      expect(drawn, media).toHaveLength(2);
      const [fleet, coffee] = drawn as [[number, number], [number, number]];
      expect(coffee[0], `${media}: 1 kg placed, drawn ${coffee[0]} px`).toBeGreaterThanOrEqual(3);
      expect([fleet[1], coffee[1]], `${media}: nothing processing`).toEqual([0, 0]);
      expect(fleet[0]).toBeGreaterThan(150);
    }
    await phone.context().close();
  });

  test("each bar's label is whole inside the chart, the largest month's (2,000,000,000 kg) too: on a desktop and a phone", async () => {
    const home = await largest();
    for (const unit of ['kg', 't']) {
      const html = (await ok(['report', '--format', 'html', '--unit', unit], { home })).stdout;
      for (const width of [1280, 390]) {
        const at = await (await browser.newContext({ viewport: { width, height: 844 } })).newPage();
        await at.route('**/*', (route) => route.abort());
        await at.setContent(html);
        const drawn = await at.evaluate(`(() => {
          const svg = document.querySelector('svg').getBoundingClientRect();
          return [...document.querySelectorAll('svg g text:last-child')].map((t) => {
            const box = t.getBoundingClientRect();
            return { text: t.textContent, left: box.left >= svg.left - 0.5, right: svg.right - box.right };
          });
        })()`);
        expect(drawn, `${unit}, ${width} px`).toEqual([
          { text: unit === 'kg' ? '2,000,000,000 kg' : '2,000,000.000 t', left: true, right: expect.any(Number) },
        ]);
        const [{ right }] = drawn as [{ right: number }];
        expect(right, `${unit}, ${width} px: the label's right edge inside the chart's`).toBeGreaterThanOrEqual(-0.5);
        await at.context().close();
      }
    }
  });

  test('a reference label of capitals, CJK or right-to-left text is drawn whole inside the chart, its "…" where its reading ends', async () => {
    const home = newHome();
    const rtl = 'رحلة عمل من دبي إلى القاهرة لفريق المبيعات';
    for (const reference of ['MARKETING-EVENTS-BERLIN', '東京本社出張費用二〇二六年第四四半期分', 'W'.repeat(40), rtl])
      await ok(['buy', '--kg', '10', '--reference', reference], { home });
    const html = (await ok(['report', '--by', 'reference', '--format', 'html'], { home })).stdout;
    for (const width of [1280, 390]) {
      const at = await (await browser.newContext({ viewport: { width, height: 844 } })).newPage();
      await at.route('**/*', (route) => route.abort());
      await at.setContent(html);
      const outside = await at.evaluate(`(() => {
        const svg = document.querySelector('svg').getBoundingClientRect();
        return [...document.querySelectorAll('svg g text:first-child')]
          .filter((t) => t.getBoundingClientRect().left < svg.left - 0.5)
          .map((t) => t.textContent);
      })()`);
      expect(outside, `${width} px`).toEqual([]);
      // The right-to-left label's "…" is drawn at its left, where its reading ends.
      const ends = await at.evaluate(`(() => {
        const t = [...document.querySelectorAll('svg g text:first-child')].find((x) => x.textContent.includes('رحلة'));
        const range = document.createRange();
        const node = t.firstChild;
        const at = node.textContent.indexOf('…');
        range.setStart(node, at);
        range.setEnd(node, at + 1);
        return range.getBoundingClientRect().left - t.getBoundingClientRect().left;
      })()`);
      expect(ends as number, `${width} px`).toBeLessThan(2);
      await at.context().close();
    }
  });

  test.each([390, 640, 768])(
    'the largest month (2,000,000,000 kg, 80 million dollars) fits %i px wide (a phone, a laptop zoomed to 200 percent, a tablet): no sideways scrolling, every figure whole on screen',
    async (width) => {
      const home = await largest();
      const phone = await (await browser.newContext({ viewport: { width, height: 844 } })).newPage();
      await phone.route('**/*', (route) => route.abort());
      for (const unit of ['kg', 't']) {
        await phone.setContent((await ok(['report', '--format', 'html', '--unit', unit], { home })).stdout);
        expect(await phone.evaluate('document.documentElement.scrollWidth'), unit).toBeLessThanOrEqual(width);
        // Each figure's text, as drawn: inside the screen, on one line.
        const figures = (await phone.evaluate(`[...document.querySelectorAll('tbody td, tfoot td')].map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        const box = range.getBoundingClientRect();
        return [td.textContent, box.left >= 0 && box.right <= ${width}, range.getClientRects().length];
      })`)) as Array<[string, boolean, number]>;
        const amount = '$80,000,000.00';
        const [weight, none] = unit === 'kg' ? ['2,000,000,000', '0'] : ['2,000,000.000', '0.000'];
        expect(figures.map(([text]) => text)).toEqual([...Array(2)].flatMap(() => ['2,000', weight, weight, none, amount]));
        expect(
          figures.filter(([, inside, lines]) => !inside || lines !== 1),
          unit,
        ).toEqual([]);
      }
      await phone.context().close();
    },
  );

  test('passes axe-core with no serious or critical violation', async () => {
    await page.evaluate(AXE);
    const found = await page.evaluate(async () => {
      const r = await (
        globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }
      ).axe.run();
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
    });
    expect(found).toEqual([]);
  });

  test('a long chart (25 rows) prints in pieces a page breaks between, never through a row; on screen one chart', async () => {
    const many = newHome();
    const csv = join(many, 'refs.csv');
    writeFileSync(
      csv,
      `kg,reference\n${Array.from({ length: 25 }, (_, i) => `${10 + i},team-${String(i).padStart(2, '0')}`).join('\n')}\n`,
    );
    await ok(['buy', '--from-csv', csv], { home: many });
    const long = (await ok(['report', '--by', 'reference', '--format', 'html'], { home: many })).stdout;
    // A4 less its margins is about 680 px wide and 1,000 px high.
    const at = await (await browser.newContext({ viewport: { width: 680, height: 1000 } })).newPage();
    await at.route('**/*', (route) => route.abort());
    await at.setContent(long);
    for (const media of ['screen', 'print'] as const) {
      await at.emulateMedia({ media });
      const seen = (await at.evaluate(`(() => {
        const svgs = [...document.querySelectorAll('figure svg')];
        return {
          pieces: svgs.map((svg) => {
            const box = svg.getBoundingClientRect();
            return { top: box.top, bottom: box.bottom, avoid: getComputedStyle(svg).breakInside, rows: svg.querySelectorAll('g').length };
          }),
          named: svgs.map((svg) => svg.getAttribute('role') ?? svg.getAttribute('aria-hidden')),
          figure: getComputedStyle(document.querySelector('figure')).breakInside,
          // Each row's label, top to bottom: evenly spaced across the pieces.
          rows: [...document.querySelectorAll('figure svg g text:first-child')].map((t) => t.getBoundingClientRect().top),
        };
      })()`)) as {
        pieces: Array<{ top: number; bottom: number; avoid: string; rows: number }>;
        named: string[];
        figure: string;
        rows: number[];
      };
      expect(
        seen.pieces.map((p) => p.rows),
        media,
      ).toEqual([10, 10, 5]);
      expect(seen.named).toEqual(['img', 'true', 'true']);
      for (let i = 1; i < seen.pieces.length; i++) expect(seen.pieces[i]!.top - seen.pieces[i - 1]!.bottom, media).toBeCloseTo(0, 0);
      const gaps = seen.rows.slice(1).map((top, i) => top - seen.rows[i]!);
      expect(Math.max(...gaps) - Math.min(...gaps), `${media}: rows evenly spaced`).toBeLessThan(1);
      if (media === 'print') {
        // Each piece kept whole and well under a page; the chart itself may break (between pieces).
        for (const p of seen.pieces) expect([p.avoid, p.bottom - p.top < 600]).toEqual(['avoid', true]);
        expect(seen.figure).toBe('auto');
      }
    }
    await at.context().close();
  });

  test('prints to one PDF page that fits its width; a screenshot is kept', async () => {
    await page.emulateMedia({ media: 'print' });
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.toString('latin1').match(/\/Type\s*\/Page\b/g)).toHaveLength(1);
    expect(pdf.length).toBeGreaterThan(10_000);
    // Printed width (A4 less its margins, ~680 px): nothing sticks out.
    await page.setViewportSize({ width: 680, height: 900 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
    await page.emulateMedia({ media: 'screen' });
    await page.setViewportSize({ width: 1000, height: 800 });
    const path = process.env.CARBON_SCREENSHOTS === '1' ? join('docs', 'report.png') : join(dir, 'report.png');
    await page.screenshot({ path, fullPage: true });
    expect(readFileSync(path).subarray(1, 4).toString('latin1')).toBe('PNG');
  });
});

describe('carbon report --format html, terminal and pipe', () => {
  test('a terminal gets the same page as a pipe (no table, no colour), and an empty ledger says so', async () => {
    const home = newHome();
    const tty = await carbonTty(['report', '--format', 'html'], { home });
    expect(tty.exitCode).toBe(0);
    expect(tty.output).toMatch(/^<!doctype html>/);
    expect(tty.output).toContain('No purchases in this span.');
    expect(tty.output).not.toContain('\u001b[');
    const spanned = await carbon(['report', '--format', 'html', '--since', '2026-01-01', '--until', '2026-03-31', '--live'], { home });
    expect(spanned.exitCode).toBe(0);
    expect(spanned.stdout).toContain('Span: 2026-01-01 to 2026-03-31');
    // Its three months are rows of zeros; a chart of nothing is not drawn.
    expect(spanned.stdout.match(/<tr><th scope="row">2026-0[123]<\/th><td class="n">0<\/td>/g)).toHaveLength(3);
    expect(spanned.stdout).toContain('No purchases in this span.');
    expect(spanned.stdout).not.toContain('<svg');
    expect(spanned.stdout).toContain('Live mode');
    expect((await carbon(['report', '--format', 'html', '--json'], { home })).exitCode).toBe(2);
  });
});
