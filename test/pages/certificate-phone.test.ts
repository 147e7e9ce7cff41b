import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { type Launched, launch, withChromium } from '../support/chromium.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * A placed live offset's certificate on a phone, in Chromium: nothing wider than the screen, and
 * the heading under the seal, whole lines of it, not a word a line beside the seal.
 */

withChromium(describe, 'Certificate phone tests')('the certificate on a phone', () => {
  const served = serveInProcess('carbon-cert-phone-');
  let chromium: Launched;
  let url: string;

  beforeAll(async () => {
    chromium = await launch();
    const server = served.server;
    const live = (await server.sandbox.defaultKey('live'))!;
    await server.sandbox.topUp('live', 1_000_000);
    const headers = { authorization: `Bearer ${live}`, 'idempotency-key': 'phone' };
    const bought = (await (await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: '{"kg": 2500}' })).json()) as Offset;
    await server.sandbox.advanceClock(60_000);
    url = ((await (await fetch(`${server.url}/offsets/${bought.id}`, { headers })).json()) as Offset).certificate_url!;
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
  });

  test.each([320, 390, 1000])('at %i px: the heading on lines of its own, nothing wider than the screen', async (width) => {
    const context = await chromium.browser.newContext({ viewport: { width, height: 800 } });
    const page = await context.newPage();
    await page.goto(url);
    const seen = (await page.evaluate(`(() => {
      const seal = document.querySelector('.seal').getBoundingClientRect();
      const h1 = document.querySelector('h1');
      const range = document.createRange();
      range.selectNodeContents(h1);
      const lines = [...range.getClientRects()].map((r) => Math.round(r.top));
      return { sealBottom: seal.bottom, h1Top: h1.getBoundingClientRect().top, lines: new Set(lines).size, scroll: document.documentElement.scrollWidth };
    })()`)) as { sealBottom: number; h1Top: number; lines: number; scroll: number };
    expect(seen.scroll).toBeLessThanOrEqual(width);
    // "A simulated purchase of carbon credits": three lines at most on a phone, two wider.
    expect(seen.lines, `${width} px`).toBeLessThanOrEqual(width < 480 ? 3 : 2);
    if (width < 480) expect(seen.h1Top).toBeGreaterThanOrEqual(seen.sealBottom);
    await context.close();
  });
});
