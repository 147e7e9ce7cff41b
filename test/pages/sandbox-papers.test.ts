import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { type Launched, launch, outsideLandmarks, withChromium } from '../support/chromium.js';
import { carbon, homes, json, ok } from '../support/cli.js';
import { serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * Everything the local model issues says it is a sandbox, on screen and on paper, in words a
 * person who never saw carbon reads: the certificate (served by `carbon serve`, and written by
 * `carbon open` on the local engine) and the reports (HTML, Markdown, CSV, JSON). The HTML report
 * also fits a 390 px phone without wrapping a month, and `--unit t` gives tonnes in every format.
 * Markdown escapes whatever a reference holds. A report through `carbon serve` says so too (its
 * answers carry `Carbon-Sandbox: true`); one from a service that does not say so claims nothing.
 */

const newHome = homes();
const SANDBOX = /Sandbox — not a real purchase\. No carbon credits were bought or retired, and no money was paid\./i;
// The page's own global, in the functions evaluated in Chromium (this project type-checks without the DOM library).
declare function getComputedStyle(el: unknown): { lineHeight: string; position: string };

/** On screen and in print: the band is shown, above the rest, in dark text. */
async function bandShown(page: Page, selector: string): Promise<void> {
  for (const media of ['screen', 'print'] as const) {
    await page.emulateMedia({ media });
    const band = page.locator(selector);
    expect(await band.isVisible(), media).toBe(true);
    const box = (await band.boundingBox())!;
    expect(box.y, `${media}: the band comes first`).toBeLessThan(80);
  }
  await page.emulateMedia({ media: 'screen' });
}

/**
 * Which pages of a PDF Chromium printed draw in `rgb` (its fill operator as Chromium writes it,
 * `.5412 .4275 0 rg`), in page order: each page's content stream, inflated. No PDF library: the
 * objects are read where Chromium writes them, a content stream's dictionary with nothing nested.
 */
function pagesDrawingIn(pdf: Buffer, rgb: string): boolean[] {
  const text = pdf.toString('latin1');
  const streams = new Map<string, Buffer>();
  for (const m of text.matchAll(/(\d+) 0 obj\s*<<([^<>]*)>>\s*stream\r?\n/g)) {
    const start = m.index + m[0].length;
    const data = pdf.subarray(start, start + Number(/\/Length (\d+)/.exec(m[2]!)![1]));
    streams.set(m[1]!, m[2]!.includes('/FlateDecode') ? inflateSync(data) : data);
  }
  const contents = [...text.matchAll(/\/Type \/Page\b[\s\S]*?\/Contents (\d+) 0 R/g)].map((m) => streams.get(m[1]!));
  return contents.map((c) => c?.toString('latin1').includes(` ${rgb} rg`) === true);
}

withChromium(describe, 'Sandbox papers browser tests')('the sandbox says so on its papers', () => {
  const served = serveInProcess('carbon-papers-');
  let chromium: Launched;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-papers-'));
    chromium = await launch();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The certificate page of a placed live offset of its own, bought through carbon serve. */
  async function certificateUrl(idempotencyKey: string): Promise<string> {
    const { server } = served;
    const live = (await server.sandbox.defaultKey('live'))!;
    await server.sandbox.topUp('live', 1_000_000);
    const headers = { authorization: `Bearer ${live}`, 'idempotency-key': idempotencyKey };
    const bought = (await (await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: '{"kg": 2500}' })).json()) as Offset;
    await server.sandbox.advanceClock(60_000);
    const placed = (await (await fetch(`${server.url}/offsets/${bought.id}`, { headers })).json()) as Offset;
    return placed.certificate_url!;
  }

  test('the certificate carbon serve serves: a band, a seal and a heading that say sandbox, on screen and in print', async () => {
    const page = await (await chromium.browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await page.goto(await certificateUrl('papers-cert'));
    expect(await page.title()).toMatch(/^SANDBOX certificate \(not a real purchase\)/);
    expect(await page.locator('.sandbox-band').innerText()).toMatch(SANDBOX);
    expect(await page.locator('h1').innerText()).toBe('A simulated purchase of carbon credits');
    expect(await page.locator('main').innerText()).not.toMatch(/bought and retired|Issued by the carbon offsets service/);
    await bandShown(page, '.sandbox-band');
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('.watermark').isVisible()).toBe(true);
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await page.context().close();
  });

  test('the certificate has nothing outside a landmark, its band in a region named Sandbox: on a desktop and a phone', async () => {
    const url = await certificateUrl('papers-landmarks');
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      const page = await (await chromium.browser.newContext({ viewport: { width, height } })).newPage();
      await page.goto(url);
      expect(await outsideLandmarks(page), `${width}px`).toEqual([]);
      expect(await page.getByRole('region', { name: 'Sandbox' }).locator('.sandbox-band').innerText()).toMatch(SANDBOX);
      await page.context().close();
    }
  });

  test("the seal's words, SANDBOX and NOT VALID, lie inside its circle: on a desktop and a phone, on screen and in print", async () => {
    const url = await certificateUrl('papers-seal');
    for (const width of [1000, 390]) {
      const page = await (await chromium.browser.newContext({ viewport: { width, height: 900 } })).newPage();
      await page.goto(url);
      for (const media of ['screen', 'print'] as const) {
        await page.emulateMedia({ media });
        // How far past the inside of the circle (its border's inner edge) each word's box reaches, in px: its farthest corner.
        const past = (await page.evaluate(`(() => {
          const seal = document.querySelector('.seal');
          const circle = seal.getBoundingClientRect();
          const radius = circle.width / 2 - parseFloat(getComputedStyle(seal).borderTopWidth);
          const [cx, cy] = [circle.left + circle.width / 2, circle.top + circle.height / 2];
          return [...seal.querySelectorAll('span')].map((word) => {
            const range = document.createRange();
            range.selectNodeContents(word);
            const box = range.getBoundingClientRect();
            const corners = [[box.left, box.top], [box.right, box.top], [box.left, box.bottom], [box.right, box.bottom]];
            return [word.textContent, Math.max(...corners.map(([x, y]) => Math.hypot(x - cx, y - cy))) - radius];
          });
        })()`)) as Array<[string, number]>;
        expect(past.map(([word]) => word)).toEqual(['SANDBOX', 'NOT VALID']);
        for (const [word, by] of past)
          expect(by, `${width} px, ${media}: ${word} reaches ${by.toFixed(1)} px past the circle`).toBeLessThanOrEqual(0);
      }
      await page.context().close();
    }
  });

  test('carbon open --print on the local engine writes the same sandbox certificate', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '1000', '--live'], { home });
    const bought = await json<{ id: string }>(['buy', '--kg', '10', '--live', '--yes'], { home });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const url = (await ok(['open', bought.id, '--print', '--live'], { home })).stdout.trim();
    const html = readFileSync(fileURLToPath(url), 'utf8');
    expect(html).toContain('<p class="sandbox-band" role="note"><strong>Sandbox — not a real purchase.</strong>');
    expect(html).toContain('SANDBOX</span><span>NOT VALID');
  });

  test('a sandbox report printed on many pages says SANDBOX on every one: a watermark fixed to the page, as the certificate has', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '1000', '--live'], { home });
    await ok(['buy', '--kg', '10', '--live', '--yes'], { home });
    const html = (await ok(['report', '--live', '--by', 'week', '--since', '2025-01-01', '--format', 'html'], { home })).stdout;
    const page = await (await chromium.browser.newContext({ viewport: { width: 1000, height: 800 } })).newPage();
    await page.route('**/*', (route) => route.abort());
    await page.setContent(html);
    await page.emulateMedia({ media: 'print' });
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    const pages = pagesDrawingIn(pdf, '.5412 .4275 0');
    expect(pages.length, 'pages').toBeGreaterThan(3);
    // The watermark's colour (#8a6d00, the band's border's too) on every page, not the first alone.
    expect(pages).toEqual(pages.map(() => true));
    // Fixed to the page, Chromium prints it on each one; hidden from screen readers, which have the band.
    const mark = page.locator('.watermark');
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.innerText()).toBe('SANDBOX');
    expect(await mark.getAttribute('aria-hidden')).toBe('true');
    expect(await mark.evaluate((el) => getComputedStyle(el).position)).toBe('fixed');
    await page.context().close();
  });

  test('the developer page printed on many pages says SANDBOX on every one, as the certificate and the report do', async () => {
    const { server } = served;
    const key = (await server.sandbox.defaultKey('test'))!;
    for (let i = 0; i < 40; i++) {
      const headers = { authorization: `Bearer ${key}`, 'idempotency-key': `papers-print-${i}` };
      expect((await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: '{"kg": 1}' })).status).toBe(201);
    }
    const context = await chromium.browser.newContext({ viewport: { width: 1000, height: 800 } });
    const [name, value] = (await sessionCookie(server)).split('=') as [string, string];
    await context.addCookies([{ name, value, url: server.origin }]);
    const page = await context.newPage();
    await page.goto(`${server.origin}/?mode=test`);
    await page.emulateMedia({ media: 'print' });
    const pages = pagesDrawingIn(await page.pdf({ format: 'A4', printBackground: true }), '.5412 .4275 0');
    expect(pages.length, 'pages').toBeGreaterThan(2);
    // Before, the band alone said it, on the first page.
    expect(pages).toEqual(pages.map(() => true));
    await page.emulateMedia({ media: 'screen' });
    expect(await page.locator('.watermark').isVisible()).toBe(false);
    await context.close();
  });

  test('the HTML report: a band that prints; at 390 px no wider than the screen, no month wrapped; --unit t in tonnes', async () => {
    const home = newHome();
    for (const [kg, reference] of [
      [12_345, 'ops-flights-to-the-annual-conference-and-back-again'],
      [500, 'fin'],
    ] as const)
      await ok(['buy', '--kg', String(kg), '--reference', reference, '--yes'], { home });
    await ok(['sandbox', 'clock', 'advance', '32d'], { home });
    await ok(['buy', '--kg', '1', '--yes'], { home });
    const page = await (await chromium.browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await page.route('**/*', (route) => route.abort());
    for (const by of ['month', 'week', 'quarter', 'reference']) {
      const html = (await ok(['report', '--format', 'html', '--unit', 't', '--by', by], { home })).stdout;
      await page.setContent(html);
      // The tab (and a printed page's header) says whose report it is first.
      expect(await page.title(), by).toMatch(/^Sandbox: Carbon offsets by /);
      expect(await page.evaluate('document.documentElement.scrollWidth'), by).toBeLessThanOrEqual(390);
      // The chart's text reads at 10 px or more (a chart scaled down to the screen shrank it to 7).
      const texts = await page.locator('svg text').evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect().height));
      expect(Math.min(...texts), `${by}: chart text heights ${texts}`).toBeGreaterThanOrEqual(10);
      // No column heading is broken inside a word ("proce/ssing"): each word's text sits on one line.
      const broken = await page.evaluate(`[...document.querySelectorAll('thead th')].flatMap((th) => {
        const text = th.firstChild;
        if (text === null || text.nodeType !== 3) return [];
        return [...text.data.matchAll(/\\S+/g)].filter((word) => {
          const range = document.createRange();
          range.setStart(text, word.index);
          range.setEnd(text, word.index + word[0].length);
          return range.getClientRects().length > 1;
        }).map((word) => word[0]);
      })`);
      expect(broken, by).toEqual([]);
      if (by !== 'reference') {
        const lines = await page.locator('tbody th, tfoot th').evaluateAll((cells) => cells.map((c) => c.getClientRects().length));
        expect(
          lines.every((n) => n === 1),
          `${by}: a period on one line`,
        ).toBe(true);
        const heights = await page
          .locator('tbody th')
          .evaluateAll((cells) => cells.map((c) => c.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(c).lineHeight)));
        expect(
          heights.every((h) => h < 2),
          `${by}: ${heights}`,
        ).toBe(true);
      }
    }
    expect(await page.locator('.sandbox').innerText()).toMatch(/^SANDBOX: NOT REAL PURCHASES\. No carbon credits were bought or retired/);
    await bandShown(page, '.sandbox');
    expect(await page.locator('thead th').allInnerTexts()).toEqual(['reference', 'offsets', 't', 'placed t', 'processing t', 'amount']);
    expect(await page.locator('tfoot td').nth(1).innerText()).toBe('12.846');
    await page.context().close();
  });
});

describe('report formats: the sandbox, the unit, Markdown that stays a table', () => {
  const HOSTILE = '<script>alert(1)</script> | *bold* _x_ `code` [a](http://e.example) ![i](x) ~~s~~ &amp; # h\nsecond line\r\nthird';

  test('Markdown escapes what Markdown and HTML would read; a newline never splits a row', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '7', '--reference', HOSTILE, '--yes'], { home });
    const md = (await ok(['report', '--format', 'md', '--by', 'reference'], { home })).stdout;
    const lines = md.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^> \*\*Sandbox: not real purchases\.\*\* No carbon credits were bought or retired/);
    const rows = lines.filter((l) => l.startsWith('|'));
    expect(rows).toHaveLength(4); // heading, rule, the row, the total
    const row = rows[2]!;
    // (Placed or still processing: a test offset places itself 3 s of real time later, so the split is not asserted.)
    expect(row).toMatch(
      /^\| &lt;script&gt;alert\\\(1\\\)&lt;\/script&gt; \\\| \\\*bold\\\* \\_x\\_ \\`code\\` \\\[a\\\]\\\(http:\/\/e\.example\\\) \\!\\\[i\\\]\\\(x\\\) \\~\\~s\\~\\~ &amp;amp; \\# h second line third \| 1 \| 7 \| [07] \| [07] \| \\\$0\.28 \|$/,
    );
    // Unescaped, the cell has exactly the five cell separators of a six-column row.
    expect(row.replace(/\\\|/g, '').match(/\|/g)).toHaveLength(7);
    expect(md).not.toMatch(/<script|<\/script/);
  });

  test("Markdown escapes every $, the amounts' and a reference's: viewers that read $…$ as math (Jupyter, Colab) show money", async () => {
    const home = newHome();
    await ok(['buy', '--kg', '7', '--reference', 'budget $5k-$10k', '--yes'], { home });
    const md = (await ok(['report', '--format', 'md', '--by', 'reference'], { home })).stdout;
    expect(md).toMatch(/^\| budget \\\$5k-\\\$10k \| 1 \| 7 \| [07] \| [07] \| \\\$0\.28 \|$/m);
    expect(md).toContain('| **total** | 1 | 7 |');
    // The total's row last in the table, then the line that says what was counted, for which mode.
    expect(md).toMatch(/\| \\\$0\.28 \|\n\n\*test mode; placed and processing offsets, refunded ones left out\.\*\n$/);
    // Not one $ left bare, anywhere in the document.
    expect(md).not.toMatch(/(^|[^\\])\$/m);
  });

  test('--unit t gives tonnes in CSV, JSON, plain and Markdown; kg stays the default; a bad unit is a usage error', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '1234', '--yes'], { home });
    const csv = (await ok(['report', '--format', 'csv', '--unit', 't'], { home })).stdout.split('\r\n');
    expect(csv[0]).toBe('month,offsets,t,placed_t,processing_t,amount_cents,livemode,environment');
    expect(csv[1]).toMatch(/^\d{4}-\d\d,1,1\.234,[01]\.\d{3},[01]\.\d{3},4936,false,sandbox: not a real purchase$/);
    const doc = await json<{ unit: string; sandbox: boolean; total: Record<string, number> }>(['report', '--unit', 't'], { home });
    expect(doc).toMatchObject({ unit: 't', sandbox: true, total: { t: 1.234, amount_cents: 4936 } });
    expect(doc.total).not.toHaveProperty('kg');
    expect(await json(['report'], { home })).toMatchObject({ unit: 'kg', total: { kg: 1234 } });
    expect((await ok(['report', '--format', 'plain', '--unit', 't'], { home })).stdout).toMatch(/\t1\t1\.234\t/);
    expect((await ok(['report', '--format', 'md', '--unit', 't'], { home })).stdout).toContain(
      '| month | offsets | t | placed t | processing t | amount |',
    );
    const bad = await carbon(['report', '--unit', 'lb'], { home });
    expect([bad.exitCode, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/kg, t/);
  });

  describe('on the remote engine', () => {
    const served = serveInProcess('carbon-papers-remote-');
    test("through carbon serve (its answers say Carbon-Sandbox: true) the report says it is the sandbox's too", async () => {
      const home = newHome();
      const key = (await served.server.sandbox.defaultKey('test'))!;
      const env = { CARBON_BASE_URL: served.server.url, CARBON_API_KEY: key };
      const csv = (await ok(['report', '--format', 'csv'], { home, env })).stdout;
      expect(csv.split('\r\n')[0]).toBe('month,offsets,kg,placed_kg,processing_kg,amount_cents,livemode,environment');
      expect((await ok(['report', '--format', 'md'], { home, env })).stdout).toMatch(/sandbox/i);
      expect((await ok(['report', '--format', 'html'], { home, env })).stdout).toContain('class="sandbox"');
      expect(await json(['report'], { home, env })).toMatchObject({ sandbox: true });
      // A service that does not say so gets nothing added: test/e2e/report.test.ts.
    });
  });
});
