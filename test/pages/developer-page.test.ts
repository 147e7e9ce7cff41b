import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { launchIn, withChromium } from '../support/chromium.js';
import { middayToday } from '../support/in-process-server.js';

/**
 * The developer page in a real Chromium (Debian's, driven by playwright-core): every flow the
 * account owner has, each checked in the API too, and an axe-core check of every page.
 * CARBON_SCREENSHOTS=1 also writes the screenshots into docs/.
 */

const run = withChromium(describe, 'Developer page browser tests');

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// One signed-in browser session walks through the flows in order: the steps build on each other.
run('the developer page, in Chromium', { shuffle: false }, () => {
  let dir: string;
  let home: string;
  let server: RunningServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let keys: { test: string; live: string; readOnly: string };

  const api = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(method === 'POST' ? { 'idempotency-key': `page-${Math.random()}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** No serious or critical accessibility violation on the page as it is now. */
  const axe = async () => {
    // Evaluated through the DevTools protocol: the page's CSP (no inline script) rightly refuses a <script> tag.
    await page.evaluate(AXE);
    const found = await page.evaluate(async () => {
      const r = await (
        globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }
      ).axe.run();
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
    });
    expect(found).toEqual([]);
  };

  const shot = async (name: string) => {
    const path = process.env.CARBON_SCREENSHOTS === '1' ? join('docs', `${name}.png`) : join(dir, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carbon-page-'));
    home = mkdtempSync(join(tmpdir(), 'carbon-page-home-'));
    // The model's clock stands still but for the test's own moves: no offset is placed by real seconds passing.
    const start = middayToday();
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), clock: () => start });
    keys = {
      test: (await server.sandbox.defaultKey('test'))!,
      live: (await server.sandbox.defaultKey('live'))!,
      readOnly: (await server.sandbox.defaultKey('read_only'))!,
    };
    browser = await launchIn(home);
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  test('without the login link: a login page that shows nothing of the account; an API key does not open it', async () => {
    const res = await page.goto(`${server.origin}/`);
    expect(res!.status()).toBe(401);
    expect(await page.textContent('body')).toContain('belongs to the account owner');
    expect(await page.content()).not.toContain('Test balance');
    const withKey = await fetch(`${server.origin}/`, { headers: { accept: 'text/html', authorization: `Bearer ${keys.test}` } });
    expect(withKey.status).toBe(401);
    expect(withKey.headers.get('content-security-policy')).toContain("script-src 'self'");
    await axe();
  });

  test('the login link signs in once; the cookie is HttpOnly and SameSite=Strict, and authorizes no API call', async () => {
    await page.goto(server.developerPageUrl);
    expect(page.url()).toBe(`${server.origin}/`);
    expect(await page.textContent('h1')).toContain('carbon sandbox');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'carbon_session', httpOnly: true, sameSite: 'Strict' });
    const again = await fetch(server.developerPageUrl, { redirect: 'manual' });
    expect(again.status).toBe(401);
    const apiWithCookie = await fetch(`${server.url}/balance`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(apiWithCookie.status).toBe(401);
    await axe();
    await shot('developer-page');
  });

  test('a top-up of $250 is made; $249.99 is refused with a clear message and changes nothing', async () => {
    await page.goto(`${server.origin}/?mode=live`);
    await page.selectOption('#topup-mode', 'live');
    await page.fill('#topup-amount', '249.99');
    await page.click('form[action="/actions/topup"] button');
    expect(await page.textContent('.notice.error')).toBe('A top-up is from $250.00 to $1,000,000,000.00; $249.99 is less.');
    expect((await api('GET', '/balance', keys.live)).body.available_cents).toBe(0);
    // More dollars than a number holds exactly: said as too much, not as badly written.
    await page.fill('#topup-amount', '99999999999999');
    await page.click('form[action="/actions/topup"] button');
    expect(await page.textContent('.notice.error')).toBe('A top-up is from $250.00 to $1,000,000,000.00; $99,999,999,999,999.00 is more.');
    expect((await api('GET', '/balance', keys.live)).body.available_cents).toBe(0);
    await page.fill('#topup-amount', '250');
    await page.click('form[action="/actions/topup"] button');
    expect(await page.textContent('.notice.ok')).toContain('Topped up');
    expect((await api('GET', '/balance', keys.live)).body.available_cents).toBe(25_000);
    expect(await page.textContent('.facts')).toContain('$250.00');
  });

  test('a key is created and shown once, then masked; revoked, the API refuses it with 401; a read-only key gets 403 on a purchase', async () => {
    await page.goto(`${server.origin}/`);
    await page.selectOption('#key-mode', 'test');
    await page.selectOption('#key-access', 'purchase');
    await page.click('form[action="/actions/key-create"] button');
    const secret = await page.inputValue('#new-secret');
    expect(secret).toMatch(/^ck_test_[A-Za-z0-9]{32}$/);
    expect((await api('POST', '/offsets', secret, { kg: 1 })).status).toBe(201);
    await page.goto(`${server.origin}/`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).toContain(`ck_test_…${secret.slice(-4)}`);
    const id = (await server.sandbox.keys()).find((k) => k.masked.endsWith(secret.slice(-4)))!.id;
    const row = page.locator('tr', { hasText: id });
    await row.locator('summary').click();
    await row.locator('form[action="/actions/key-revoke"] button').click();
    expect(await page.textContent('.notice.ok')).toBe(`Key ${id} is revoked: the API now refuses it with 401.`);
    expect((await api('GET', '/balance', secret)).status).toBe(401);

    await page.selectOption('#key-access', 'read_only');
    await page.click('form[action="/actions/key-create"] button');
    const readOnly = await page.inputValue('#new-secret');
    expect((await api('GET', '/balance', readOnly)).status).toBe(200);
    expect((await api('POST', '/offsets', readOnly, { kg: 1 })).body).toMatchObject({ error: { code: 'insufficient_permissions' } });
    await axe();
  });

  test('the review queue: approve places, reject refunds', async () => {
    await server.sandbox.setReviewLimit(100);
    await server.sandbox.topUp('live', 100_000);
    const a = (await api('POST', '/offsets', keys.live, { kg: 500 })).body.id as string;
    const b = (await api('POST', '/offsets', keys.live, { kg: 600 })).body.id as string;
    await page.goto(`${server.origin}/?mode=live`);
    await page.locator('tr', { hasText: a }).locator('form[action="/actions/approve"] button').click();
    expect(await page.textContent('.notice.ok')).toBe(`Approved ${a}: it is placed.`);
    // Rejecting refunds, so it is asked first: the button shows once "Reject…" is opened.
    const queued = page.locator('table.review tr', { hasText: b });
    expect(await queued.locator('form[action="/actions/reject"] button').isVisible()).toBe(false);
    expect(await queued.locator('td.wide').innerText()).toBe('—');
    await queued.locator('summary', { hasText: 'Reject…' }).click();
    await queued.locator('form[action="/actions/reject"] button').click();
    expect(await page.textContent('.notice.ok')).toBe(`Rejected ${b}: it is refunded.`);
    expect((await api('GET', `/offsets/${a}`, keys.live)).body.status).toBe('placed');
    expect((await api('GET', `/offsets/${b}`, keys.live)).body.status).toBe('refunded');
    await page.goto(`${server.origin}/offsets/${a}`);
    expect(await page.getAttribute('a[href*="/certificates/"]', 'href')).toMatch(/\/certificates\/cert_[0-9a-f]{24}$/);
    expect(await page.locator('.decisions').count()).toBe(0);
    await axe();
  });

  test("an offset's page says it waits for review and offers the decision; one still processing otherwise can be failed there", async () => {
    await server.sandbox.setReviewLimit(100);
    await server.sandbox.topUp('live', 100_000);
    const held = (await api('POST', '/offsets', keys.live, { kg: 700 })).body.id as string;
    await page.goto(`${server.origin}/offsets/${held}`);
    // Before: "processing" only, nothing to do but go back to the queue.
    expect(await page.locator('.facts dd').first().innerText()).toBe('processing — waits for review (above the review limit)');
    expect(await page.locator('.decisions summary').innerText()).toBe('Reject…');
    await page.click('.decisions form[action="/actions/approve"] button');
    expect(await page.textContent('.notice.ok')).toBe(`Approved ${held}: it is placed.`);
    expect((await api('GET', `/offsets/${held}`, keys.live)).body.status).toBe('placed');
    // Live, under the review limit: not held. (Test mode's offsets are the next test's to count.)
    const processing = (await api('POST', '/offsets', keys.live, { kg: 3 })).body.id as string;
    await page.goto(`${server.origin}/offsets/${processing}`);
    expect(await page.locator('.facts dd').first().innerText()).toBe('processing');
    await page.click('.decisions summary');
    await page.click('.decisions form[action="/actions/fail"] button');
    expect(await page.textContent('.notice.ok')).toBe(`The order of ${processing} could not be placed: it is refunded.`);
    await axe();
  });

  test('fail → refunded; clock advance → placed; filters and pages; a first day of purchases said in words', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push((await api('POST', '/offsets', keys.test, { kg: 1 + i, reference: i % 2 === 0 ? 'even' : 'odd' })).body.id as string);
    await page.goto(`${server.origin}/`);
    await page.locator('tr', { hasText: ids[24]! }).locator('summary', { hasText: 'Fail…' }).click();
    await page.locator('tr', { hasText: ids[24]! }).locator('form[action="/actions/fail"] button').click();
    expect(await page.textContent('.notice.ok')).toBe(`The order of ${ids[24]} could not be placed: it is refunded.`);
    expect((await api('GET', `/offsets/${ids[24]}`, keys.test)).body.status).toBe('refunded');

    await page.fill('#c-clock', '1m');
    await page.click('form[action="/actions/clock"] button');
    expect(await page.textContent('.notice.ok')).toContain('clock');
    expect((await api('GET', `/offsets/${ids[0]}`, keys.test)).body.status).toBe('placed');

    // Filters: status and reference; 20 a page, then the older ones.
    await page.selectOption('#f-status', 'refunded');
    await page.click('form.filters button');
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').count()).toBe(1);
    await page.goto(`${server.origin}/?mode=test&reference=even`);
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').count()).toBe(13);
    await page.goto(`${server.origin}/?mode=test`);
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').count()).toBe(20);
    expect(await page.locator('a[rel="first"]').count()).toBe(0);
    const firstPage = await page.locator('section[aria-labelledby="offsets"] tbody tr').allTextContents();
    await page.click('a[rel="next"]');
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').count()).toBeGreaterThanOrEqual(5);
    // A later page leads back to the newest, with the filters kept.
    await page.click('a[rel="first"]');
    expect(new URL(page.url()).search).toBe('?mode=test');
    expect(await page.locator('section[aria-labelledby="offsets"] tbody tr').allTextContents()).toEqual(firstPage);
    await page.goto(`${server.origin}/?mode=test&reference=even&after=${ids[24]}`);
    expect(await page.getAttribute('a[rel="first"]', 'href')).toBe('/?mode=test&reference=even#offsets');
    await page.goto(`${server.origin}/?mode=test&since=2999-01-01`);
    expect(await page.textContent('section[aria-labelledby="offsets"]')).toContain('No offsets match these filters');

    await page.goto(`${server.origin}/`);
    // Every purchase so far was today: the first day is said in words (the chart itself: developer-page-sizes.test.ts).
    expect(await page.textContent('.first-day')).toMatch(/ kg bought today \(\d{4}-\d\d-\d\d\), the first day of purchases in test mode\./);
    await axe();
    await shot('developer-page-offsets');
  });

  test('a cross-site form post is refused and changes nothing', async () => {
    const [cookie] = await context.cookies();
    const before = (await server.sandbox.status()).balances.test;
    const csrf = await page.getAttribute('form[action="/actions/topup"] input[name="csrf"]', 'value');
    const res = await fetch(`${server.origin}/actions/topup`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
        cookie: `${cookie!.name}=${cookie!.value}`,
      },
      body: new URLSearchParams({ csrf: csrf!, mode: 'test', amount: '1000', back: 'test' }).toString(),
    });
    expect(res.status).toBe(403);
    const noToken = await fetch(`${server.origin}/actions/topup`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin, cookie: `${cookie!.name}=${cookie!.value}` },
      body: 'mode=test&amount=1000&back=test',
    });
    expect(noToken.status).toBe(403);
    expect((await server.sandbox.status()).balances.test).toBe(before);
  });

  test('a hand-made post with a mode that is none, a field given twice or an access that is none is refused and changes nothing', async () => {
    await page.goto(`${server.origin}/`);
    const [cookie] = await context.cookies();
    const csrf = (await page.getAttribute('form[action="/actions/topup"] input[name="csrf"]', 'value'))!;
    const before = (await server.sandbox.status()).balances;
    const keysBefore = (await server.sandbox.keys()).length;
    const post = (action: string, body: string) =>
      fetch(`${server.origin}/actions/${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin, cookie: `${cookie!.name}=${cookie!.value}` },
        body: `csrf=${csrf}&back=test&${body}`,
      });
    for (const [action, body, said] of [
      ['topup', 'mode=bogus&amount=250', 'The mode is test or live, not "bogus".'],
      ['topup', 'amount=250', 'The mode is test or live, not "".'],
      ['topup', 'mode=test&amount=250&amount=999999', 'The form sent amount more than once; send it once.'],
      ['key-create', 'mode=test&permission=admin', 'The access is purchase or read_only, not "admin".'],
    ] as const) {
      const res = await post(action, body);
      expect([body, res.status]).toEqual([body, 303]);
      // The refusal waits in the session's flash for the page the redirect leads to (loaded afresh:
      // the same address with its #notice again would only scroll).
      await page.goto('about:blank');
      await page.goto(new URL(res.headers.get('location')!, server.origin).href);
      expect([body, await page.textContent('.notice.error')]).toEqual([body, said]);
    }
    expect((await server.sandbox.status()).balances).toEqual(before);
    expect(await server.sandbox.keys()).toHaveLength(keysBefore);
  });

  test('faults: injected from the page (the API answers 503), a bad rate refused without a change, then stopped', async () => {
    await page.goto(`${server.origin}/`);
    expect(await page.textContent('#faults-now')).toContain('Off');
    await page.fill('#f-rate', '1');
    for (const kind of ['429', '500', 'drop-before', 'drop-after']) await page.uncheck(`input[name="errors"][value="${kind}"]`);
    await page.selectOption('#f-route', 'GET /balance');
    await page.fill('#f-seed', '7');
    await page.fill('#f-retry', '0');
    await page.click('form[action="/actions/faults"] button');
    expect(await page.textContent('.notice.ok')).toContain('Faults are on');
    expect(await page.textContent('#faults-now')).toBe('On: 100% of requests: 503; GET /balance; seed 7.');
    expect(await server.sandbox.faults()).toMatchObject({
      error_rate: 1,
      errors: ['503'],
      route: 'GET /balance',
      seed: 7,
      retry_after_seconds: 0,
    });
    expect((await api('GET', '/balance', keys.test)).status).toBe(503);
    expect((await api('GET', '/impact', keys.test)).status).toBe(200);
    await axe();

    await page.fill('#f-rate', '30%');
    await page.click('form[action="/actions/faults"] button');
    expect(await page.textContent('.notice.error')).toContain('share from 0 to 1');
    expect((await server.sandbox.faults())?.error_rate).toBe(1);

    await page.click('form[action="/actions/faults-off"] button');
    expect(await page.textContent('.notice.ok')).toContain('Faults are off');
    expect(await server.sandbox.faults()).toBeNull();
    expect((await api('GET', '/balance', keys.test)).status).toBe(200);
  });

  test('the rate limit: the page says the window set elsewhere, and a number set from the page keeps it', async () => {
    await server.sandbox.setRateLimit(3, 60_000);
    await page.goto(`${server.origin}/`);
    expect(await page.textContent('label[for="c-limit"]')).toBe('Rate limit (requests per 1m, or off)');
    expect(await page.inputValue('#c-limit')).toBe('3');
    await page.fill('#c-limit', '5');
    await page.click('form[action="/actions/rate-limit"] button');
    expect(await page.textContent('.notice.ok')).toContain('The rate limit is set: 5 requests per 1m per key.');
    // Before: the page set 5 a second, whatever window the CLI had set.
    const { account } = await server.sandbox.status();
    expect([account.rate_limit_requests, account.rate_limit_window_ms]).toEqual([5, 60_000]);
    await page.fill('#c-limit', 'off');
    await page.click('form[action="/actions/rate-limit"] button');
    expect((await server.sandbox.status()).account.rate_limit_requests).toBeNull();
    expect(await page.textContent('.notice.ok')).toContain('The rate limit is off.');
    // 0 shuts every API request: the notice says so.
    await page.fill('#c-limit', '0');
    await page.click('form[action="/actions/rate-limit"] button');
    expect(await page.textContent('.notice.ok')).toContain(
      'The rate limit is 0: every API request now gets 429 rate_limited, until it is set again.',
    );
    await page.fill('#c-limit', 'off');
    await page.click('form[action="/actions/rate-limit"] button');
  });

  test('a change made with the sandbox API shows on the page at once, and the standing and reset work from the page', async () => {
    await server.sandbox.setRate(4321);
    await page.goto(`${server.origin}/`);
    expect(await page.textContent('.facts')).toContain('$0.04321/kg');
    await page.selectOption('#c-status', 'suspended');
    await page.click('form[action="/actions/status"] button');
    expect((await api('GET', '/balance', keys.test)).status).toBe(403);
    await page.locator('details.confirm', { hasText: 'Reset the sandbox' }).locator('summary').click();
    await page.click('form[action="/actions/reset"] button');
    expect(await page.textContent('.notice.ok')).toContain('starts over');
    expect((await api('GET', '/balance', keys.test)).status).toBe(401);
    await axe();
  });
});
