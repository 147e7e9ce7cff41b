import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { expectAxeClean, type Launched, launch, withChromium } from '../support/chromium.js';

/**
 * The developer page as a new user meets it, in Chromium at a desktop's 1280 px and a phone's
 * 390 px: nothing wider than the viewport, axe-core clean, a chart that explains itself, one
 * unit for money, the live view's defaults, a reference filter by prefix, and no 404 on a load.
 * CARBON_SCREENSHOTS=1 writes docs/developer-page-desktop.png and docs/developer-page-phone.png.
 */

// The page's own globals, in the functions evaluated in Chromium (this project type-checks without the DOM library).
interface Box {
  right: number;
}
interface El {
  tagName: string;
  id: string;
  classList: Iterable<string> & { contains(c: string): boolean };
  className: string;
  closest(s: string): El | null;
  getBoundingClientRect(): Box;
  getAttribute(n: string): string | null;
}
declare const document: {
  documentElement: { clientWidth: number; scrollWidth: number };
  querySelectorAll(s: string): Iterable<El>;
  activeElement: El | null;
};

const DAY = 86_400_000;
const SIZES = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

withChromium(describe, 'Developer page size tests')('the developer page at 1280 px and 390 px', () => {
  let dir: string;
  let server: RunningServer;
  let chromium: Launched;
  let context: BrowserContext;
  let page: Page;
  let testKey: string;
  const notFound: string[] = [];

  const buy = async (kg: number, reference?: string) => {
    const res = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${testKey}`,
        'content-type': 'application/json',
        'idempotency-key': `sizes-${kg}-${reference}-${Math.random()}`,
      },
      body: JSON.stringify({ kg, ...(reference === undefined ? {} : { reference }) }),
    });
    expect(res.status).toBe(201);
  };

  /** Nothing wider than the viewport: the document does not scroll sideways, and no element sticks out of it. */
  const fitsViewport = async (where: string) => {
    const wide = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const out = [...document.querySelectorAll('body *')]
        .filter((el) => !el.closest('.scroll') || el.classList.contains('scroll'))
        .filter((el) => el.getBoundingClientRect().right > width + 0.5)
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')} → ${Math.round(el.getBoundingClientRect().right)}`,
        );
      return { scroll: document.documentElement.scrollWidth, width, out: out.slice(0, 5) };
    });
    expect(wide.out, where).toEqual([]);
    expect(wide.scroll, where).toBeLessThanOrEqual(wide.width);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-page-sizes-'));
    // The model's clock stands still but for the test's own moves: no offset is placed by real seconds passing.
    const start = Date.now();
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), clock: () => start });
    testKey = (await server.sandbox.defaultKey('test'))!;
    chromium = await launch();
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('response', (r) => {
      if (r.status() === 404) notFound.push(r.url());
    });
    await page.goto(server.developerPageUrl);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a new account: no chart yet, then a first day said in words, not one bar at the edge of an empty month', async () => {
    await page.goto(`${server.origin}/`);
    expect(await page.locator('section[aria-labelledby="impact"]').innerText()).toContain('No purchases yet in test mode');
    await buy(500, 'ops-flight-2');
    await page.goto(`${server.origin}/`);
    expect(await page.locator('.first-day').innerText()).toMatch(
      /^500 kg bought today \(\d{4}-\d\d-\d\d\), the first day of purchases in test mode\./,
    );
    expect(await page.locator('.chart').count()).toBe(0);
  });

  test('the chart: a title with the span, date ticks, a kg scale, each value on hover and on keyboard focus', async () => {
    await server.sandbox.advanceClock(3 * DAY);
    await buy(200, '100%_green');
    await buy(40, '100xxgreen');
    await page.goto(`${server.origin}/`);
    const today = new Date(await server.sandbox.now()).toISOString().slice(0, 10);
    const first = new Date(Date.parse(`${today}T00:00:00Z`) - 6 * DAY).toISOString().slice(0, 10);
    expect(await page.locator('.chart figcaption').innerText()).toBe(
      `kg of CO2 bought per day (test), the last 7 days: ${first} to ${today}`,
    );
    expect(await page.locator('.chart .scale li').allInnerTexts()).toEqual(['500 kg', '250 kg', '0']);
    const ticks = await page.locator('.chart .ticks li').allInnerTexts();
    const short = (ms: number) => new Date(ms).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
    // A tick every second day of a week: the 1st, 3rd, 5th and 7th.
    expect(ticks).toEqual([0, 2, 4, 6].map((i) => short(Date.parse(`${first}T00:00:00Z`) + i * DAY)));
    // Hover: the bar's value shows.
    const last = page.locator('.chart .day').last();
    expect(await last.locator('.value').isVisible()).toBe(false);
    await last.hover();
    expect(await last.locator('.value').isVisible()).toBe(true);
    expect(await last.locator('.value').innerText()).toMatch(/: 240 kg$/);
    await page.mouse.move(0, 0);
    // Keyboard: Tab reaches the bars with purchases, and the focused one shows its value.
    await page.locator('#topup-amount').focus();
    let focused = '';
    for (let i = 0; i < 60 && !focused.startsWith('day'); i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => `${document.activeElement?.className ?? ''}`);
    }
    expect(focused).toMatch(/^day/);
    expect(await page.evaluate(() => document.activeElement!.getAttribute('aria-label'))).toMatch(/^\d{4}-\d\d-\d\d: 500 kg$/);
    expect(await page.locator('.day:focus .value').isVisible()).toBe(true);
  });

  test('money in one unit: the rate in $/kg, a top-up too small said in dollars and kept in its field', async () => {
    await page.goto(`${server.origin}/`);
    const account = await page.locator('section[aria-labelledby="account"]').innerText();
    expect(account).toContain('$0.04/kg');
    expect(account).not.toContain('millicents');
    await page.fill('#topup-amount', '10');
    await page.click('form[action="/actions/topup"] button');
    const notice = await page.locator('.notice.error').innerText();
    expect(notice).toBe('A top-up is from $250.00 to $1,000,000,000.00; $10.00 is less.');
    expect(await page.inputValue('#topup-amount')).toBe('10');
    // The keys say read-only, as the access column does; never the JSON's read_only.
    await page.goto(`${server.origin}/`);
    expect(await page.locator('main').innerText()).not.toContain('read_only');
    expect(await page.locator('main').innerText()).toContain('(default read-only)');
  });

  test('the live view creates live keys by default; the test view test keys', async () => {
    await page.goto(`${server.origin}/?mode=live`);
    expect(await page.inputValue('#key-mode')).toBe('live');
    await page.goto(`${server.origin}/?mode=test`);
    expect(await page.inputValue('#key-mode')).toBe('test');
  });

  test('the reference filter matches by prefix; % and _ are plain characters', async () => {
    const refs = async (prefix: string) => {
      await page.goto(`${server.origin}/?${new URLSearchParams({ mode: 'test', reference: prefix })}`);
      return (await page.locator('section[aria-labelledby="offsets"] tbody tr td:nth-child(5)').allInnerTexts()).sort();
    };
    expect(await refs('ops')).toEqual(['ops-flight-2']);
    expect(await refs('100%_')).toEqual(['100%_green']);
    expect(await refs('100')).toEqual(['100%_green', '100xxgreen']);
    expect(await page.locator('label[for="f-reference"]').innerText()).toBe('Reference starts with');
  });

  test.each(SIZES)(
    'at $width px ($name): nothing wider than the viewport, keys on one line, axe-core clean, no 404',
    async ({ name, width, height }) => {
      await page.setViewportSize({ width, height });
      for (let i = 0; i < 12; i++) await buy(1000 + i, `team-${'long-reference-'.repeat(3)}${i}`);
      notFound.length = 0;
      for (const path of ['/?mode=test', '/?mode=live']) {
        await page.goto(`${server.origin}${path}`);
        await fitsViewport(`${name} ${path}`);
        await expectAxeClean(page, `${name} ${path}`);
      }
      await page.goto(`${server.origin}/?mode=test`);
      // Masked keys never wrap (`ck_test_…` / `qqnv` on two lines).
      const lines = await page
        .locator('section[aria-labelledby="keys"] td code')
        .evaluateAll((codes) => codes.map((c) => c.getClientRects().length));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((n) => n === 1)).toBe(true);
      expect(notFound).toEqual([]);
      const icon = await fetch(`${server.origin}/favicon.ico`);
      expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
      await page.screenshot({
        path: process.env.CARBON_SCREENSHOTS === '1' ? join('docs', `developer-page-${name}.png`) : join(dir, `${name}.png`),
        fullPage: true,
      });
    },
  );
});
