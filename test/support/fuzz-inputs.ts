/**
 * The bad (and some good) inputs the fuzz tests throw at carbon, as fast-check arbitraries, and
 * the oracle every answer is held to: a documented status and code, the error envelope, no stack
 * trace, no key echoed.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_CODES } from '../../src/service/errors.js';
import { STACK_FRAME } from './children.js';

export interface Keys {
  test: string;
  live: string;
  readOnly: string;
}

/** The codes an answer may carry: the service's table and the server's own, never a 5xx. */
const DOCUMENTED: Record<string, number> = {
  ...Object.fromEntries(
    Object.entries(ERROR_CODES)
      .filter(([, v]) => v.status < 500)
      .map(([code, v]) => [code, v.status]),
  ),
  malformed_request: 400,
  request_timeout: 408,
  headers_too_large: 431,
};

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const base62 = (n: number) => fc.string({ unit: fc.constantFrom(...BASE62), minLength: n, maxLength: n });

/** Numbers a purchase should refuse (and a few it should take). */
const numbers = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    1,
    1.5,
    -0,
    999_999,
    1_000_000,
    1_000_001,
    5_000_000,
    5_000_001,
    2 ** 31,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e308,
    Number.MIN_VALUE,
  ),
  fc.integer({ min: -2_000_000, max: 6_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Raw number texts JSON.parse reads in odd ways. */
const numberTexts = fc.constantFrom(
  '1e400',
  '-1e400',
  '1E2',
  '1.0',
  '10.000000000000001',
  '0.0000001e7',
  '-0',
  '00',
  '+1',
  '.5',
  '0x10',
  'NaN',
  'Infinity',
  '1_000',
);

const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  numbers,
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** References: unicode of every kind, empty, at and past the 200-character limit. */
const references = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    'é'.repeat(200),
    '😀'.repeat(200),
    '😀'.repeat(201),
    'a'.repeat(201),
    '\u0000',
    '\ud800',
    'a\u202eb',
    '<script>alert(1)</script>',
    "'; DROP TABLE offsets; --",
  ),
);

/** A purchase body in text: near misses, wrong types, duplicate keys, deep nesting, huge. */
export function purchaseBodies(options: { hugeBytes: number }): fc.Arbitrary<string> {
  const field = fc.oneof(numbers, anyJsonValue);
  const object = fc.record(
    {
      kg: field,
      amount_cents: field,
      reference: fc.oneof(references, anyJsonValue),
      extra: anyJsonValue,
    },
    { requiredKeys: [] },
  );
  return fc.oneof(
    // Valid-looking purchases, so the money does move now and then.
    fc.record({ kg: fc.integer({ min: 1, max: 3000 }), reference: references }, { requiredKeys: ['kg'] }).map((o) => JSON.stringify(o)),
    fc.record({ amount_cents: fc.integer({ min: 1, max: 20_000 }) }).map((o) => JSON.stringify(o)),
    object.map((o) => JSON.stringify(o)),
    // Raw number texts in place of a number.
    fc.tuple(fc.constantFrom('kg', 'amount_cents'), numberTexts).map(([k, n]) => `{"${k}":${n}}`),
    // Duplicate keys: two parsers could read one body two ways.
    fc.tuple(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100 })).map(([a, b]) => `{"kg":${a},"kg":${b}}`),
    fc.constantFrom('{"kg":1,"reference":"a","reference":"b"}', '{"kg":1,"\\u006bg":2}', '{"amount_cents":100,"kg":null,"kg":5}'),
    // Not JSON, or not an object.
    fc.string({ maxLength: 50 }),
    fc.string({ unit: 'binary', maxLength: 50 }),
    fc.json({ maxDepth: 3 }),
    fc.constantFrom('', ' ', 'null', '[]', '"kg"', '{', '{"kg":1', '{"kg":1}}', '{"kg":1} {"kg":2}', '\uFEFF{"kg":1}', '{"kg":1}\u0000'),
    // Deep nesting, inside and outside a field.
    fc.integer({ min: 1, max: 200_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
    fc.integer({ min: 1, max: 50_000 }).map((n) => `{"kg":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
    fc.integer({ min: 1, max: 50_000 }).map((n) => `{"kg":1,"reference":${'['.repeat(n)}${']'.repeat(n)}}`),
    // Huge: a long reference, a long key, a long body of nothing.
    fc.constant(JSON.stringify({ kg: 1, reference: 'r'.repeat(options.hugeBytes) })),
    fc.constant(`{"${'k'.repeat(options.hugeBytes)}":1}`),
    fc.constant(`${' '.repeat(options.hugeBytes)}{"kg":1}`),
  );
}

/** Authorization headers: the real keys, keys of the right shape that are not ours, junk, a 256-character key. */
export function authorizations(keys: Keys): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(`Bearer ${keys.test}`, `Bearer ${keys.live}`, `Bearer ${keys.readOnly}`, `bearer  ${keys.test} `),
    },
    fc.constant(undefined),
    base62(32).map((s) => `Bearer ck_test_${s}`),
    fc.constantFrom(
      '',
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `Bearer ${'k'.repeat(256)}`,
      `Bearer ck_test_${'A'.repeat(248)}`,
      `Bearer ${keys.test} extra`,
      `Token ${keys.test}`,
    ),
    fc.string({ maxLength: 40 }),
  );
}

export const idempotencyKeys = fc.oneof(
  fc.uuid(),
  fc.constant(undefined),
  fc.string({ maxLength: 30 }),
  fc.constantFrom('', ' ', 'a'.repeat(255), 'a'.repeat(256), 'ключ', 'key with spaces', 'tab\there'),
);

export const methods = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
  fc.constantFrom('PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'post', 'Get'),
);

const PATHS = ['/api/v1/offsets', '/api/v1/quotes', '/api/v1/balance', '/api/v1/impact'];

export const paths = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PATHS) },
  fc.constantFrom(
    '/api/v1/offsets/off_doesnotexist',
    '/api/v1/offsets/%ZZ',
    '/api/v1/offsets/%00',
    '/api/v1/offsets/..%2F..%2Fbalance',
    '/api/v1/offsets/',
    '/api/v1/offsets//',
    '/api/v1/../v1/balance',
    '/api/v2/offsets',
    '/api/v1',
    '/api/v1/',
    '/API/V1/OFFSETS',
    '/api/v1/offsets/off_%F0%9F%98%80',
    `/api/v1/offsets/${'x'.repeat(5000)}`,
    '/api/v1/balance/',
    '/api/v1/offsets?',
    '/api/v1//offsets',
  ),
  fc.string({ maxLength: 30 }).map((s) => `/api/v1/offsets/${encodeURIComponent(s)}`),
  fc.string({ maxLength: 30 }).map((s) => `/api/v1/${encodeURIComponent(s)}`),
);

/** Query parameters: the list's own with bad values, unknown ones, repeated ones. */
export const queries = fc.oneof(
  fc.constant({} as Record<string, string | string[]>),
  fc.record(
    {
      limit: fc.oneof(
        fc.constantFrom('0', '1', '100', '101', '-1', '1e2', ' 5', '5 ', '0x10', '', '99999999999999999999'),
        fc.string({ maxLength: 6 }),
      ),
      starting_after: fc.oneof(fc.constantFrom('off_nope', '', 'x'.repeat(256)), fc.string({ maxLength: 20 })),
      reference: references,
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, string | string[]>>,
  fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }),
    fc.oneof(fc.string({ maxLength: 8 }), fc.array(fc.string({ maxLength: 4 }), { minLength: 2, maxLength: 3 })),
    {
      maxKeys: 3,
    },
  ),
  fc.constant({ limit: ['1', '2'] } as Record<string, string | string[]>),
  fc.constant({ __proto__: 'x', constructor: 'y' } as unknown as Record<string, string | string[]>),
);

export interface Answer {
  status: number;
  body: unknown;
  /** The whole answer as text (headers included), to search for things that must not be there. */
  text: string;
}

/**
 * The oracle: 2xx with a resource, or a documented status carrying its documented code in the
 * spec's error envelope; never a 5xx, never a stack trace, never a full key of the sandbox.
 */
export function expectDocumented(answer: Answer, secrets: string[], context: string): void {
  const { status, body, text } = answer;
  expect(status, context).not.toBeGreaterThanOrEqual(500);
  expect(text, context).not.toMatch(STACK_FRAME);
  for (const s of secrets) expect(text.includes(s), `${context}: a full key is in the answer`).toBe(false);
  if (status === 200 || status === 201) {
    expect(typeof (body as { object?: unknown })?.object, context).toBe('string');
    return;
  }
  const error = (body as { error?: { type?: unknown; code?: unknown; message?: unknown } } | undefined)?.error;
  expect(error, `${context}: no error envelope`).toBeDefined();
  expect(typeof error!.code, context).toBe('string');
  expect(DOCUMENTED[error!.code as string], `${context}: code ${String(error!.code)} for status ${status}`).toBe(status);
  expect(['authentication_error', 'permission_error', 'invalid_request_error', 'rate_limit_error', 'api_error'], context).toContain(
    error!.type,
  );
  expect(typeof error!.message === 'string' && (error!.message as string).length > 0, context).toBe(true);
}
