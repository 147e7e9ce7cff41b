import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/service/errors.js';
import { anOffset } from '../support/offsets.js';
import { type Exchange, OpenApiValidator } from '../support/openapi.js';

/**
 * openapi.yaml itself: every `$ref` resolves, it says what the spec requires of every
 * operation, and the validator the contract suite relies on does reject what it should
 * (a validator that passes everything would make that suite's last check worthless).
 */

const v = new OpenApiValidator();

const offset = anOffset({ id: 'off_abc123', status: 'processing', created: '2030-01-15T12:00:00.000Z' });

function ex(partial: Partial<Exchange>): Exchange {
  return {
    method: 'GET',
    path: '/api/v1/offsets/off_abc123',
    status: 200,
    headers: { 'content-type': 'application/json', 'request-id': 'req_abc' },
    body: offset,
    ...partial,
  };
}

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, val] of Object.entries(node)) {
      if (k === '$ref' && typeof val === 'string') out.push(val);
      else refs(val, out);
    }
  }
  return out;
}

describe('openapi.yaml', () => {
  it('is OpenAPI 3.1 and every $ref resolves', () => {
    expect(v.doc.openapi).toBe('3.1.0');
    for (const ref of refs(v.doc)) expect(() => v.resolve({ $ref: ref }, ''), ref).not.toThrow();
  });

  it('documents every operation of the spec, each with 401, 403 and 429, and the spec headers', () => {
    const paths = v.paths();
    const ops: [string, string][] = [
      ['/offsets', 'post'],
      ['/offsets', 'get'],
      ['/offsets/{id}', 'get'],
      ['/quotes', 'post'],
      ['/balance', 'get'],
      ['/impact', 'get'],
    ];
    for (const [path, method] of ops) {
      const op = paths[path]?.[method] as { responses: Record<string, unknown> } | undefined;
      expect(op, `${method} ${path}`).toBeDefined();
      for (const s of ['401', '403', '429', '500', '503', '413']) expect(Object.keys(op!.responses), `${method} ${path}`).toContain(s);
    }
    const buy = paths['/offsets']!.post as { responses: Record<string, unknown>; parameters: unknown[] };
    for (const s of ['201', '400', '402', '409', '422']) expect(Object.keys(buy.responses)).toContain(s);
    const text = JSON.stringify(v.doc);
    for (const header of ['Idempotency-Key', 'Idempotent-Replayed', 'Retry-After', 'Request-Id', 'Allow']) expect(text).toContain(header);
    expect((v.doc.components as { securitySchemes: Record<string, { scheme: string }> }).securitySchemes.bearerAuth!.scheme).toBe('bearer');
  });

  it('names every error code the service can give', () => {
    const text = JSON.stringify(v.doc);
    for (const code of Object.keys(ERROR_CODES)) expect(text, code).toContain(code);
  });

  it('accepts a good response', () => {
    expect(v.check(ex({}))).toEqual([]);
    expect(
      v.check(
        ex({
          method: 'GET',
          path: '/certificates/cert_0123456789abcdef01234567',
          headers: { 'content-type': 'text/html; charset=utf-8', 'request-id': 'req_x' },
          body: undefined,
        }),
      ),
    ).toEqual([]);
  });

  it.each<[string, Partial<Exchange>]>([
    ['a missing field', { body: { ...offset, kg: undefined } }],
    ['an extra field', { body: { ...offset, colour: 'green' } }],
    ['a wrong status value', { body: { ...offset, status: 'pending' } }],
    ['a timestamp without milliseconds', { body: { ...offset, created: '2030-01-15T12:00:00Z' } }],
    ['a float amount', { body: { ...offset, amount_cents: 20.5 } }],
    ['no Request-Id', { headers: { 'content-type': 'application/json' } }],
    ['the wrong content type', { headers: { 'content-type': 'text/plain', 'request-id': 'req_x' } }],
    ['an undocumented status', { status: 402 }],
    [
      'an error envelope with the wrong code for its status',
      { status: 401, body: { error: { type: 'authentication_error', code: 'rate_limited', message: 'x' } } },
    ],
    [
      'an error envelope with an extra field',
      {
        status: 404,
        body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'x', param: 'id', stack: 'at …' } },
      },
    ],
    [
      'a 402 without balance_cents',
      {
        method: 'POST',
        path: '/api/v1/offsets',
        status: 402,
        body: { error: { type: 'invalid_request_error', code: 'insufficient_balance', message: 'x', required_cents: 5 } },
      },
    ],
    ['a 429 without Retry-After', { status: 429, body: { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'x' } } }],
    [
      'a 405 without Allow',
      { method: 'DELETE', status: 405, body: { error: { type: 'invalid_request_error', code: 'method_not_allowed', message: 'x' } } },
    ],
    [
      'a 422 validation_error without param',
      { status: 422, body: { error: { type: 'invalid_request_error', code: 'validation_error', message: 'x' } } },
    ],
    ['an unknown path that is not 404', { path: '/api/v1/nope', status: 200 }],
  ])('rejects %s', (_, partial) => {
    expect(v.check(ex(partial)).length).toBeGreaterThan(0);
  });
});

describe('openapi.yaml says what is served', () => {
  const declared = (path: string, method: string) =>
    Object.keys((v.paths()[path]![method] as { responses: Record<string, unknown> }).responses);

  it('declares no 422 for the operations that take no parameters (GET /balance, /impact, /offsets/{id})', () => {
    for (const path of ['/balance', '/impact', '/offsets/{id}']) expect(declared(path, 'get'), path).not.toContain('422');
    expect(JSON.stringify(v.doc)).not.toMatch(/A query parameter an operation does not take is 422/);
  });

  it('its Idempotency-Key and purchase schemas take what carbon takes, and refuse what it refuses', () => {
    const ok = (body: unknown, key = 'k1') =>
      v.check({
        method: 'POST',
        path: '/api/v1/quotes',
        status: 200,
        headers: { 'content-type': 'application/json', 'request-id': 'req_x' },
        body: {
          object: 'quote',
          livemode: false,
          kg: 1,
          amount_cents: 4,
          currency: 'usd',
          rate_millicents_per_kg: 4000,
          available_cents: 1,
          sufficient_balance: true,
          requires_review: false,
        },
        request: { headers: { 'idempotency-key': key }, body: JSON.stringify(body) },
      });
    for (const key of ['a b 123', 'ключ 🌍', 'k'.repeat(255)]) expect(ok({ kg: 1 }, key), key).toEqual([]);
    for (const key of [' a', 'a ', 'a\tb', '']) expect(ok({ kg: 1 }, key).length, JSON.stringify(key)).toBeGreaterThan(0);
    for (const body of [
      { kg: null, amount_cents: 5 },
      { amount_cents: null, kg: 5, reference: null },
    ])
      expect(ok(body)).toEqual([]);
    for (const body of [{ kg: null }, { kg: 1, amount_cents: 1 }, {}, { kg: 1, colour: 'red' }]) {
      expect(ok(body).length, JSON.stringify(body)).toBeGreaterThan(0);
    }
  });
});
