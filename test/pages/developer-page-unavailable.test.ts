import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { ledgerPath } from '../support/children.js';
import { launch, withChromium } from '../support/chromium.js';
import { homes, serve } from '../support/cli.js';

/**
 * When the ledger cannot be reached (here: another process holds the SQLite ledger's write lock
 * past the busy timeout, so a form's write fails), a browser gets an HTML page from the developer page, with the
 * same 503 and Retry-After the API gives, and never the API's JSON.
 */

const newHome = homes();

/** A process that holds the ledger's write lock (either SQLite driver: node:sqlite, else better-sqlite3). */
async function holdWriteLock(path: string): Promise<ChildProcess> {
  const script = `
    let open;
    try { const { DatabaseSync } = require('node:sqlite'); open = (p) => new DatabaseSync(p); }
    catch { const D = require('better-sqlite3'); open = (p) => new D(p); }
    const db = open(process.argv[1]);
    db.exec('PRAGMA busy_timeout = 10000'); db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script, path], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => resolve());
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return child;
}

withChromium(describe, 'Developer page unavailable test')('the developer page while the ledger is unavailable', () => {
  test("a form whose write cannot reach the ledger: the browser gets an HTML 503 page with the API's Retry-After", async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys'], { CARBON_BUSY_TIMEOUT_MS: '200' });
    const chromium = await launch();
    let holder: ChildProcess | undefined;
    try {
      const page = await chromium.browser.newPage();
      await page.goto(server.ready.developer_page_url);
      await page.fill('#topup-amount', '300');
      holder = await holdWriteLock(ledgerPath(home));
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('form[action="/actions/topup"] button'),
      ]);
      expect(res.status()).toBe(503);
      expect(res.headers()['retry-after']).toBe('1');
      expect(res.headers()['content-type']).toBe('text/html; charset=utf-8');
      expect(await page.locator('h1').innerText()).toBe('Unavailable for a moment');
      expect(await page.locator('main').innerText()).toContain('The service cannot reach its ledger right now.');
    } finally {
      holder?.kill('SIGKILL');
      await chromium.close();
      await server.stop();
    }
  });
});
