import { describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { note } from '../../src/service/journal-note.js';
import { newApiKey } from '../../src/service/keys.js';

/** An answered request as the journal keeps it: what it shows of the Idempotency-Key sent. */

const trace = { started: 0, keyId: null, mode: null, now: null, offsetId: null, replayed: false };
const response: ApiResponse = { status: 201, headers: {}, body: {} };
const kept = (key: string) => {
  const request: ApiRequest = { method: 'POST', path: '/api/v1/offsets', query: {}, headers: { 'idempotency-key': key }, body: '{"kg":1}' };
  return note('req_x', request, response, trace, 0, 0, 'vm:1').idempotency_key;
};

describe("the journal's Idempotency-Key", () => {
  test("carbon's own batch keys whole (their digest is a long run), to match the rows they bought", () => {
    for (const key of ['csv:default:AbCdEfGhIjKlMnOpQrStUvWxYz012345', 'csv:nightly.2:AbCdEfGhIjKlMnOpQrStUvWxYz012345:abcdefghijkl'])
      expect(kept(key)).toBe(key);
  });

  test('an API key in any spelling, or its bare secret, masked; a UUID, a git SHA or a label of another length whole (the caller retries with it)', () => {
    const key = newApiKey('test');
    const secret = key.slice('ck_test_'.length);
    for (const spelling of [key, `CK_TEST_${secret}`, `ck-test-${secret}`, secret])
      expect(kept(spelling)).not.toContain(secret.slice(0, 28));
    for (const plain of [
      '4b1e7c9a-2f0d-4e55-9a1c-7d3b2e8f6a10',
      '0377db6849b176f67f2856af20707fca8664a3fb',
      'AcmeCorpQuarterlyOffsetPurchaseQ4Retry1',
    ])
      expect(kept(plain)).toBe(plain);
  });
});

describe("the journal's bodies", () => {
  test('a key in a JSON body is masked however its characters are spelled (\\u00XX), and the body kept is JSON', () => {
    const key = newApiKey('live');
    const body = `{"kg":1,"reference":"${key.slice(0, 13)}\\u00${key.charCodeAt(13).toString(16)}${key.slice(14)}"}`;
    const request: ApiRequest = { method: 'POST', path: '/api/v1/quotes', query: {}, headers: {}, body };
    const entry = note('req_x', request, response, trace, 0, 0, 'vm:1');
    expect(entry.request_body).not.toContain(key.slice(14, 26));
    expect(JSON.parse(entry.request_body!)).toEqual({ kg: 1, reference: `ck_live_…${key.slice(-4)}` });
  });
});
