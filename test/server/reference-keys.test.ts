import { beforeAll, describe, expect, test } from 'vitest';
import { noPaint, offsetCard, offsetPlain, offsetRow, offsetTable } from '../../src/cli/render/resources.js';
import { buyOver, serveInProcess, sessionCookie } from '../support/in-process-server.js';
import { anOffset } from '../support/offsets.js';

/**
 * A reference is the caller's text, and an application may paste a key into it by mistake. Where
 * carbon shows it to a person (the developer page's offsets and an offset's page; a terminal's
 * `carbon list` and `carbon show`), the key is masked as the journal masks it; the API and data
 * (--json, CSV, a pipe) return the reference as it was sent.
 */

const SECRET = 't6OScJLbnvMIkK278EbeBoJorBHRPRJE';
const KEY = `ck_live_${SECRET}`;
const REFERENCE = `leak ${KEY}`;
const MASKED = 'leak ck_live_…PRJE';
const served = serveInProcess('carbon-reference-keys-');
let cookie: string;
let id: string;
let sent: { reference: string };

beforeAll(async () => {
  const server = served.server;
  const r = await buyOver(server, { kg: 3, reference: REFERENCE }, 'reference-key-1');
  expect(r.status).toBe(201);
  sent = (await r.json()) as { id: string; reference: string };
  id = (sent as unknown as { id: string }).id;
  cookie = await sessionCookie(server);
});

describe('an API key in a reference', () => {
  test('the API returns the reference as it was sent', () => {
    expect(sent.reference).toBe(REFERENCE);
  });

  test.each([
    ['the offsets', () => '/?mode=test'],
    ["the offset's page", () => `/offsets/${id}`],
  ])('%s: masked on the developer page', async (_, path) => {
    const res = await fetch(`${served.server.origin}${path()}`, { headers: { accept: 'text/html', cookie } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain(MASKED);
    expect(page).not.toContain(SECRET);
  });

  test("a long reference of the caller's own (letters and digits, no key's shape) is shown whole, on the page and the terminal", async () => {
    const own = 'PO-AnnualSustainabilityOffsetsForBoardTravel2027';
    const offset = anOffset({ reference: own });
    expect(offsetTable([offset], noPaint, 200)).toContain(own);
    expect(offsetCard(offset, noPaint)).toContain(own);
    const r = await buyOver(served.server, { kg: 2, reference: own }, 'reference-own-1');
    const { id: ownId } = (await r.json()) as { id: string };
    for (const path of ['/?mode=test', `/offsets/${ownId}`]) {
      const page = await (await fetch(`${served.server.origin}${path}`, { headers: { accept: 'text/html', cookie } })).text();
      expect(page, path).toContain(own);
    }
  });

  test("masked in a terminal's list and card, kept in data (a pipe's rows, show's plain fields)", () => {
    const offset = anOffset({ reference: REFERENCE });
    expect(offsetTable([offset], noPaint, 200)).toContain(MASKED);
    expect(offsetTable([offset], noPaint, 200)).not.toContain(SECRET);
    expect(offsetCard(offset, noPaint)).toContain(MASKED);
    expect(offsetCard(offset, noPaint)).not.toContain(SECRET);
    expect(offsetRow(offset)).toContain(REFERENCE);
    expect(offsetPlain(offset)).toContain(REFERENCE);
  });
});
