import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Launched, launch, withChromium } from '../support/chromium.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * A form of the developer page sent twice, or sent after its session ended: a second click while
 * the first answer is on its way does not do it again, and a form from a page whose session ended
 * (signed out in another tab, a reset, 12 hours) says so, that nothing changed, and how to sign in.
 */

const SCREENS = [
  { name: 'a desktop, 1280×800', viewport: { width: 1280, height: 800 }, isMobile: false },
  { name: 'a phone, 390×844', viewport: { width: 390, height: 844 }, isMobile: true },
];

withChromium(describe, 'Developer page resubmit tests')('a form of the developer page is done once, or not at all', () => {
  let chromium: Launched;
  const start = Date.now();
  const served = serveInProcess('carbon-page-resubmit-', { clock: () => start });

  beforeAll(async () => {
    chromium = await launch();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  const balance = async () => (await served.server.sandbox.status()).balances.test;
  const signIn = async () => `${served.server.origin}/login?token=${await served.server.sandbox.pages.newLoginToken(Date.now())}`;

  for (const screen of SCREENS) {
    test(`on ${screen.name}, a form sent after signing out in another tab says nothing changed and how to sign in`, async () => {
      const context = await chromium.browser.newContext({ viewport: screen.viewport, isMobile: screen.isMobile });
      const page = await context.newPage();
      await page.goto(await signIn());
      const other = await context.newPage();
      await other.goto(`${served.server.origin}/`);
      await other.click('form[action="/logout"] button');
      await other.waitForURL(/signed_out/);
      const before = await balance();
      await page.fill('#topup-amount', '250');
      const answer = page.waitForResponse((r) => r.url().endsWith('/actions/topup'));
      await page.click('form[action="/actions/topup"] button');
      expect((await answer).status()).toBe(401);
      const text = await page.innerText('main');
      expect(text).toContain('You are signed out');
      expect(text).toContain('Nothing changed');
      expect(text).toContain('carbon sandbox login');
      expect(await balance()).toBe(before);
      await context.close();
    });
  }
});
