import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unavailablePage } from '../../src/server/pages/unavailable.js';
import type { RunningServer } from '../../src/server/server.js';
import { type Launched, launch, outsideLandmarks, withChromium } from '../support/chromium.js';
import { middayToday, serveInProcess } from '../support/in-process-server.js';

/**
 * Every page's content is in a landmark, the sandbox band too (axe-core's "region" rule, which
 * expectAxeClean leaves out as moderate): a screen reader's landmark list reaches all of it. At a
 * desktop's 1280 px and a phone's 390 px, signed out and in, and the band where it was: first, the
 * screen's whole width, above the header.
 */

withChromium(describe, 'Developer page landmark tests')('the developer page: everything inside a landmark', () => {
  let server: RunningServer;
  let chromium: Launched;
  let offset: string;
  let request: string;

  const start = middayToday();
  const served = serveInProcess('carbon-page-landmarks-', { clock: () => start });

  beforeAll(async () => {
    server = served.server;
    const key = (await server.sandbox.defaultKey('test'))!;
    const made = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'landmarks-1' },
      body: '{"kg": 5}',
    });
    offset = ((await made.json()) as { id: string }).id;
    request = made.headers.get('request-id')!;
    await server.sandbox.journal.flush();
    chromium = await launch();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  test.each([
    [1280, 800],
    [390, 844],
  ])('at %d×%d, no page has content outside a landmark, and the band is still first, the whole width', async (width, height) => {
    const context = await chromium.browser.newContext({ viewport: { width, height } });
    let page = await context.newPage();
    const found: Record<string, string[]> = {};
    const check = async (where: string) => {
      found[where] = await outsideLandmarks(page);
      const band = (await page.locator('.sandbox-band').boundingBox())!;
      expect([band.x, band.y, band.width], where).toEqual([0, 0, width]);
    };
    await page.goto(`${server.origin}/`);
    await check('signed out');
    await page.goto(`${server.origin}/login?token=${await server.sandbox.pages.newLoginToken(Date.now())}`);
    for (const path of ['/', '/?mode=live', `/offsets/${offset}`, '/offsets/off_nope', '/requests', `/requests/${request}`, '/nope']) {
      await page.goto(`${server.origin}${path}`);
      await check(path);
    }
    await page.click('form[action="/logout"] button');
    await check('after signing out');
    // Its own inline style: on a blank page (the served pages' Content-Security-Policy allows no inline style).
    page = await context.newPage();
    await page.setContent(unavailablePage('The service cannot reach its ledger right now.', 'req_x'));
    await check('unavailable');
    await context.close();
    expect(Object.entries(found).filter(([, nodes]) => nodes.length > 0)).toEqual([]);
  });
});
