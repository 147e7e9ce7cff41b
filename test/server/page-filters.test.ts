import { beforeAll, describe, expect, test } from 'vitest';
import { serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * The developer page's offsets filter, as the served HTML says it: a date field that holds no
 * date (typed by hand, an edited address, a bookmark) is said next to the form, kept in its field
 * to be fixed, and the offsets are not listed as if the filter were not there.
 */

// The model's clock stands still: every offset is created on one known day.
const START = Date.parse('2026-03-10T12:00:00Z');
const served = serveInProcess('carbon-page-filters-', { clock: () => START });
let cookie: string;

beforeAll(async () => {
  const server = served.server;
  const key = (await server.sandbox.defaultKey('test'))!;
  for (let i = 0; i < 2; i++) {
    const r = await fetch(`${server.url}/offsets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `filters-${i}` },
      body: JSON.stringify({ kg: 10 + i }),
    });
    expect(r.status).toBe(201);
  }
  cookie = await sessionCookie(server);
});

async function page(query: string): Promise<{ status: number; offsets: string; html: string }> {
  const res = await fetch(`${served.server.origin}/?mode=test&${query}`, { headers: { accept: 'text/html', cookie } });
  const html = await res.text();
  const offsets = /<section aria-labelledby="offsets">[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  return { status: res.status, offsets, html };
}
const rows = (section: string) => section.match(/<tr>/g)?.length ?? 0; // the head's row and one a offset
/** The section's error notices, their text's character references read back. */
const alerts = (section: string) =>
  (section.match(/<p class="notice error" role="alert"[^>]*>[^<]*<\/p>/g) ?? []).map((p) =>
    p.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
  );
const input = (section: string, name: string) => new RegExp(`<input [^>]*name="${name}"[^>]*>`).exec(section)?.[0] ?? '';

describe('the developer page: a date filter that is no date', () => {
  test('valid days filter as before: the list, no alert', async () => {
    expect(rows((await page('since=2026-03-10&until=2026-03-10')).offsets)).toBe(3);
    const leap = await page('since=2024-02-29');
    expect([leap.status, rows(leap.offsets), alerts(leap.offsets)]).toEqual([200, 3, []]);
    expect(rows((await page('since=2026-03-11')).offsets)).toBe(0);
  });

  test.each([
    ['since', 'notadate', 'From'],
    ['since', '2026-13-01', 'From'],
    ['until', '2026-02-30', 'Until'], // read as 2026-03-02 before: an impossible day filtered by another one
    ['until', '10/03/2026', 'Until'],
  ])('%s=%s is said next to the form, kept in its field, and no list is shown as if unfiltered', async (name, value, label) => {
    const p = await page(`${name}=${encodeURIComponent(value)}`);
    expect(p.status).toBe(422);
    const said = alerts(p.offsets);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`${label}: "${value}" is not a date.`);
    // Above the form it is about.
    expect(p.offsets.indexOf('role="alert"')).toBeLessThan(p.offsets.indexOf('<form method="get"'));
    // The value stays (as text: a date input would drop it), marked invalid and tied to the message.
    const field = input(p.offsets, name);
    expect(field).toContain(`value="${value}"`);
    expect(field).toContain('type="text"');
    expect(field).toContain('aria-invalid="true"');
    expect(field).toContain(`aria-describedby="${/id="([^"]+)"/.exec(said[0]!)![1]}"`);
    // No offsets, and not "none match" either: the list waits for a date.
    expect(rows(p.offsets)).toBe(0);
    expect(p.offsets).not.toContain('match these filters');
    expect(p.offsets).toContain('not listed');
    // The rest of the page is there.
    for (const id of ['account', 'impact', 'keys', 'controls']) expect(p.html).toContain(`aria-labelledby="${id}"`);
  });

  test('both dates wrong: each said; a good field beside a bad one keeps its value too', async () => {
    const both = await page('since=yesterday&until=2026-04-31');
    expect(alerts(both.offsets).join(' ')).toMatch(/From: "yesterday" is not a date\. Until: "2026-04-31" is not a date\./);
    const one = await page('since=2026-03-01&until=nope');
    expect(input(one.offsets, 'since')).toContain('value="2026-03-01"');
    expect(input(one.offsets, 'since')).toContain('type="date"');
    expect(input(one.offsets, 'until')).toContain('value="nope"');
  });
});

describe('the developer page: Until before From', () => {
  test('said next to the form (422), both days kept in their date fields; no list, not "none match"', async () => {
    const p = await page('since=2026-03-10&until=2026-03-01');
    expect(p.status).toBe(422);
    expect(alerts(p.offsets)).toEqual([expect.stringContaining('Until: 2026-03-01 is before From (2026-03-10); no day is in both.</p>')]);
    expect(alerts(p.offsets)[0]).not.toContain('YYYY-MM-DD');
    for (const [name, value] of [
      ['since', '2026-03-10'],
      ['until', '2026-03-01'],
    ] as const)
      expect(input(p.offsets, name)).toMatch(new RegExp(`type="date".*value="${value}"`));
    expect(input(p.offsets, 'until')).toContain('aria-invalid="true"');
    expect(rows(p.offsets)).toBe(0);
    expect(p.offsets).not.toContain('match these filters');
    // One day, From and Until the same: that day.
    expect(rows((await page('since=2026-03-10&until=2026-03-10')).offsets)).toBe(3);
  });
});

describe('the developer page: refreshing keeps the filter, and the filter keeps the refresh', () => {
  const href = (html: string, text: string) =>
    new RegExp(`<a href="([^"]*)">${text}</a>`).exec(html)?.[1]?.replaceAll('&#38;', '&') ?? `no link "${text}"`;
  test('the links to refresh and to stop carry the filter; the form of the filter carries the refresh', async () => {
    const filtered = await page('status=processing&reference=ops');
    expect(href(filtered.html, 'Refresh every 10 s')).toBe('/?mode=test&status=processing&reference=ops&refresh=10');
    expect(filtered.offsets).not.toContain('name="refresh"');
    const refreshing = await page('status=processing&reference=ops&refresh=10');
    expect(href(refreshing.html, 'Stop refreshing')).toBe('/?mode=test&status=processing&reference=ops');
    expect(refreshing.offsets).toContain('<input type="hidden" name="refresh" value="10">');
  });
});

describe('the developer page: a status filter that is no status', () => {
  test('each status, and any, filters as before: the list, no alert', async () => {
    for (const [query, expected] of [
      ['status=', 3],
      ['status=processing', 3],
      ['status=placed', 0],
      ['status=refunded', 0],
    ] as const) {
      const p = await page(query);
      expect([query, p.status, rows(p.offsets), alerts(p.offsets)]).toEqual([query, 200, expected, []]);
    }
  });

  test.each(['bogus', 'Placed', 'pending_review', '<b>x</b>'])(
    'status=%s is said next to the form, naming the statuses there are, and no list is shown as if unfiltered',
    async (value) => {
      // Another field's value stays, as beside a bad date.
      const p = await page(`status=${encodeURIComponent(value)}&reference=ops`);
      expect(p.status).toBe(422);
      const said = alerts(p.offsets);
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`Status: "${value}" is not a status: choose processing, placed or refunded (or any).`);
      expect(p.offsets.indexOf('role="alert"')).toBeLessThan(p.offsets.indexOf('<form method="get"'));
      // The select cannot hold a value it does not offer: no status is chosen, and it is marked and tied to the message.
      const select = /<select [^>]*name="status"[^>]*>[\s\S]*?<\/select>/.exec(p.offsets)?.[0] ?? '';
      expect(select).toContain('aria-invalid="true"');
      expect(select).toContain(`aria-describedby="${/id="([^"]+)"/.exec(said[0]!)![1]}"`);
      expect(select).not.toContain(' selected');
      expect(input(p.offsets, 'reference')).toContain('value="ops"');
      expect(rows(p.offsets)).toBe(0);
      expect(p.offsets).not.toContain('match these filters');
      expect(p.offsets).toContain('not listed');
      for (const id of ['account', 'impact', 'keys', 'controls']) expect(p.html).toContain(`aria-labelledby="${id}"`);
    },
  );

  test('a bad status and a bad date: both said, in the form order, in one alert', async () => {
    const p = await page('status=bogus&since=2026-02-30&until=2026-03-10');
    expect(p.status).toBe(422);
    expect(alerts(p.offsets).map((said) => said.replace(/<[^>]+>/g, ''))).toEqual([
      'Status: "bogus" is not a status: choose processing, placed or refunded (or any). From: "2026-02-30" is not a date. ' +
        'Give a day as YYYY-MM-DD, such as 2026-01-31.',
    ]);
    expect(input(p.offsets, 'until')).toContain('value="2026-03-10"');
  });
});

describe('the developer page: a reference whose bytes are not UTF-8', () => {
  test('is said by the form (422), its field emptied and marked, as the API refuses it: not read as U+FFFD and matched against nothing', async () => {
    for (const bytes of ['%FF', 'ops%C3', '%ED%A0%80']) {
      const p = await page(`reference=${bytes}&status=processing`);
      expect([bytes, p.status]).toEqual([bytes, 422]);
      expect(alerts(p.offsets).map((said) => said.replace(/<[^>]+>/g, ''))).toEqual([
        'Reference starts with: the address sent bytes that are not UTF-8 text; type it again.',
      ]);
      expect(input(p.offsets, 'reference')).toContain('aria-invalid="true"');
      expect(input(p.offsets, 'reference')).toContain('value=""');
      expect(p.offsets).not.toContain('\uFFFD');
      expect([rows(p.offsets), p.offsets.includes('not listed')]).toEqual([0, true]);
    }
    // A reference that holds U+FFFD itself is text: it filters.
    expect((await page(`reference=${encodeURIComponent('\uFFFD')}`)).status).toBe(200);
  });
});

describe('the developer page: a filter given twice in the address', () => {
  test.each([
    ['status=placed&status=refunded', 'status', 'Status: given 2 times, "placed" and "refunded"; a filter takes one value.'],
    ['status=processing&status=processing', 'status', 'Status: given 2 times, "processing" and "processing"; a filter takes one value.'],
    [
      'reference=a&reference=b&reference=c',
      'reference',
      'Reference starts with: given 3 times, "a", "b" and "c"; a filter takes one value.',
    ],
    ['since=2026-03-10&since=2026-03-11', 'since', 'From: given 2 times, "2026-03-10" and "2026-03-11"; a filter takes one value.'],
    ['until=2026-03-10&until=', 'until', 'Until: given 2 times, "2026-03-10" and ""; a filter takes one value.'],
  ])('%s is refused as a bad value is: said above the form, the field marked, no offsets listed', async (query, name, message) => {
    // Before, the repeated field was read as empty: the offsets listed unfiltered, with 200.
    const p = await page(query);
    expect(p.status).toBe(422);
    const said = alerts(p.offsets);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(message);
    expect(p.offsets.indexOf('role="alert"')).toBeLessThan(p.offsets.indexOf('<form method="get"'));
    const control = new RegExp(`<(?:input|select) [^>]*name="${name}"[^>]*>`).exec(p.offsets)?.[0] ?? '';
    expect(control).toContain('aria-invalid="true"');
    expect(control).toContain(`aria-describedby="${/id="([^"]+)"/.exec(said[0]!)![1]}"`);
    expect(rows(p.offsets)).toBe(0);
    expect(p.offsets).toContain('not listed');
    for (const id of ['account', 'impact', 'keys', 'controls']) expect(p.html).toContain(`aria-labelledby="${id}"`);
  });

  test("the page's cursor given twice is refused too; a field given once beside it keeps its value", async () => {
    const p = await page('after=off_a&after=off_b&reference=ops');
    expect(p.status).toBe(422);
    expect(alerts(p.offsets).join(' ')).toContain('Page (after): given 2 times, "off_a" and "off_b"; a filter takes one value.');
    expect(input(p.offsets, 'reference')).toContain('value="ops"');
    expect(input(p.offsets, 'reference')).not.toContain('aria-invalid');
    expect(rows(p.offsets)).toBe(0);
    expect(p.offsets).not.toContain('rel="first"');
  });

  test('a repeated filter and a bad one beside it: both said, in the form order, in one alert', async () => {
    const p = await page('until=nope&status=placed&status=bogus');
    expect(p.status).toBe(422);
    expect(alerts(p.offsets).map((said) => said.replace(/<[^>]+>/g, ''))).toEqual([
      'Status: given 2 times, "placed" and "bogus"; a filter takes one value. Until: "nope" is not a date. ' +
        'Give a day as YYYY-MM-DD, such as 2026-01-31.',
    ]);
  });
});

describe('the Requests view: a filter given twice in the address', () => {
  async function requests(query: string): Promise<{ status: number; html: string; listed: number; alerts: string[] }> {
    await served.server.sandbox.journal.flush();
    const res = await fetch(`${served.server.origin}/requests?${query}`, { headers: { accept: 'text/html', cookie } });
    const html = await res.text();
    return { status: res.status, html, listed: html.match(/<li>/g)?.length ?? 0, alerts: alerts(html) };
  }

  test('each filter given once lists as before', async () => {
    for (const query of ['status=2xx', 'path=/api/v1/offsets', 'before=1000000']) {
      const r = await requests(query);
      expect([query, r.status, r.alerts]).toEqual([query, 200, []]);
      expect(r.listed, query).toBeGreaterThan(0);
    }
  });

  test.each([
    ['status=4xx&status=2xx', 'status may be given only once; it was given 2 times: "4xx" and "2xx".'],
    [
      'path=/api/v1/offsets&path=/api/v1/balance',
      'path may be given only once; it was given 2 times: "/api/v1/offsets" and "/api/v1/balance".',
    ],
    ['before=5&before=9&before=7', 'before may be given only once; it was given 3 times: "5", "9" and "7".'],
  ])('%s is refused as a bad value is: 422, said above the form, no requests listed', async (query, message) => {
    // Before, the repeated filter was dropped: the newest requests listed unfiltered, with 200.
    const r = await requests(query);
    expect(r.status).toBe(422);
    expect(r.alerts.map((said) => said.replace(/<[^>]+>/g, ''))).toEqual([message]);
    expect(r.html.indexOf('role="alert"')).toBeLessThan(r.html.indexOf('<form method="get" action="/requests"'));
    expect(r.listed).toBe(0);
    expect(r.html).toContain('The requests are not listed until the filter above is fixed.');
  });

  test('a field given once beside a repeated one keeps its value', async () => {
    const r = await requests('status=2xx&status=4xx&path=/api/v1/offsets');
    expect(r.status).toBe(422);
    expect(r.html).toContain('name="path" placeholder="/api/v1/offsets" value="/api/v1/offsets"');
  });
});

describe('the Requests view: a status filter its select does not offer', () => {
  test.each([
    ['404', '404'],
    ['3xx', '3xx'],
    ['4XX', '4xx'],
  ])('status=%s lists by it, and the select shows it chosen (%s), not "any status"', async (given, shown) => {
    const key = (await served.server.sandbox.defaultKey('test'))!;
    expect((await fetch(`${served.server.url}/offsets/off_nothere`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    await served.server.sandbox.journal.flush();
    const res = await fetch(`${served.server.origin}/requests?status=${given}`, { headers: { accept: 'text/html', cookie } });
    expect(res.status).toBe(200);
    const html = await res.text();
    const select = /<select id="r-status"[\s\S]*?<\/select>/.exec(html)?.[0] ?? '';
    // Before, no option was chosen: the select showed "any status" over a list that was filtered.
    expect(select.match(/<option [^>]*selected[^>]*>[^<]*/g)).toEqual([`<option value="${shown}" selected>${shown}`]);
    const statuses = [...html.matchAll(/<span class="http s\d">(\d+)<\/span>/g)].map((m) => m[1]);
    if (given === '3xx') expect(statuses).toEqual([]);
    else expect(statuses.length).toBeGreaterThan(0);
    for (const status of statuses) expect(status).toMatch(given === '404' ? /^404$/ : /^4\d\d$/);
  });
});

describe('the developer page: an address whose mode is no such thing', () => {
  const get = async (query: string) => {
    const res = await fetch(`${served.server.origin}/?${query}`, { headers: { accept: 'text/html', cookie } });
    const html = await res.text();
    const notice = /<p id="notice" class="notice error"[^>]*>([^<]*)<\/p>/
      .exec(html)?.[1]
      ?.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
    return [res.status, notice];
  };
  test('a mode other than test or live, or two, is said (422) over test mode, not shown as test mode in silence', async () => {
    // Before: 200, test mode, nothing said.
    expect(await get('mode=LIVE')).toEqual([422, 'The mode is test or live, given once, not "LIVE": test mode is shown.']);
    expect(await get('mode=live&mode=test')).toEqual([
      422,
      'The mode is test or live, given once, not ["live","test"]: test mode is shown.',
    ]);
    expect(await get('mode=live')).toEqual([200, undefined]);
  });
});
