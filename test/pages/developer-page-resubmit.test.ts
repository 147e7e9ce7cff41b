import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Launched, launch, withChromium } from '../support/chromium.js';
import { middayToday, serveInProcess } from '../support/in-process-server.js';

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
  const start = middayToday();
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
    test(`on ${screen.name}, Top up clicked again while the first is on its way tops up once`, async () => {
      const context = await chromium.browser.newContext({ viewport: screen.viewport, isMobile: screen.isMobile });
      const page = await context.newPage();
      await page.goto(await signIn());
      // The server is slow to answer the first top-up: it waits until the test lets it go.
      const sandbox = served.server.sandbox as unknown as { topUp: (...a: unknown[]) => Promise<unknown> };
      const topUp = sandbox.topUp;
      let arrived!: () => void;
      let release!: () => void;
      const first = new Promise<void>((r) => (arrived = r));
      const gate = new Promise<void>((r) => (release = r));
      let secondCame!: () => void;
      const again = new Promise<void>((r) => (secondCame = r));
      let calls = 0;
      sandbox.topUp = async (...args: unknown[]) => {
        if (++calls > 1) secondCame();
        if (calls === 1) {
          arrived();
          await gate;
        }
        return topUp.apply(served.server.sandbox, args);
      };
      try {
        const before = await balance();
        await page.fill('#topup-amount', '250');
        // Clicked, then again (and again), impatient, while the first top-up is being made.
        await page.evaluate(`(() => {
          const button = document.querySelector('form[action="/actions/topup"] button');
          button.click();
          setTimeout(() => button.click(), 50);
          setTimeout(() => button.click(), 100);
        })()`);
        await first;
        // The first answers once the second has come (without the guard), or a second at most.
        await Promise.race([again, new Promise((r) => setTimeout(r, 1000))]);
        release();
        await page.waitForSelector('.notice.ok');
        expect(await page.textContent('.notice.ok')).toContain('Topped up test mode with $250.00');
        expect(await balance()).toBe(before + 25_000);
        expect(calls).toBe(1);
        // On the page its answer led to, the form is sent again when asked.
        await page.fill('#topup-amount', '300');
        await page.click('form[action="/actions/topup"] button');
        await page.waitForSelector('.notice.ok >> text=$300.00');
        expect(await balance()).toBe(before + 55_000);
      } finally {
        sandbox.topUp = topUp;
        await context.close();
      }
    });

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
