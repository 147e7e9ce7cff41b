import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { ledgerPath } from '../support/children.js';
import { launch, withChromium } from '../support/chromium.js';
import { homes, serve } from '../support/cli.js';

/**
 * When the ledger cannot be reached (here: another process holds the SQLite ledger's write lock
 * past the busy timeout, so a form's write fails), the form is answered by a redirect, as every
 * form is, to the page, which says the form may not have been done: never a 503 that a reload
 * would post again. (A page the ledger cannot answer is an HTML 503 with Retry-After:
 * test/server/page-methods.test.ts and the reliability tests.)
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
  test('a form whose write cannot reach the ledger: a redirect (a reload posts nothing again), and the page says it may not have been done', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys'], { CARBON_BUSY_TIMEOUT_MS: '200' });
    const chromium = await launch();
    let holder: ChildProcess | undefined;
    try {
      const page = await chromium.browser.newPage();
      const posts: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST') posts.push(r.url());
      });
      await page.goto(server.ready.developer_page_url);
      // The test balance, as the account's facts say it (the model clock beside it moves on).
      const balance = () => page.locator('section[aria-labelledby="account"] dl.facts dt:has-text("Test balance") + dd').innerText();
      const before = await balance();
      await page.fill('#topup-amount', '300');
      holder = await holdWriteLock(ledgerPath(home));
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('form[action="/actions/topup"] button'),
      ]);
      // Not a 503 answering the post: reloaded, it would post again (a second top-up).
      expect(res.status()).toBe(303);
      await page.waitForURL(/unsure=topup/);
      holder.kill('SIGKILL');
      holder = undefined;
      await page.reload();
      expect(await page.locator('.notice.error').innerText()).toContain('The ledger did not answer that form in time');
      expect(page.url()).toMatch(/\/\?mode=test&unsure=topup#notice$/);
      expect(posts).toHaveLength(1);
      // The lock stopped it: nothing was topped up.
      expect(await balance()).toBe(before);
    } finally {
      holder?.kill('SIGKILL');
      await chromium.close();
      await server.stop();
    }
  });
});
