import { beforeAll, describe, expect, it } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import { certificateNotFoundPage, certificatePage, escapeHtml, formatCents } from '../../src/server/pages/certificate.js';
import type { RunningServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';

/** The public certificate page: readable, printable, escaped, and never the private reference. */

const REFERENCE = 'SECRET-PO-4471 <script>alert("ref")</script>';

describe('certificate page, served', () => {
  const served = serveInProcess('carbon-cert-');
  let server: RunningServer;
  let offset: Offset;
  let page: Response;
  let html: string;

  beforeAll(async () => {
    server = served.server;
    const live = (await server.sandbox.defaultKey('live'))!;
    await server.sandbox.topUp('live', 1_000_000);
    const headers = { authorization: `Bearer ${live}`, 'idempotency-key': 'cert-1' };
    const bought = (await (
      await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: JSON.stringify({ kg: 12_345, reference: REFERENCE }) })
    ).json()) as Offset;
    await server.sandbox.advanceClock(60_000);
    offset = (await (await fetch(`${server.url}/offsets/${bought.id}`, { headers })).json()) as Offset;
    page = await fetch(offset.certificate_url!);
    html = await page.text();
  });

  it('is an HTML page on the server origin', () => {
    expect(offset.status).toBe('placed');
    expect(offset.certificate_url!.startsWith(`${server.origin}/certificates/cert_`)).toBe(true);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
  });

  it('shows the kg, the date placed, the offset id, the amount and the rate', () => {
    expect(html).toContain('12,345');
    expect(html).toContain(offset.id);
    expect(html).toContain('$493.80'); // 12345 kg × 4000 millicents = 49380 cents
    expect(html).toContain('$40.00 per tonne');
    expect(html).toContain(`datetime="${offset.placed!}"`);
    const placed = new Date(offset.placed!);
    expect(html).toContain(String(placed.getUTCFullYear()));
    expect(html).toContain(placed.toLocaleDateString('en-GB', { month: 'long', timeZone: 'UTC' }));
  });

  it('never shows the reference', () => {
    expect(html).not.toContain('SECRET');
    expect(html).not.toContain('PO-4471');
    expect(html).not.toContain('alert');
  });

  it('is printable: a print stylesheet, no script, no outside resources', () => {
    expect(html).toContain('@media print');
    expect(html).toContain('@page');
    expect(html).not.toMatch(/<script|<link|<img|src=|https?:\/\/(?!www\.w3\.org)/i);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers HEAD without a body', async () => {
    const r = await fetch(offset.certificate_url!, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('');
  });

  it('is 404 HTML for an unknown id, a malformed id, and a test offset', async () => {
    const test = (await server.sandbox.defaultKey('test'))!;
    const headers = { authorization: `Bearer ${test}`, 'idempotency-key': 'cert-test' };
    const t = (await (await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: '{"kg":1}' })).json()) as Offset;
    await server.sandbox.advanceClock(3_000);
    const placedTest = (await (await fetch(`${server.url}/offsets/${t.id}`, { headers })).json()) as Offset;
    expect([placedTest.status, placedTest.certificate_url]).toEqual(['placed', null]);

    for (const id of ['cert_000000000000000000000000', 'nonsense', t.id, '%ZZ', `cert_${'f'.repeat(500)}`]) {
      const r = await fetch(`${server.origin}/certificates/${id}`);
      expect(r.status, id).toBe(404);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const body = await r.text();
      expect(body).toContain('Certificate not found');
    }
  });

  it('escapes whatever the address holds', async () => {
    const r = await fetch(`${server.origin}/certificates/${encodeURIComponent('<script>alert(1)</script>"&\'')}`);
    expect(r.status).toBe(404);
    const body = await r.text();
    expect(body).not.toContain('<script>');
    expect(body).toContain('&#60;script&#62;alert(1)&#60;/script&#62;&#34;&#38;&#39;');
  });
});

describe('certificate page, rendered', () => {
  const hostile: Offset = {
    object: 'offset',
    id: 'off_<b>bold</b>',
    livemode: true,
    status: 'placed',
    kg: 1_000_000,
    amount_cents: 4_000_000,
    currency: 'us"d<',
    rate_millicents_per_kg: 4000,
    requested: { kg: 1_000_000, amount_cents: null },
    reference: 'NEVER-SHOWN',
    certificate_url: 'http://x/certificates/cert_1',
    created: '2030-01-15T12:00:00.000Z',
    placed: '2030-01-15T12:01:00.000Z',
  };

  it('escapes every value it shows', () => {
    const out = certificatePage(hostile, 'cert_"><i>x</i>');
    expect(out).not.toContain('<b>bold</b>');
    expect(out).not.toContain('<i>x</i>');
    expect(out).toContain('off_&#60;b&#62;bold&#60;/b&#62;');
    expect(out).toContain('US&#34;D&#60;');
    expect(out).not.toContain('NEVER-SHOWN');
    expect(out).toContain('1,000,000');
    expect(out).toContain('1,000 t');
    expect(out).toContain('15 January 2030, 12:01 UTC');
  });

  it('shows fractional tonnes exactly', () => {
    expect(certificatePage({ ...hostile, kg: 1_250 }, 'cert_x')).toContain('(1.25 t)');
    expect(certificatePage({ ...hostile, kg: 5 }, 'cert_x')).toContain('(0.005 t)');
  });

  it('formats cents with integer arithmetic', () => {
    expect([formatCents(0), formatCents(5), formatCents(100), formatCents(123_456_78), formatCents(-250)]).toEqual([
      '$0.00',
      '$0.05',
      '$1.00',
      '$123,456.78',
      '-$2.50',
    ]);
  });

  it('escapeHtml covers the five characters', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&#60;&#62;&#38;&#34;&#39;');
  });

  it('the not-found page shortens a long id', () => {
    const out = certificateNotFoundPage('c'.repeat(1000));
    expect(out).not.toContain('c'.repeat(81));
    expect(out).toContain('c'.repeat(80));
  });
});
