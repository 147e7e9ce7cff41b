import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Chromium for the page tests: Debian's, driven by playwright-core, with a temporary profile and
 * home (nothing of it lands in the real home). Missing, the suites are skipped with one line
 * saying why; in CI its absence is a failure.
 */

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (CHROMIUM === undefined && process.env.CI === 'true')
  throw new Error('Chromium is missing: in CI the browser tests must run (.ci/run installs it).');

/** Whether Debian's Chromium is here. */
export const hasChromium = CHROMIUM !== undefined;

/** `describe` when Chromium is there; otherwise `describe.skip`, after saying why. */
export function withChromium<D>(describe: D & { skip: D }, what: string): D {
  if (CHROMIUM !== undefined) return describe;
  process.stderr.write(`${what} skipped: no Chromium at /usr/bin/chromium (apt-get install chromium).\n`);
  return describe.skip;
}

export interface Launched {
  browser: Browser;
  close(): Promise<void>;
}

/** Chromium with `home` as its home, profile and caches: nothing of it lands in the real home. */
export function launchIn(home: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM!,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
  });
}

export async function launch(): Promise<Launched> {
  const home = mkdtempSync(join(tmpdir(), 'carbon-chromium-home-'));
  const browser = await launchIn(home);
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** No serious or critical accessibility violation on the page as it is now (axe-core). */
export async function expectAxeClean(page: Page, where: string): Promise<void> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) rightly refuses a <script> tag.
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> };
      }
    ).axe.run();
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.nodes.length}: ${JSON.stringify(v.nodes[0]?.target)})`);
  });
  expect(found, where).toEqual([]);
}

/**
 * The nodes axe-core's "region" rule finds outside every landmark (a rule expectAxeClean leaves
 * out as moderate): what a screen reader's landmark list would not reach.
 */
export async function outsideLandmarks(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(o: object): Promise<{ violations: Array<{ nodes: Array<{ html: string }> }> }> } })
      .axe;
    const r = await axe.run({ runOnly: { type: 'rule', values: ['region'] } });
    return r.violations.flatMap((v) => v.nodes.map((n) => n.html.slice(0, 80)));
  });
}
