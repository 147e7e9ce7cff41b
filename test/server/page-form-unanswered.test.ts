import { describe, expect, test } from 'vitest';
import { signedIn } from '../../src/server/pages/developer/routes.js';
import type { Incoming, Served } from '../../src/server/requests.js';
import { LedgerError } from '../../src/store/ledger-error.js';

/**
 * A form whose session the ledger gives no answer for (a database stalled before the action was
 * looked at): a redirect still, to the page saying the form may not have been done, as when the
 * action's own write gets no answer (test/pages/developer-page-unavailable.test.ts). A 503 page
 * answering the POST would be posted again by a reload. Other failures, and pages, are not changed.
 */

const stalled = (err: Error) =>
  ({
    sandbox: { pages: { readSession: () => Promise.reject(err) } },
    pageOrigin: 'http://127.0.0.1:4242',
  }) as unknown as Served;
const unavailable = new LedgerError('the database did not answer in time', 'postgres://carbon:***@db/carbon', 'try again', true);
const request = (upper: string, path: string, body = '') =>
  ({ method: upper, upper, path, query: {}, headers: { cookie: 'carbon_session=s' }, body, params: [] }) as unknown as Incoming;

describe('the developer page when the ledger does not answer for a session', () => {
  test.each([
    ['a top-up from the live view', '/actions/topup', 'csrf=t&back=live&amount=250&mode=live', '/?mode=live&unsure=topup#notice'],
    ['a key made in the test view', '/actions/key-create', 'csrf=t&back=test', '/?mode=test&unsure=key-create#notice'],
  ])('%s: 303 to the page, which says it may not have been done', async (_what, path, body, location) => {
    const reply = await signedIn(request('POST', path, body), stalled(unavailable));
    expect([reply.status, reply.headers.location]).toEqual([303, location]);
  });

  test('signing out, a page, or another failure: the error goes on to be answered as it was (a 503 page)', async () => {
    await expect(signedIn(request('POST', '/logout', 'csrf=t'), stalled(unavailable))).rejects.toBe(unavailable);
    await expect(signedIn(request('GET', '/'), stalled(unavailable))).rejects.toBe(unavailable);
    const bug = new Error('a bug');
    await expect(signedIn(request('POST', '/actions/topup', 'csrf=t'), stalled(bug))).rejects.toBe(bug);
  });
});
