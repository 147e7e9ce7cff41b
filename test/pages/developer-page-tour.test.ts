import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { expectAxeClean, type Launched, launch, withChromium } from '../support/chromium.js';
import { middayToday } from '../support/in-process-server.js';

/**
 * The developer page as a newcomer meets it, in Chromium: how to sign in, what a signed-in owner
 * sees for something that is not there, a refused form tried again, and the page on a phone.
 */

/** In the page: every visible control under 40 px high (a checkbox measured by its label), named. */
const SMALL_TARGETS = `[...document.querySelectorAll('a, button, input, select, summary')]
  .filter((e) => e.offsetParent !== null && e.type !== 'hidden')
  .map((e) => (e.type === 'checkbox' ? (e.closest('label') ?? e) : e))
  .map((e) => ({ what: e.tagName + ' ' + (e.textContent || e.name || '').trim().slice(0, 30), h: e.getBoundingClientRect().height }))
  .filter((t) => t.h < 40)
  .map((t) => t.what + ' (' + Math.round(t.h) + ' px)')`;

withChromium(describe, 'Developer page tour tests')('the developer page, as a newcomer uses it', () => {
  let dir: string;
  let server: RunningServer;
  let chromium: Launched;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  /** The shared tab, signed in with a link of its own: each test signs in itself, so none depends on another's run or order. */
  async function signIn(at = '/'): Promise<void> {
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    if (at !== '/') await page.goto(`${server.origin}${at}`);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-page-tour-'));
    const start = middayToday();
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), clock: () => start });
    chromium = await launch();
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    expect(errors).toEqual([]);
    await chromium?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // `carbon sandbox login` hands the browser a file that leads on to the link (e2e/login.test.ts),
  // as a chat or an email would: a navigation from another site, after which a browser sends no
  // SameSite=Strict cookie with a redirect. The page must still open signed in.
  test('a login link opened from another site (a file, a chat) signs in: the page opens, not the sign-in page', async () => {
    const out = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const link = `${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`;
    const file = join(dir, 'login.html');
    writeFileSync(file, `<!doctype html><meta http-equiv="refresh" content="0;url=${link}"><a href="${link}">sign in</a>`);
    const tab = await out.newPage();
    await tab.goto(pathToFileURL(file).href);
    await tab.waitForURL(`${server.origin}/`);
    await tab.waitForLoadState('load');
    expect(await tab.title()).toBe('carbon sandbox (test)');
    await out.close();
  });

  test('signed out, the page says how to get a login link: carbon sandbox login, not a restart', async () => {
    const out = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const fresh = await out.newPage();
    for (const path of ['/', '/requests', '/login?token=used-or-wrong']) {
      await fresh.goto(`${server.origin}${path}`);
      const text = await fresh.textContent('main');
      expect(text, path).toContain('carbon sandbox login');
      expect(text, path).not.toContain('start the server again');
    }
    await expectAxeClean(fresh, 'signed out');
    await out.close();
  });

  test('the login link opened again by the browser it signed in leads to the page; anywhere else it is refused', async () => {
    const link = `${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`;
    const own = await chromium.browser.newContext();
    const p = await own.newPage();
    await p.goto(link);
    const again = await p.goto(link);
    expect(again!.status()).toBe(200);
    expect(p.url()).toBe(`${server.origin}/`);
    expect(await p.textContent('body')).toContain('Test balance');
    await own.close();
    const elsewhere = await fetch(link, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('set-cookie')).toBeNull();
  });

  test('signed in, an offset or a request that is not there is a 404 with the way back, not the sign-in page', async () => {
    await signIn();
    for (const path of ['/offsets/off_nope', '/requests/req_nope']) {
      const res = await page.goto(`${server.origin}${path}`);
      expect(res!.status(), path).toBe(404);
      expect(await page.title(), path).not.toContain('sign in');
      const text = await page.textContent('main');
      expect(text, path).toMatch(/There is no/);
      expect(text, path).not.toMatch(/sign in|login|start the server/i);
      await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(1);
      await page.getByRole('link', { name: '← Developer page' }).click();
      await page.waitForURL(`${server.origin}/`);
      expect(await page.textContent('body'), path).toContain('Test balance');
    }
    await page.goto(`${server.origin}/offsets/off_nope`);
    await expectAxeClean(page, 'offset not found');
  });

  test("a browser's path that is no page is an HTML 404, not the API's JSON nor the dashboard at a wrong address", async () => {
    await signIn();
    for (const path of ['/nope', '/offsets/a/b', '/logout', '/_page/nope', '/actions/topup']) {
      const res = await page.goto(`${server.origin}${path}`);
      expect(res!.status(), path).toBe(404);
      expect(res!.headers()['content-type'], path).toContain('text/html');
      expect(await page.textContent('main'), path).toContain(`There is no page at ${path}.`);
      expect(await page.locator('#account').count(), path).toBe(0);
    }
    await page.getByRole('link', { name: '← Developer page' }).click();
    await page.waitForURL(`${server.origin}/`);
    // Signed out, the sign-in page (HTML); the API's own paths keep the API's JSON.
    const out = await fetch(`${server.origin}/nope`, { headers: { accept: 'text/html' } });
    expect([out.status, out.headers.get('content-type')]).toEqual([401, 'text/html; charset=utf-8']);
    const apiPath = await fetch(`${server.origin}/api/v1/nope`, { headers: { accept: 'text/html' } });
    expect([apiPath.status, apiPath.headers.get('content-type')]).toEqual([404, 'application/json']);
  });

  test('a live top-up refused from the test view keeps live chosen: corrected, it tops up live, not test', async () => {
    const balance = async (mode: 'test' | 'live') => (await server.sandbox.status()).balances[mode];
    const before = { test: await balance('test'), live: await balance('live') };
    await signIn('/?mode=test');
    await page.selectOption('#topup-mode', 'live');
    await page.fill('#topup-amount', '100');
    await page.click('form[action="/actions/topup"] button');
    expect(await page.textContent('.notice.error')).toContain('$100.00 is less');
    expect(await page.inputValue('#topup-mode')).toBe('live');
    expect(await page.inputValue('#topup-amount')).toBe('100');
    await page.fill('#topup-amount', '300');
    await page.click('form[action="/actions/topup"] button');
    expect(await page.textContent('.notice.ok')).toContain('Topped up live mode with $300.00');
    expect(await balance('live')).toBe(before.live + 30_000);
    expect(await balance('test')).toBe(before.test);
    // A view of its own mode again: nothing typed is left over.
    await page.reload();
    expect(await page.inputValue('#topup-mode')).toBe('test');
  });

  test('a refused form comes back with what was typed into it: the faults form whole, the clock, a setting', async () => {
    await signIn();
    const rateNow = String((await server.sandbox.status()).account.rate);
    await page.fill('#f-rate', '2');
    await page.uncheck('input[name=errors][value="429"]');
    await page.uncheck('input[name=errors][value="drop-after"]');
    await page.fill('#f-latency', '10ms-20ms');
    await page.selectOption('#f-route', 'GET /balance');
    await page.selectOption('#f-mode', 'live');
    await page.fill('#f-seed', '42');
    await page.fill('#f-retry', '3');
    await page.click('form[action="/actions/faults"] button');
    expect(await page.textContent('.notice.error')).toContain('not "2"');
    expect(await page.textContent('#faults-now')).toContain('Off');
    const checked = await page
      .locator('input[name=errors]:checked')
      .evaluateAll((boxes) => boxes.map((b) => (b as unknown as { value: string }).value));
    expect(checked).toEqual(['500', '503', 'drop-before']);
    const values = async (ids: string[]) => Promise.all(ids.map((id) => page.inputValue(id)));
    expect(await values(['#f-rate', '#f-latency', '#f-route', '#f-mode', '#f-seed', '#f-retry'])).toEqual([
      '2',
      '10ms-20ms',
      'GET /balance',
      'live',
      '42',
      '3',
    ]);
    // Only the refused form: the others start from their setting.
    expect(await page.inputValue('#c-rate')).toBe(rateNow);
    await page.fill('#c-clock', 'soon');
    await page.click('form[action="/actions/clock"] button');
    expect(await page.inputValue('#c-clock')).toBe('soon');
    expect(await page.textContent('.notice.error')).toBe(
      'The duration must be a duration such as 90s, 15m, 2h, 1d, 1w or 1h30m (units: ms, s, m, h, d, w), not "soon".',
    );
    // A zero is said as the CLI says it, not as badly written (before: "is like 90s, 15m, 2h or 1d").
    await page.fill('#c-clock', '0s');
    await page.click('form[action="/actions/clock"] button');
    expect(await page.textContent('.notice.error')).toContain('must be a duration above zero (the clock only moves forward');
    expect(await page.inputValue('#f-rate')).toBe('');
    await page.fill('#c-rate', '-5');
    await page.click('form[action="/actions/rate"] button');
    expect(await page.locator('.notice.error').count()).toBe(1);
    expect(await page.inputValue('#c-rate')).toBe('-5');
    await page.reload();
    expect(await page.inputValue('#c-rate')).toBe(rateNow);
  });

  test('a filter date that is no date is said by the form and kept in its field; fixed there, the offsets are listed', async () => {
    await signIn();
    const res = await page.goto(`${server.origin}/?mode=test&since=2026-02-30`);
    expect(res!.status()).toBe(422);
    expect(await page.textContent('section[aria-labelledby="offsets"] .notice.error')).toContain('From: "2026-02-30" is not a date.');
    expect(await page.inputValue('#f-since')).toBe('2026-02-30');
    expect(await page.locator('section[aria-labelledby="offsets"] table').count()).toBe(0);
    await expectAxeClean(page, 'a filter date that is no date');
    await page.fill('#f-since', '2000-01-01');
    await page.click('form.filters button');
    await page.waitForURL(/since=2000-01-01/);
    expect(await page.locator('.notice.error').count()).toBe(0);
    expect(await page.getAttribute('#f-since', 'type')).toBe('date');
    expect(await page.textContent('section[aria-labelledby="offsets"]')).not.toContain('not listed');
  });

  test.each([
    [
      'a filter status that is no status is said by the form, the other fields kept; a status chosen there, the offsets are listed',
      'status=bogus',
      'Status: "bogus" is not a status: choose processing, placed or refunded (or any).',
      'a filter status that is no status',
    ],
    [
      'a filter given twice in the address is said by the form as a bad one is; one chosen there, the offsets are listed',
      'status=placed&status=refunded',
      'Status: given 2 times, "placed" and "refunded"; a filter takes one value.',
      'a filter given twice',
    ],
  ])('%s', async (_what, status, said, axe) => {
    await signIn();
    const res = await page.goto(`${server.origin}/?mode=test&${status}&since=2000-01-01`);
    expect(res!.status()).toBe(422);
    expect(await page.textContent('section[aria-labelledby="offsets"] .notice.error')).toContain(said);
    expect(await page.getAttribute('#f-status', 'aria-invalid')).toBe('true');
    expect(await page.inputValue('#f-since')).toBe('2000-01-01');
    expect(await page.locator('section[aria-labelledby="offsets"] table').count()).toBe(0);
    await expectAxeClean(page, axe);
    await page.selectOption('#f-status', 'processing');
    await page.click('form.filters button');
    await page.waitForURL(/status=processing/);
    expect(await page.locator('.notice.error').count()).toBe(0);
    expect(await page.getAttribute('#f-status', 'aria-invalid')).toBeNull();
    expect(await page.textContent('section[aria-labelledby="offsets"]')).not.toContain('not listed');
  });

  test('a form from a tab opened before signing in again is refused as stale, not as cross-site, with the way back', async () => {
    const before = (await server.sandbox.status()).account.rate;
    const ctx = await chromium.browser.newContext();
    const [first, second] = [await ctx.newPage(), await ctx.newPage()];
    await first.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    await second.goto(`${server.origin}/`);
    await first.click('form[action="/logout"] button');
    await first.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    await second.fill('#c-rate', '5000');
    await second.click('form[action="/actions/rate"] button');
    const text = await second.textContent('main');
    expect(text).toContain('opened before this sign-in');
    expect(text).not.toMatch(/cross-site|carbon sandbox login/);
    expect((await server.sandbox.status()).account.rate).toBe(before);
    await second.getByRole('link', { name: '← Developer page' }).click();
    await second.fill('#c-rate', '5000');
    await second.click('form[action="/actions/rate"] button');
    expect(await second.textContent('.notice.ok')).toContain('The rate is 5,000 millicents per kg: $50.00 a tonne.');
    expect((await server.sandbox.status()).account.rate).toBe(5000);
    await ctx.close();
  });

  test('the standing control starts from the standing now, as the other controls start from their setting', async () => {
    await signIn();
    expect(await page.inputValue('#c-status')).toBe('active');
    await page.selectOption('#c-status', 'suspended');
    await page.click('form[action="/actions/status"] button');
    expect(await page.textContent('.standing')).toBe('suspended');
    expect(await page.inputValue('#c-status')).toBe('suspended');
    // The notice says what the standing shuts, as `carbon sandbox account suspended` does.
    expect(await page.textContent('.notice.ok')).toContain('The account is suspended: every API request now gets 403 api_access_inactive.');
    await page.selectOption('#c-status', 'active');
    await page.click('form[action="/actions/status"] button');
    expect(await page.inputValue('#c-status')).toBe('active');
    expect(await page.textContent('.notice.ok')).toContain('The account is active.');
  });

  test("a new key's Copy button is there only with JavaScript, and copies; without it the secret is still shown", async () => {
    for (const javaScriptEnabled of [false, true]) {
      const ctx = await chromium.browser.newContext({ javaScriptEnabled, permissions: ['clipboard-read', 'clipboard-write'] });
      const p = await ctx.newPage();
      const pageErrors: string[] = [];
      p.on('pageerror', (e) => pageErrors.push(e.message));
      await p.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
      await p.click('form[action="/actions/key-create"] button');
      const secret = await p.inputValue('#new-secret');
      expect(secret).toMatch(/^ck_test_/);
      const copy = p.locator('button[data-copy]');
      expect(await copy.isVisible(), `JavaScript ${javaScriptEnabled}`).toBe(javaScriptEnabled);
      if (javaScriptEnabled) {
        // The clipboard takes a write from the focused page only: this one, whatever else the browser has open.
        await p.bringToFront();
        await copy.click();
        // The clipboard's write settles after the click: the button says so once it has.
        await expect.poll(() => copy.textContent(), { timeout: 5000 }).toBe('Copied');
        expect(await p.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
      }
      expect(pageErrors).toEqual([]);
      await ctx.close();
    }
  });

  test('on a phone and a touch tablet, every control is a tap target at least 40 px high (a checkbox by its label)', async () => {
    const key = (await server.sandbox.defaultKey('test'))!;
    // More than a page of offsets (20) and of requests (50): the Older links are there too.
    let id = '';
    let request = '';
    for (let n = 0; n < 51; n++) {
      const made = await fetch(`${server.url}/offsets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `tour-tap-${n}` },
        body: JSON.stringify({ kg: 10, reference: 'tap' }),
      });
      id = ((await made.json()) as { id: string }).id;
      request = made.headers.get('request-id')!;
    }
    await server.sandbox.journal.flush();
    // A tablet wider than a phone's layout, but touched: its controls are a finger's too.
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 768, height: 1024 },
    ]) {
      const touch = await chromium.browser.newContext({ viewport, isMobile: true, hasTouch: true });
      const p = await touch.newPage();
      await p.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
      // A request's page links its offset: alone in its line, a tap target too.
      for (const path of ['/', `/offsets/${id}`, '/requests', `/requests/${request}`]) {
        const where = `${viewport.width} px ${path}`;
        await p.goto(`${server.origin}${path}`);
        if (path === '/' || path === '/requests') expect(await p.locator('a', { hasText: 'Older' }).count(), where).toBe(1);
        await p.goto(`${server.origin}${path}`);
        const small = await p.evaluate<string[]>(SMALL_TARGETS);
        expect(small, where).toEqual([]);
        expect(await p.evaluate<number>('document.documentElement.scrollWidth'), where).toBeLessThanOrEqual(viewport.width);
      }
      await touch.close();
    }
  });

  test("an action's notice shows once: not in the address, so a reload does not say it again (the reset's too)", async () => {
    await signIn('/?mode=live');
    for (const [form, fill, notice] of [
      // Said with the value set (before: "The review limit is set." alone).
      [
        'review-limit',
        async () => page.fill('#c-review', '5000'),
        'The review limit is $5,000.00: a live purchase above it waits for review.',
      ],
      // Said by how much, and to when (before: "The model clock moved forward." alone).
      ['clock', async () => page.fill('#c-clock', '1m'), 'The model clock moved forward 1m: it is now 20'],
      ['reset', async () => page.locator('summary', { hasText: 'Reset the sandbox' }).click(), 'The sandbox starts over'],
    ] as const) {
      await fill();
      await page.click(`form[action="/actions/${form}"] button`);
      expect(await page.textContent('.notice.ok'), form).toContain(notice);
      // The address names where the notice is (#notice, under the form's section), never what was said.
      expect(page.url(), form).toBe(`${server.origin}/?mode=live#notice`);
      await page.reload();
      expect(await page.locator('.notice').count(), form).toBe(0);
      expect(await page.textContent('body'), form).toContain('Live balance');
    }
  });
});
