import { expect, test } from 'vitest';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * The Requests view's list, as served: each entry says when it was answered, in model time, with its day, since
 * the sandbox's clock moves by days (`carbon sandbox clock`, the page's Advance) and a time alone reads as today.
 */

let now = Date.parse('2026-03-10T12:00:00Z');
const served = serveInProcess('carbon-requests-page-', { clock: () => now });

test('entries days apart each show their day and time, as carbon logs does', async () => {
  const server = served.server;
  const key = (await server.sandbox.defaultKey('test'))!;
  const impact = async () =>
    expect((await fetch(`${server.url}/impact`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  await impact();
  now += 2 * 86_400_000 + 5_000;
  await impact();
  await server.sandbox.journal.flush();
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const login = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  const cookie = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  const html = await (await fetch(`${server.origin}/requests?path=/api/v1/impact`, { headers: { accept: 'text/html', cookie } })).text();
  // Before, both said 12:00:0x alone: the same day, to the eye.
  const when = [...html.matchAll(/<span class="when"><time datetime="([^"]+)">([^<]+)<\/time><\/span>/g)].map((m) => [m[1], m[2]]);
  expect(when).toEqual([
    ['2026-03-12T12:00:05.000Z', '2026-03-12 12:00:05'],
    ['2026-03-10T12:00:00.000Z', '2026-03-10 12:00:00'],
  ]);
});

test('a later page of requests leads back to the newest, its filters kept; the newest page has no such link', async () => {
  const server = served.server;
  const key = (await server.sandbox.defaultKey('test'))!;
  for (let n = 0; n < 52; n++) await fetch(`${server.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
  await server.sandbox.journal.flush();
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const login = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  const cookie = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  const links = async (query: string) => {
    const html = await (await fetch(`${server.origin}/requests?${query}`, { headers: { accept: 'text/html', cookie } })).text();
    return [...html.matchAll(/<a rel="(next|first)" href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [
      m[1],
      m[2]!.replace(/&#38;|&amp;/g, '&'),
      m[3],
    ]);
  };
  const first = await links('status=2xx&path=/api/v1/balance');
  expect(first.map(([rel]) => rel)).toEqual(['next']);
  const older = await links(new URL(first[0]![1]!, server.origin).search.slice(1));
  // Before, a later page had only its own Older link (or none): back to the newest only through the browser, or unfiltered.
  expect(older.find(([rel]) => rel === 'first')).toEqual(['first', '/requests?status=2xx&path=%2Fapi%2Fv1%2Fbalance', '← Newest requests']);
});

test('a filter that is none, or given twice, is marked on its field and described by the notice, as the dashboard marks its fields', async () => {
  const server = served.server;
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const login = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  const cookie = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  const marks = async (query: string) => {
    const res = await fetch(`${server.origin}/requests?${query}`, { headers: { accept: 'text/html', cookie } });
    const html = await res.text();
    const notice = /<p class="notice error" role="alert"( id="[^"]+")?>/.exec(html);
    const field = (id: string) => new RegExp(`<(?:select|input) id="${id}"[^>]*>`).exec(html)?.[0] ?? '';
    return { status: res.status, notice: notice?.[1] ?? null, select: field('r-status'), input: field('r-path') };
  };
  // Before, the notice had no id and neither field was marked: a screen reader on the select heard nothing wrong.
  for (const query of ['status=bogus', 'status=4xx&status=2xx']) {
    const m = await marks(query);
    expect([query, m.status, m.notice]).toEqual([query, 422, ' id="r-problem"']);
    expect(m.select, query).toContain(' aria-invalid="true" aria-describedby="r-problem"');
    expect(m.input, query).not.toContain('aria-invalid');
  }
  const twice = await marks('path=/a&path=/b');
  expect(twice.input).toContain(' aria-invalid="true" aria-describedby="r-problem"');
  expect(twice.select).not.toContain('aria-invalid');
  const fine = await marks('status=4xx');
  expect([fine.status, fine.notice, fine.select.includes('aria-invalid')]).toEqual([200, null, false]);
});

test("an entry's error code may break after an underscore on a narrow screen, never inside a word; its offset's id stays whole", async () => {
  const server = served.server;
  const key = (await server.sandbox.defaultKey('test'))!;
  const buy = (kg: number) =>
    fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'wbr-reused' },
      body: JSON.stringify({ kg }),
    });
  const bought = await buy(1);
  expect(bought.status).toBe(201);
  const offset = ((await bought.json()) as { id: string }).id;
  expect((await buy(2)).status).toBe(409);
  await server.sandbox.journal.flush();
  const token = await server.sandbox.pages.newLoginToken(Date.now());
  const login = await fetch(`${server.origin}/login?token=${token}`, { redirect: 'manual' });
  const cookie = /carbon_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  const html = await (await fetch(`${server.origin}/requests?status=409`, { headers: { accept: 'text/html', cookie } })).text();
  expect(html).toContain('<span class="code">idempotency_<wbr>key_<wbr>reused</span>');
  // Before, `off_<wbr>…`: a phone showed `off_` on a line of its own.
  const all = await (await fetch(`${server.origin}/requests?status=201`, { headers: { accept: 'text/html', cookie } })).text();
  expect(all).toContain(`<span class="code id">${offset}</span>`);
});
