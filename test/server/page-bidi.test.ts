import { beforeAll, describe, expect, test } from 'vitest';
import { reportHtml } from '../../src/cli/render/report-html.js';
import { weight } from '../../src/cli/render/weight.js';
import { escapeText } from '../../src/server/pages/html.js';
import { buyOver, serveInProcess, sessionCookie } from '../support/in-process-server.js';

/**
 * Text a caller wrote is shown on the pages as it was typed: a bidirectional control in it (a
 * right-to-left override: the spoofed file name `\u202Eabc-gnp.exe` that reads `exe.png-cba`)
 * is shown as `[U+202E]`, not obeyed by the browser; a form field keeps what was typed.
 */

const SPOOF = '\u202Eabc-gnp.exe';
const served = serveInProcess('carbon-page-bidi-');
let cookie: string;
let id: string;
let request: string;

beforeAll(async () => {
  const server = served.server;
  const r = await buyOver(server, { kg: 11, reference: SPOOF }, 'bidi-1');
  expect(r.status).toBe(201);
  id = ((await r.json()) as { id: string }).id;
  request = r.headers.get('request-id')!;
  await server.sandbox.journal.flush();
  cookie = await sessionCookie(server);
});

const html = async (path: string) => {
  const res = await fetch(`${served.server.origin}${path}`, { headers: { accept: 'text/html', cookie } });
  expect(res.status, path).toBe(200);
  return res.text();
};

describe('bidirectional controls in what a caller wrote', () => {
  test('escapeText shows each as its code point; escapeHtml (attributes) keeps it', () => {
    expect(escapeText('\u202Eabc\u2066x\u2069\u200F<b>')).toBe('[U+202E]abc[U+2066]x[U+2069][U+200F]&#60;b&#62;');
    expect(escapeText('plain café — 日本')).toBe('plain café — 日本');
    // Other control characters too (an escape sequence, a bell, C1's CSI), but tab and line breaks.
    expect(escapeText('esc\u001b[2J\u0007\u009b\u007f\tend\r\n')).toBe('esc[U+001B][2J[U+0007][U+009B][U+007F]\tend\r\n');
  });

  test.each([
    ['the offsets', () => '/?mode=test'],
    ["the offset's page", () => `/offsets/${id}`],
    ["the request's page", () => `/requests/${request}`],
  ])('%s: the reference shown as typed, the override not in the text', async (_, path) => {
    const page = await html(path());
    expect(page).toContain('[U+202E]abc-gnp.exe');
    expect(page).not.toContain('\u202E');
  });

  test.each([
    ['a right-to-left override', SPOOF, '[U+202E]abc-g', '\u202E'],
    ['an escape sequence', 'esc\u001b[2Jclear', 'esc[U+001B]', '\u001b'],
  ])('carbon report --format html by reference, %s: the label in the chart and the row shown as typed', (_, group, shown, raw) => {
    const row = { group, offsets: 1, kg: 11, placed_kg: 11, processing_kg: 0, amount_cents: 44 };
    const page = reportHtml({
      by: 'reference',
      rows: [row],
      total: { ...row, group: null },
      mode: 'test',
      sandbox: true,
      weight: weight('kg'),
      since: null,
      until: null,
      made: '2026-11-30T12:00:00Z',
    });
    // The chart's label (cut to its room) and description, and the table's row.
    expect(page.split(shown)).toHaveLength(4);
    expect(page).not.toContain(raw);
  });

  test.each([
    ['a certificate that is none', '/certificates/%E2%80%AEabc-gnp.exe'],
    ['an offset that is none', '/offsets/off_%E2%80%AEabc-gnp.exe'],
    ["the offsets filter's notice", '/?mode=test&status=%E2%80%AEabc-gnp.exe'],
    ["the requests filter's notice", '/requests?status=%E2%80%AEabc-gnp.exe'],
  ])('%s: the address quoted as typed, the override not obeyed', async (_, path) => {
    const res = await fetch(`${served.server.origin}${path}`, { headers: { accept: 'text/html', cookie } });
    const page = await res.text();
    expect(page, path).toContain('[U+202E]abc');
    expect(page, path).not.toContain('\u202E');
  });

  test("an action's notice quoting what was typed (a key id that is none): shown as typed", async () => {
    const home = await fetch(`${served.server.origin}/?mode=test`, { headers: { accept: 'text/html', cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await home.text())![1]!;
    const posted = await fetch(`${served.server.origin}/actions/key-revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: served.server.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, back: 'test', id: SPOOF }).toString(),
    });
    expect(posted.status).toBe(303);
    const page = await html(posted.headers.get('location')!);
    expect(page).toContain('[U+202E]abc-gnp.exe');
    expect(page).not.toContain('\u202E');
  });

  test('the filter field keeps what was typed', async () => {
    const page = await html(`/?mode=test&reference=${encodeURIComponent(SPOOF)}`);
    expect(page).toMatch(/<input id="f-reference" name="reference"[^>]* value="\u202Eabc-gnp\.exe">/);
    expect(page).toContain('[U+202E]abc-gnp.exe');
    // But a NUL, which no HTML may hold: there as U+FFFD, what a browser would read it as.
    const nul = await html('/?mode=test&reference=a%00b');
    expect(nul).toMatch(/<input id="f-reference" name="reference"[^>]* value="a&#65533;b">/);
    expect(nul).not.toContain('\u0000');
  });
});
