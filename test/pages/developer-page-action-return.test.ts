import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningServer } from '../../src/server/server.js';
import { expectAxeClean, type Launched, launch, withChromium } from '../support/chromium.js';
import { middayToday, serveInProcess } from '../support/in-process-server.js';
import { limit } from '../support/load.js';

/**
 * A form of the developer page is sent from where the person scrolled to; the redirect after it
 * brings them back there (/?mode=…#notice), with what it did (or what is wrong) under the
 * section's heading, on the screen: not at the top of the page, screens above the form on a phone.
 * The notice has the focus: a screen reader says it, and Tab goes on from it, not from the page's top.
 */

const SCREENS = [
  { name: 'a desktop, 1280×800', viewport: { width: 1280, height: 800 }, isMobile: false },
  { name: 'a phone, 390×844', viewport: { width: 390, height: 844 }, isMobile: true },
];

withChromium(describe, 'Developer page action return tests')('each action of the developer page returns to its section', () => {
  let server: RunningServer;
  let chromium: Launched;
  // The wall clock held still: the test offsets stay processing (they place after 3 s) until the
  // test moves the model's clock itself, however long a loaded machine takes to click through.
  const start = middayToday();
  const served = serveInProcess('carbon-page-action-return-', { clock: () => start });
  /** Purchases made so far: each one's Idempotency-Key is its own. */
  let bought = 0;

  beforeAll(async () => {
    server = served.server;
    chromium = await launch();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  /** A purchase through the API with the mode's default key, its Idempotency-Key its own. */
  async function buy(mode: 'test' | 'live', body: { kg: number; reference?: string }): Promise<void> {
    const key = (await server.sandbox.defaultKey(mode))!;
    const made = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `return-${++bought}` },
      body: JSON.stringify(body),
    });
    expect(made.status).toBe(201);
  }

  /** Offsets to act on: two processing test ones (to fail) and a live one waiting for review (to approve). */
  async function offsetsToActOn(): Promise<void> {
    for (let n = 0; n < 2; n++) await buy('test', { kg: 10 });
    await server.sandbox.topUp('live', 100_000);
    await server.sandbox.setReviewLimit(100);
    await buy('live', { kg: 500 });
  }

  /**
   * The page the form's redirect led to is at its notice (the address's fragment), in `section`:
   * the section's heading on the screen and, under it, the one notice, whole on the screen and focused.
   */
  async function expectReturned(page: Page, section: string, kind: 'ok' | 'error', says: string): Promise<void> {
    await page.waitForURL((url) => url.hash === '#notice', { timeout: 5000 });
    const height = page.viewportSize()!.height;
    const headingTop = () => page.evaluate<number>(`document.getElementById(${JSON.stringify(section)}).getBoundingClientRect().top`);
    await expect
      .poll(async () => (await headingTop()) >= 0 && (await headingTop()) < height, { message: section, timeout: 3000 })
      .toBe(true);
    const notice = page.locator('.notice');
    expect(await notice.count(), section).toBe(1);
    expect(await notice.getAttribute('class'), section).toBe(`notice ${kind}`);
    expect(await notice.innerText(), section).toContain(says);
    const inSection = `document.getElementById(${JSON.stringify(section)}).closest('section').contains(document.querySelector('.notice'))`;
    expect(await page.evaluate<boolean>(inSection), section).toBe(true);
    const box = (await notice.boundingBox())!;
    expect([box.y >= 0, box.y + box.height <= height], `the notice at #${section} is on the screen`).toEqual([true, true]);
    await expectFocused(page, `#${section}`, kind, says);
  }

  /**
   * The notice has the focus as the page opens, with its role (an error an alert, what was done a
   * status) and the result as its text; the next Tab goes on from it (to the first control after it), not from the page's top.
   */
  async function expectFocused(page: Page, where: string, kind: 'ok' | 'error', says: string): Promise<void> {
    const focused = () => page.evaluate<string>('document.activeElement.id');
    await expect.poll(focused, { message: `the notice at ${where} has the focus`, timeout: 3000 }).toBe('notice');
    const said = await page.evaluate<string[]>("[document.activeElement.getAttribute('role'), document.activeElement.innerText]");
    expect(said, where).toEqual([kind === 'error' ? 'alert' : 'status', expect.stringContaining(says)]);
    // The first control after the notice that is on the page (not in a closed <details>).
    const after = `(() => {
      const notice = document.getElementById('notice');
      const controls = document.querySelectorAll('a[href], button, input:not([type=hidden]), select, summary, [tabindex="0"]');
      const next = [...controls].find((c) => notice.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING && c.getClientRects().length > 0);
      return next === undefined ? 'none' : next === document.activeElement ? 'the first control after the notice' : next.outerHTML;
    })()`;
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>(after), `Tab from the notice at ${where}`).toBe('the first control after the notice');
  }

  /**
   * A form's field sent wrong, then right: refused at `section` with what was typed kept in the
   * field, then done there.
   */
  async function refusedThenDone(
    page: Page,
    form: { field: string; action: string; section: string },
    wrong: { value: string; says: string },
    right: { value: string; says: string },
  ): Promise<void> {
    await page.fill(form.field, wrong.value);
    await page.click(`form[action="/actions/${form.action}"] button`);
    await expectReturned(page, form.section, 'error', wrong.says);
    await expectAxeClean(page, `a refused ${form.action}'s alert, focused`);
    expect(await page.inputValue(form.field)).toBe(wrong.value);
    await page.fill(form.field, right.value);
    await page.click(`form[action="/actions/${form.action}"] button`);
    await expectReturned(page, form.section, 'ok', right.says);
  }

  test('failing an offset of a filtered list returns to that list, its filter and page kept, not to the newest offsets unfiltered', async () => {
    for (const reference of ['kept-a', 'other', 'kept-b', 'other', 'kept-c']) await buy('test', { kg: 3, reference });
    const context = await chromium.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    await page.goto(`${server.origin}/?mode=test&status=processing&reference=kept#offsets`);
    const references = () => page.locator('table.offsets td.wide').allInnerTexts();
    expect(await references()).toEqual(['kept-c', 'kept-b', 'kept-a']);
    await page.locator('table.offsets summary').first().click();
    await page.locator('form[action="/actions/fail"] button').first().click();
    await expectReturned(page, 'offsets', 'ok', 'refunded');
    const address = new URL(page.url());
    expect([address.searchParams.get('status'), address.searchParams.get('reference'), address.searchParams.get('mode')]).toEqual([
      'processing',
      'kept',
      'test',
    ]);
    expect(await page.inputValue('#f-reference')).toBe('kept');
    // The list is the filtered one still: the failed offset, refunded, has left "processing".
    expect(await references()).toEqual(['kept-b', 'kept-a']);
    await context.close();
  });

  test.each(SCREENS)('on $name: the result of each form is shown where the form was', async ({ viewport, isMobile }) => {
    await offsetsToActOn();
    const context: BrowserContext = await chromium.browser.newContext({ viewport, isMobile, hasTouch: isMobile });
    const page = await context.newPage();
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    // Each form is sent from a page opened anew (the click scrolls to it), as a person who scrolled down to it.
    const open = (mode = 'test') => page.goto(`${server.origin}/?mode=${mode}`);

    await open();
    await refusedThenDone(
      page,
      { field: '#topup-amount', action: 'topup', section: 'account' },
      { value: '10', says: '$10.00 is less' },
      { value: '300', says: 'Topped up test mode with $300.00' },
    );

    await open();
    await page.locator('table.offsets summary').first().click();
    await page.locator('form[action="/actions/fail"] button').first().click();
    await expectReturned(page, 'offsets', 'ok', 'refunded');

    await open('live');
    await page.locator('form[action="/actions/approve"] button').first().click();
    await expectReturned(page, 'review', 'ok', 'Approved');
    expect(new URL(page.url()).search).toBe('?mode=live');

    await open();
    await page.click('form[action="/actions/key-create"] button');
    await expectReturned(page, 'keys', 'ok', 'Created test key');
    // The secret, shown this once, is on the screen too, under the notice.
    const secret = (await page.locator('#new-secret').boundingBox())!;
    expect(secret.y + secret.height).toBeLessThanOrEqual(viewport.height);
    await expectAxeClean(page, 'a new key shown in the keys section');
    const id = (await page.locator('#new-key').innerText()).replace('New key ', '');
    await open();
    const row = page.locator('table.keys tr', { hasText: id });
    await row.locator('summary').click();
    await row.locator('form[action="/actions/key-revoke"] button').click();
    await expectReturned(page, 'keys', 'ok', 'revoked');

    await open();
    await refusedThenDone(
      page,
      { field: '#c-clock', action: 'clock', section: 'controls' },
      { value: 'soon', says: 'not "soon"' },
      { value: '1m', says: 'clock moved' },
    );

    await open();
    await refusedThenDone(
      page,
      { field: '#f-rate', action: 'faults', section: 'faults' },
      { value: '2', says: 'share from 0 to 1' },
      { value: '0.5', says: 'Faults are on' },
    );
    await expectAxeClean(page, 'a notice in the faults');
    await page.click('form[action="/actions/faults-off"] button');
    await expectReturned(page, 'faults', 'ok', 'Faults are off');

    await open();
    await page.locator('summary', { hasText: 'Reset the sandbox' }).click();
    await page.click('form[action="/actions/reset"] button');
    await expectReturned(page, 'controls', 'ok', 'starts over');
    await context.close();
  });
  test.each(SCREENS)(
    "on $name: a notice opened without its fragment (an older carbon's ?done=) has the focus too",
    async ({ viewport, isMobile }) => {
      const context = await chromium.browser.newContext({ viewport, isMobile, hasTouch: isMobile });
      const page = await context.newPage();
      await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
      await page.goto(`${server.origin}/?mode=test&done=rate`);
      const box = (await page.locator('#notice').boundingBox())!;
      expect([box.y >= 0, box.y + box.height <= viewport.height]).toEqual([true, true]);
      await expectFocused(page, 'the top', 'ok', 'The rate is set.');
      await expectAxeClean(page, 'a notice at the top, focused');
      await context.close();
    },
  );
  test("without JavaScript, a form's notice has the focus all the same (the browser focuses the #notice it opens at)", async () => {
    const context = await chromium.browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    await page.goto(`${server.origin}/?mode=test`);
    await page.fill('#c-rate', '1234');
    await page.click('form[action="/actions/rate"] button');
    await expectReturned(page, 'controls', 'ok', 'The rate is 1,234 millicents per kg: $12.34 a tonne.');
    await context.close();
  });

  test('without JavaScript, ?refresh=N still reloads the page every N s (the browser does it)', async () => {
    const context = await chromium.browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    let loads = 0;
    page.on('load', () => loads++);
    await page.goto(`${server.origin}/?mode=test&refresh=1`);
    // Before: no reload without JavaScript, though the header said "Stop refreshing".
    await expect.poll(() => loads, { timeout: limit(15_000) }).toBeGreaterThanOrEqual(2);
    expect(page.url()).toBe(`${server.origin}/?mode=test&refresh=1`);
    await context.close();
  });
});
