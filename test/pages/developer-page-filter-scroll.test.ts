import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { type Launched, launch, withChromium } from '../support/chromium.js';
import { middayToday, serveInProcess } from '../support/in-process-server.js';

/**
 * On a phone the dashboard's offsets are several screens down: what their filter form and their
 * Older/Newest links lead to opens at the offsets' heading (the list, or what is wrong with the
 * filter, under it), not at the top of the page with the answer out of sight.
 */

withChromium(describe, 'Developer page filter scroll tests')("the dashboard's offsets filter on a phone", () => {
  let server: RunningServer;
  let chromium: Launched;

  const start = middayToday();
  const served = serveInProcess('carbon-page-filter-scroll-', { clock: () => start });

  beforeAll(async () => {
    server = served.server;
    const key = (await server.sandbox.defaultKey('test'))!;
    // More than a page (20): the Older link is there.
    for (let n = 0; n < 21; n++) {
      const made = await fetch(`${server.url}/offsets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `scroll-${n}` },
        body: JSON.stringify({ kg: 10, reference: 'scroll' }),
      });
      expect(made.status).toBe(201);
    }
    chromium = await launch();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  /** The offsets' heading is on the screen (once the browser's scroll to #offsets is done). */
  async function expectHeadingShown(page: Page, where: string): Promise<void> {
    const shown = () =>
      page.evaluate<boolean>(
        "(() => { const top = document.getElementById('offsets').getBoundingClientRect().top; return top >= 0 && top < 844; })()",
      );
    await expect.poll(shown, { message: where, timeout: 3000 }).toBe(true);
  }

  test('at 390×844, a filter sent, an invalid one, and the Older and Newest links each open at the offsets heading', async () => {
    const phone = await chromium.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await phone.newPage();
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    // Several screens down: off screen as the page opens.
    expect(await page.evaluate<number>("document.getElementById('offsets').getBoundingClientRect().top")).toBeGreaterThan(844);

    await page.selectOption('#f-status', 'processing');
    await page.click('form.filters button');
    await page.waitForURL(/status=processing/);
    await expectHeadingShown(page, 'a filter sent');
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').first().isVisible()).toBe(true);

    await page.click('a[rel="next"]');
    await page.waitForURL(/after=/);
    await expectHeadingShown(page, 'Older offsets');
    await page.click('a[rel="first"]');
    await page.waitForURL((url) => !url.search.includes('after='));
    await expectHeadingShown(page, 'Newest offsets');

    // A date that is no date: the notice under the heading is on the screen too.
    await page.goto(`${server.origin}/?mode=test&since=2026-02-30`);
    await page.fill('#f-since', '2026-02-31');
    await page.click('form.filters button');
    await page.waitForURL(/since=2026-02-31/);
    await expectHeadingShown(page, 'an invalid filter');
    const notice = (await page.locator('section[aria-labelledby="offsets"] .notice.error').boundingBox())!;
    expect(notice.y + notice.height).toBeLessThanOrEqual(844);
    await phone.close();
  });
});
