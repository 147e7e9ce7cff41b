import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { expectAxeClean, type Launched, launch, withChromium } from '../support/chromium.js';
import { middayToday, serveInProcess } from '../support/in-process-server.js';

/**
 * The developer page's Requests view in Chromium, at 1280 px and a phone's 390 px: the newest
 * requests, filtered by status and by the start of a path, one opened whole with both bodies;
 * nothing wider than the viewport, axe-core clean, and no key's text anywhere on it.
 */

interface Box {
  right: number;
  left: number;
  top: number;
  bottom: number;
}
interface El {
  tagName: string;
  id: string;
  classList: Iterable<string>;
  getBoundingClientRect(): Box;
  querySelector(s: string): El;
  textContent: string;
}
declare const document: {
  documentElement: { clientWidth: number; scrollWidth: number };
  querySelectorAll(s: string): Iterable<El>;
  createRange(): { selectNodeContents(el: El): void; getClientRects(): Iterable<Box> };
};

const SIZES = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

withChromium(describe, 'Requests view tests')('the Requests view at 1280 px and 390 px', () => {
  let dir: string;
  let server: RunningServer;
  let chromium: Launched;
  let context: BrowserContext;
  let page: Page;
  let testKey: string;
  let bought: { id: string; requestId: string };
  let missing: string;

  const api = async (method: string, path: string, body?: unknown, idem?: string) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${testKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idem === undefined ? {} : { 'idempotency-key': idem }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, requestId: res.headers.get('request-id')!, body: (await res.json()) as { id?: string } };
  };

  const fitsViewport = async (where: string) => {
    const wide = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const out = [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > width + 0.5)
        .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')}`);
      return { scroll: document.documentElement.scrollWidth, width, out: out.slice(0, 5) };
    });
    expect(wide.out, where).toEqual([]);
    expect(wide.scroll, where).toBeLessThanOrEqual(wide.width);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-requests-view-'));
    const start = middayToday();
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), clock: () => start });
    testKey = (await server.sandbox.defaultKey('test'))!;
    // A long reference with a key pasted in it: the row must wrap on a phone, and the key be masked.
    const reference = `ops/${'flight-'.repeat(12)}${testKey}`;
    const made = await api('POST', '/offsets', { kg: 5, reference }, 'view-1');
    expect(made.status).toBe(201);
    bought = { id: made.body.id!, requestId: made.requestId };
    await api('GET', '/balance');
    missing = (await api('GET', `/offsets/off_${'x'.repeat(60)}`)).requestId;
    chromium = await launch();
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.goto(server.developerPageUrl);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('is reached from the dashboard, and lists the newest requests first', async () => {
    await page.getByRole('link', { name: 'Requests' }).first().click();
    await page.waitForURL(/\/requests$/);
    const rows = await page.locator('.requests li').allInnerTexts();
    expect(rows.map((r) => r.split('\n').slice(0, 2).join(' '))).toEqual(['404 GET', '200 GET', '201 POST']);
    expect(await page.content()).not.toContain(testKey);
  });

  test('filters by status and by the start of a path, in the address too', async () => {
    await page.goto(`${server.origin}/requests`);
    await page.locator('#r-status').selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=4xx/);
    expect(await page.locator('.requests li').count()).toBe(1);
    await page.locator('#r-status').selectOption('');
    await page.locator('#r-path').fill('/api/v1/balance');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/path=%2Fapi%2Fv1%2Fbalance/);
    expect(await page.locator('.requests li').allInnerTexts()).toHaveLength(1);
    await page.locator('#r-path').fill('/api/v1/nowhere');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/path=%2Fapi%2Fv1%2Fnowhere/);
    expect(await page.locator('#no-requests').innerText()).toBe('No requests match these filters.');
    // A filter that is none: said, with 422, and no requests listed as if it were not there.
    const refused = await page.goto(`${server.origin}/requests?status=9xx&path=/api/v1/balance`);
    expect(refused!.status()).toBe(422);
    expect(await page.getByRole('alert').innerText()).toContain('status must be 2xx, 4xx, 5xx');
    expect(await page.locator('.requests li').count()).toBe(0);
    expect(await page.locator('#no-requests').innerText()).toBe('The requests are not listed until the filter above is fixed.');
    expect(await page.locator('#r-path').inputValue()).toBe('/api/v1/balance');
    // A path typed without its leading /: said (it would match nothing), what was typed kept to correct.
    await page.locator('#r-path').fill('api/v1/balance');
    const [unslashed] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/requests?')),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    expect(unslashed.status()).toBe(422);
    expect(await page.getByRole('alert').innerText()).toContain('path is the start of a path, such as /api/v1/offsets.');
    expect(await page.locator('#r-path').inputValue()).toBe('api/v1/balance');
  });

  test('a filter given twice in the address is refused as a bad one is; one chosen there, the requests are listed', async () => {
    const refused = await page.goto(`${server.origin}/requests?status=4xx&status=2xx&path=/api/v1`);
    expect(refused!.status()).toBe(422);
    expect(await page.getByRole('alert').innerText()).toBe('status may be given only once; it was given 2 times: "4xx" and "2xx".');
    expect(await page.locator('.requests li').count()).toBe(0);
    expect(await page.locator('#r-path').inputValue()).toBe('/api/v1');
    await expectAxeClean(page, 'a filter given twice');
    await page.locator('#r-status').selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=4xx/);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.locator('.requests li').count()).toBe(1);
  });

  test('a status code from the address shows chosen in the select, and the form sent again keeps it', async () => {
    await page.goto(`${server.origin}/requests?status=404`);
    expect(await page.locator('.requests li').count()).toBe(1);
    // Before, the select showed "any status" over the filtered list, and Filter dropped the code.
    expect(await page.locator('#r-status').inputValue()).toBe('404');
    await page.locator('#r-path').fill('/api/v1');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/path=%2Fapi%2Fv1/);
    expect(new URL(page.url()).searchParams.get('status')).toBe('404');
    expect(await page.locator('.requests li').count()).toBe(1);
    await expectAxeClean(page, 'a status code chosen');
  });

  test('opens one request whole: what was asked, what was answered, both bodies, the offset linked', async () => {
    await page.goto(`${server.origin}/requests`);
    await page.locator(`a[href="/requests/${bought.requestId}"]`).click();
    await page.waitForURL(new RegExp(`/requests/${bought.requestId}$`));
    const facts = await page.locator('.facts').innerText();
    expect(facts).toContain('view-1');
    expect(facts).toContain(bought.id);
    const bodies = await page.locator('pre.body').allInnerTexts();
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toContain('"kg": 5');
    expect(bodies[1]).toContain(`"id": "${bought.id}"`);
    expect(await page.content()).not.toContain(testKey);
    expect(bodies[0]).toContain(`ck_test_…${testKey.slice(-4)}`);
    await page.goto(`${server.origin}/requests/req_nothere`);
    expect(await page.locator('main').innerText()).toContain('There is no such request');
  });

  for (const size of SIZES) {
    test(`fits ${size.name} (${size.width} px): the list, a filtered list and one request; axe-core clean`, async () => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.goto(`${server.origin}/requests`);
      await fitsViewport(`list at ${size.width}`);
      // An offset's id in a row stays whole and in view, on a phone too (split, it reads as two and
      // copies badly): the widest an id can be, 28 letters of W in its place, is one line within the page.
      const widest = await page.evaluate(() => {
        const c = [...document.querySelectorAll('.requests .code')].find((el) => el.textContent.startsWith('off_'));
        if (c === undefined) return null;
        const was = c.textContent;
        c.textContent = `off_sandbox${'W'.repeat(17)}`;
        const range = document.createRange();
        range.selectNodeContents(c);
        const rects = [...range.getClientRects()];
        c.textContent = was;
        return {
          lines: new Set(rects.map((r) => Math.round(r.top))).size,
          right: Math.max(...rects.map((r) => r.right)),
          width: document.documentElement.clientWidth,
        };
      });
      expect(widest, `an id at ${size.width}`).not.toBeNull();
      expect(widest!.lines, `lines at ${size.width}`).toBe(1);
      expect(widest!.right, `right edge at ${size.width}`).toBeLessThanOrEqual(widest!.width);
      // The filter's labels as the main page's: above their fields on a phone, beside them on a desktop.
      const placed = await page.evaluate(() =>
        [...document.querySelectorAll('form.filters .field')].map((f) => {
          const label = f.querySelector('label').getBoundingClientRect();
          const control = f.querySelector('input, select').getBoundingClientRect();
          return label.bottom <= control.top + 1 ? 'above' : label.right <= control.left + 1 ? 'beside' : 'elsewhere';
        }),
      );
      expect(placed).toEqual(size.name === 'phone' ? ['above', 'above'] : ['beside', 'beside']);
      await expectAxeClean(page, `requests list at ${size.width}`);
      await page.goto(`${server.origin}/requests/${bought.requestId}`);
      await fitsViewport(`request at ${size.width}`);
      await expectAxeClean(page, `one request at ${size.width}`);
      await page.goto(`${server.origin}/requests/${missing}`);
      await fitsViewport(`an error's request at ${size.width}`);
    });
  }

  test('is for the signed-in owner only', async () => {
    const other = await chromium.browser.newContext();
    const stranger = await other.newPage();
    const res = await stranger.goto(`${server.origin}/requests`);
    expect(res?.status()).toBe(401);
    expect(await stranger.content()).not.toContain(bought.requestId);
    await other.close();
  });
});

/** What a test reads of a box that scrolls. */
interface Scroller {
  scrollHeight: number;
  clientHeight: number;
  scrollTop: number;
}

withChromium(describe, 'Requests view tests')('the Requests view: a body longer than its box', () => {
  let server: RunningServer;
  let chromium: Launched;
  let requestId: string;

  const start = middayToday();
  const served = serveInProcess('carbon-requests-body-', { clock: () => start });

  beforeAll(async () => {
    server = served.server;
    const key = (await server.sandbox.defaultKey('test'))!;
    // A body of 6 KB in words (a long run of letters would be masked as a key's secret): refused, and kept whole in the journal.
    const res = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'long-body' },
      body: JSON.stringify({ kg: 5, reference: 'a reference far too long for the API '.repeat(160) }),
    });
    expect(res.status).toBe(422);
    requestId = res.headers.get('request-id')!;
    await server.sandbox.journal.flush();
    chromium = await launch();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  for (const size of SIZES) {
    test(`at ${size.width} px, the keyboard reaches it and scrolls it; axe-core clean`, async () => {
      const context = await chromium.browser.newContext({ viewport: { width: size.width, height: size.height } });
      const page = await context.newPage();
      await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
      await page.goto(`${server.origin}/requests/${requestId}`);
      const box = page.locator('pre.body').first();
      const taller = await box.evaluate((el) => (el as unknown as Scroller).scrollHeight > (el as unknown as Scroller).clientHeight);
      expect(taller).toBe(true);
      // Before, a box that scrolls was not focusable: a keyboard could not read the rest of the body.
      await expectAxeClean(page, `a long body at ${size.width}`);
      let reached = false;
      for (let n = 0; n < 20 && !reached; n++) {
        await page.keyboard.press('Tab');
        reached = await box.evaluate(
          (el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement,
        );
      }
      expect(reached).toBe(true);
      expect(await page.getByRole('region', { name: 'Request body' }).count()).toBe(1);
      await page.keyboard.press('End');
      // Chromium scrolls smoothly: the box is read until it has moved.
      await expect.poll(() => box.evaluate((el) => (el as unknown as Scroller).scrollTop)).toBeGreaterThan(0);
      await context.close();
    });
  }
});
