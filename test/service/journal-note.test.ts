import { describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { note } from '../../src/service/journal-note.js';
import { newApiKey } from '../../src/service/keys.js';

/** An answered request as the journal keeps it: what it shows of the Idempotency-Key sent. */

const trace = { started: 0, keyId: null, mode: null, now: null, emptied: null, offsetId: null, replayed: false };
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

  test("a run of 32 or more letters and digits, a bare secret's shape, is its last four (README); a hex one, a digest, whole", () => {
    const body = (reference: string) =>
      note(
        'req_x',
        { method: 'POST', path: '/api/v1/offsets', query: {}, headers: {}, body: JSON.stringify({ kg: 1, reference }) },
        response,
        trace,
        0,
        0,
        'vm:1',
      ).request_body;
    expect(JSON.parse(body('INV20261203ABCDEFGHIJKLMNOPQRSTUVWX')!)).toEqual({ kg: 1, reference: '…UVWX' });
    expect(JSON.parse(body('0377db6849b176f67f2856af20707fca8664a3fb')!).reference).toBe('0377db6849b176f67f2856af20707fca8664a3fb');
  });
});

describe('what the journal keeps of a value named as a secret', () => {
  const entry = (query: string, body = '', method = 'GET') =>
    note('req_x', { method, path: '/api/v1/balance', query: {}, rawQuery: query, headers: {}, body }, response, trace, 0, 0, 'vm:1');

  test('a query parameter named as a password, a token or a secret keeps its name, its value masked: the rest as it came', () => {
    const kept = entry('limit=5&password=hunter2&client_secret=abc123&access_token=SUPERSECRET2&X-Api-Key=k1&auth=x&reference=pass%20word');
    expect(kept.query).toBe('limit=5&password=***&client_secret=***&access_token=***&X-Api-Key=***&auth=***&reference=pass%20word');
    // Names spelt with escapes are read as the server reads them.
    expect(entry('pass%77ord=hunter2&tok%65n=t').query).toBe('pass%77ord=***&tok%65n=***');
    // A value with no name, or a name with no value, and names that only look alike, are kept.
    for (const plain of ['hunter2', 'password', 'passenger=3&author=me&keyword=x&monkey=y', '']) expect(entry(plain).query).toBe(plain);
  });

  test("a JSON body's member so named keeps its name, its value masked, and the body stays JSON; a form's as a query", () => {
    const json = '{"kg":1,"reference":"password","password":"hunter2","nested":{"apiKey":"k\\"1","n":[{"sessionId":"s"}]},"token":5}';
    const kept = entry('', json, 'POST').request_body!;
    expect(JSON.parse(kept)).toEqual({
      kg: 1,
      reference: 'password',
      password: '***',
      nested: { apiKey: '***', n: [{ sessionId: '***' }] },
      token: '***',
    });
    // A name is read as the app's JSON parser reads it, its characters however escaped; a number or a boolean is masked as a string is.
    const escaped =
      '{"pass\\u0077ord":"hunter2","\\u0063\\u006c\\u0069\\u0065\\u006e\\u0074\\u005f\\u0073\\u0065\\u0063\\u0072\\u0065\\u0074":"s3","pin":1234,"pwd":true,"secret":null}';
    expect(JSON.parse(entry('', escaped, 'POST').request_body!)).toEqual({
      password: '***',
      client_secret: '***',
      pin: 1234,
      pwd: '***',
      secret: null,
    });
    expect(entry('', 'kg=1&password=hunter2', 'POST').request_body).toBe('kg=1&password=***');
    // A value of any form under such a name, an object or an array too, is masked whole; strings with quotes and backslashes in them are read as JSON reads them.
    const whole =
      '{"kg":5,"tokens":["tok_a",{"b":"]"}],"client_secret":{"value":"shh","n":[1,{"x":"}"}]},"note":"a \\"password\\": \\\\","api_key" : [ "plain" ] ,"z":2}';
    expect(JSON.parse(entry('', whole, 'POST').request_body!)).toEqual({
      kg: 5,
      tokens: '***',
      client_secret: '***',
      note: 'a "password": \\',
      api_key: '***',
      z: 2,
    });
    // A JSON text cut short is masked to its end.
    expect(entry('', '{"kg":1,"password":{"a":"hun', 'POST').request_body).toBe('{"kg":1,"password":"***"');
    // A form with a line end after it (curl --data-binary @file), or a space in a value, is still a form.
    expect(entry('', 'kg=5&password=hunter2\r\n', 'POST').request_body).toBe('kg=5&password=***');
    expect(entry('', 'kg=5&password=hunter2&note=a b', 'POST').request_body).toBe('kg=5&password=***&note=a b');
    // Text that is neither is kept as it came.
    expect(entry('', 'password: hunter2', 'POST').request_body).toBe('password: hunter2');
  });
});
