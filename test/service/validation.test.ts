import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectError, type OffsetBody, openWorld, type World } from '../support/world.js';

let w: World;
beforeAll(async () => {
  w = await openWorld();
  // Enough for every boundary purchase below (5,000,000 cents and 1,000,000 kg = 4,000,000 cents).
  await w.sandbox.topUp('test', 10_000_000);
});
afterAll(() => w.close());

let n = 0;
const buy = (body: unknown, extra: { idem?: string; headers?: Record<string, string> } = {}) =>
  w.call<OffsetBody>('POST', '/offsets', { body, idem: `v-${++n}`, ...extra });
const quote = (body: unknown, extra: { headers?: Record<string, string> } = {}) => w.call('POST', '/quotes', { body, ...extra });

/** Both purchase operations validate the body the same way. */
const bothForms = [
  ['POST /offsets', buy],
  ['POST /quotes', quote],
] as const;

function offsetsCount(): number {
  return w.rows('SELECT seq FROM offsets').length;
}

describe('400: the body is not a JSON object', () => {
  test.each([
    ['empty body', ''],
    ['truncated', '{"kg": 5'],
    ['trailing comma', '{"kg": 5,}'],
    ['single quotes', "{'kg': 5}"],
    ['a bare number', '5'],
    ['a string', '"kg"'],
    ['null', 'null'],
    ['an array', '[{"kg": 5}]'],
    ['a duplicated key', '{"kg": 5, "kg": 500000}'],
    ['a duplicated key after a nested value', '{"reference": "a", "kg": 5, "reference": "b"}'],
  ])('%s → 400 invalid_json on both purchase forms, nothing bought', async (_name, raw) => {
    const before = offsetsCount();
    for (const [, send] of bothForms) {
      const err = expectError(await send(raw), 400, 'invalid_json');
      expect(err.type).toBe('invalid_request_error');
    }
    expect(offsetsCount()).toBe(before);
  });

  test('duplicate keys are refused only at the top level of the body; escaped key names are compared decoded', async () => {
    expectError(await buy('{"k\\u0067": 5, "kg": 6}'), 400, 'invalid_json');
    // A nested object may repeat keys of the outer one; it is still an invalid field value (422), not bad JSON.
    expectError(await buy('{"kg": {"kg": 1, "kg": 2}}'), 422, 'validation_error', 'kg');
  });
});

describe('400: Idempotency-Key', () => {
  test('missing on POST /offsets → 400 idempotency_key_missing', async () => {
    const err = expectError(await w.call('POST', '/offsets', { body: { kg: 1 } }), 400, 'idempotency_key_missing');
    expect(err.type).toBe('invalid_request_error');
  });

  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['256 characters beyond ASCII', '🔑'.repeat(256)],
    ['a control character', 'a\tb'],
    ['DEL', 'a\x7fb'],
    ['white space at the end (HTTP would strip it)', 'key '],
    ['an unpaired surrogate', 'a\uD800b'],
  ])('%s → 400 idempotency_key_invalid on POST /offsets and (when present) on POST /quotes', async (_name, key) => {
    const before = offsetsCount();
    expectError(await buy({ kg: 1 }, { idem: key }), 400, 'idempotency_key_invalid');
    expectError(await quote({ kg: 1 }, { headers: { 'idempotency-key': key } }), 400, 'idempotency_key_invalid');
    expect(offsetsCount()).toBe(before);
  });

  test('1 to 255 characters of any text are accepted, counted as code points', async () => {
    expect((await buy({ kg: 1 }, { idem: 'x' })).status).toBe(201);
    expect((await buy({ kg: 1 }, { idem: `${'~'.repeat(254)}!` })).status).toBe(201);
    expect((await buy({ kg: 1 }, { idem: 'my key' })).status).toBe(201);
    expect((await buy({ kg: 1 }, { idem: 'clé' })).status).toBe(201);
    expect((await buy({ kg: 1 }, { idem: '🔑'.repeat(255) })).status).toBe(201);
  });

  test('POST /quotes needs no Idempotency-Key, and a valid one is accepted and changes nothing', async () => {
    expect((await quote({ kg: 1 })).status).toBe(200);
    expect((await quote({ kg: 1 }, { headers: { 'idempotency-key': 'q-1' } })).status).toBe(200);
    expect(w.rows('SELECT * FROM idempotency WHERE key = ?', 'q-1')).toHaveLength(0);
  });

  test('the header is checked before the body: a bad body without the header is idempotency_key_missing', async () => {
    expectError(await w.call('POST', '/offsets', { body: '{nope' }), 400, 'idempotency_key_missing');
  });
});

describe("422 validation_error: Carbon-Max-Amount-Cents (the sandbox's own ceiling)", () => {
  test.each([
    ['a decimal', '1.5', /must be a whole number of cents/],
    ['negative', '-1', /must be a whole number of cents/],
    ['16 digits', '1'.repeat(16), /must be a whole number of cents/],
    ['sent twice (joined with a comma)', '100, 5', /was sent more than once; send it once/],
  ])('%s → 422 naming it, nothing bought', async (_name, value, says) => {
    const before = offsetsCount();
    const err = expectError(
      await buy({ kg: 1 }, { headers: { 'carbon-max-amount-cents': value } }),
      422,
      'validation_error',
      'Carbon-Max-Amount-Cents',
    );
    expect(err.message).toMatch(says);
    expect(offsetsCount()).toBe(before);
  });
});

describe('422 validation_error: kg and amount_cents', () => {
  const badValues: [string, unknown][] = [
    ['a fraction', 1.5],
    ['a tiny fraction', 1.000001],
    ['a numeric string', '5'],
    ['an empty string', ''],
    ['true', true],
    ['false', false],
    ['an array', [5]],
    ['an object', { value: 5 }],
    ['negative', -1],
    ['zero', 0],
    ['negative zero', -0],
  ];

  test.each(badValues)('kg as %s → 422 param kg on both forms', async (_name, value) => {
    for (const [, send] of bothForms) expectError(await send({ kg: value }), 422, 'validation_error', 'kg');
  });

  test.each(badValues)('amount_cents as %s → 422 param amount_cents on both forms', async (_name, value) => {
    for (const [, send] of bothForms) expectError(await send({ amount_cents: value }), 422, 'validation_error', 'amount_cents');
  });

  test('bounds: kg 1 to 1,000,000 and amount_cents 1 to 5,000,000', async () => {
    for (const [, send] of bothForms) {
      expectError(await send({ kg: 1_000_001 }), 422, 'validation_error', 'kg');
      expectError(await send({ amount_cents: 5_000_001 }), 422, 'validation_error', 'amount_cents');
      expectError(await send('{"kg": 1e400}'), 422, 'validation_error', 'kg');
      expectError(await send({ kg: Number.MAX_SAFE_INTEGER + 2 }), 422, 'validation_error', 'kg');
    }
    expect((await quote({ kg: 1 })).status).toBe(200);
    expect((await quote({ kg: 1_000_000 })).status).toBe(200);
    expect((await quote({ amount_cents: 5_000_000 })).status).toBe(200);
    const max = await buy({ kg: 1_000_000 });
    expect(max.status).toBe(201);
    expect(max.body.kg).toBe(1_000_000);
    const maxPrice = await buy({ amount_cents: 5_000_000 });
    expect(maxPrice.status).toBe(201);
    expect(maxPrice.body.requested).toEqual({ kg: null, amount_cents: 5_000_000 });
  });

  test('a JSON number with a zero fraction (2.0, 2e0) is the whole number 2: JSON cannot tell them apart', async () => {
    const res = await buy('{"kg": 2.0}');
    expect(res.status).toBe(201);
    expect(res.body.kg).toBe(2);
    expect((await quote('{"kg": 2e0}')).status).toBe(200);
    expect((await quote('{"kg": 1000e-3, "reference": "2.5 t"}')).status).toBe(200);
  });

  test('a number not whole as written is refused, though its double rounds to a whole one (0.99999999999999999 reads as 1)', async () => {
    for (const [, send] of bothForms) {
      for (const body of ['{"kg": 0.99999999999999999}', '{"kg": 1000000.00000000001}', '{"kg": 4.9999999999999999}', '{"kg": 5e-1}']) {
        expectError(await send(body), 422, 'validation_error', 'kg');
      }
      expectError(await send('{"amount_cents": 5000000.0000000001}'), 422, 'validation_error', 'amount_cents');
    }
  });

  test('both kg and amount_cents → 422 param amount_cents; neither → 422 param kg', async () => {
    for (const [, send] of bothForms) {
      expectError(await send({ kg: 1, amount_cents: 100 }), 422, 'validation_error', 'amount_cents');
      expectError(await send({}), 422, 'validation_error', 'kg');
      expectError(await send({ reference: 'only a label' }), 422, 'validation_error', 'kg');
      expectError(await send({ kg: null, amount_cents: null }), 422, 'validation_error', 'kg');
      expectError(await send({ kg: null }), 422, 'validation_error', 'kg');
    }
  });

  test('null counts as absent: {kg: null, amount_cents: 100} is a purchase by price', async () => {
    const res = await buy({ kg: null, amount_cents: 100, reference: null });
    expect(res.status).toBe(201);
    expect(res.body.requested).toEqual({ kg: null, amount_cents: 100 });
    expect(res.body.reference).toBeNull();
  });
});

describe('422 validation_error: unknown fields', () => {
  test.each(['foo', 'Kg', 'KG', 'amount', 'livemode', 'currency', 'rate_millicents_per_kg', '__proto__', 'constructor', ''])(
    'unknown body field %j → 422 with that param, on both forms',
    async (field) => {
      for (const [, send] of bothForms) expectError(await send(`{"kg": 1, ${JSON.stringify(field)}: 1}`), 422, 'validation_error', field);
    },
  );

  test('an unknown field is reported before an invalid known one', async () => {
    expectError(await buy({ kg: 1.5, extra: true }), 422, 'validation_error', 'extra');
  });

  test.each([
    ['POST', '/quotes'],
    ['POST', '/offsets'],
  ])('any query parameter on %s %s → 422 with that param (the spec lists 422 there)', async (method, path) => {
    const before = offsetsCount();
    const res = await w.call(method, path, { query: { expand: 'x' }, body: { kg: 1 }, idem: `qp-${++n}` });
    expectError(res, 422, 'validation_error', 'expand');
    expect(offsetsCount()).toBe(before);
  });

  test.each([['/balance'], ['/impact']])('GET %s lists no 422: an unknown query parameter is ignored', async (path) => {
    const plain = await w.call('GET', path);
    const withQuery = await w.call('GET', path, { query: { expand: 'x', limit: ['1', '2'] } });
    expect([withQuery.status, withQuery.body]).toEqual([200, plain.body]);
  });

  test('GET /offsets/{id} lists no 422: an unknown query parameter is ignored', async () => {
    const id = (await buy({ kg: 1 })).body.id;
    const res = await w.call<{ id: string }>('GET', `/offsets/${id}`, { query: { limit: '1' } });
    expect([res.status, res.body.id]).toEqual([200, id]);
  });
});

describe('422 validation_error: reference', () => {
  const emoji = '\u{1F333}'; // 🌳: one character, two UTF-16 code units

  test.each([
    ['an empty string', ''],
    ['201 characters', 'r'.repeat(201)],
    ['201 emoji', emoji.repeat(201)],
    ['a number', 5],
    ['true', true],
    ['an array', ['a']],
    ['an object', { a: 1 }],
  ])('reference as %s → 422 param reference on both forms', async (_name, reference) => {
    for (const [, send] of bothForms) expectError(await send({ kg: 1, reference }), 422, 'validation_error', 'reference');
  });

  test.each([
    ['1 character', 'r'],
    ['200 characters', 'r'.repeat(200)],
    ['200 emoji (400 UTF-16 units)', emoji.repeat(200)],
    ['199 characters and an emoji', `${'r'.repeat(199)}${emoji}`],
    ['whitespace and symbols', '  order #42 / "q3" \n'],
  ])('reference of %s is accepted and returned exactly as sent', async (_name, reference) => {
    const res = await buy({ kg: 1, reference });
    expect(res.status).toBe(201);
    expect(res.body.reference).toBe(reference);
    expect((await w.call<OffsetBody>('GET', `/offsets/${res.body.id}`)).body.reference).toBe(reference);
  });

  test('a 422 changes nothing: no offset, no charge, no ledger entry, no remembered key', async () => {
    const before = {
      offsets: offsetsCount(),
      entries: w.rows('SELECT seq FROM entries').length,
      balance: (await w.sandbox.status()).balances.test,
    };
    expectError(await buy({ kg: 1, reference: '' }, { idem: 'after-422' }), 422, 'validation_error', 'reference');
    expect({
      offsets: offsetsCount(),
      entries: w.rows('SELECT seq FROM entries').length,
      balance: (await w.sandbox.status()).balances.test,
    }).toEqual(before);
    // The key was not used up by the failed request.
    expect((await buy({ kg: 2 }, { idem: 'after-422' })).headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('422 validation_error: list query', () => {
  const list = (query: Record<string, string | string[]>) => w.call('GET', '/offsets', { query });

  test.each(['0', '101', '-1', 'abc', '1.5', '', ' 5', '5 ', '1e1', '0x10', '+5', '10000', '99999999999999999999'])(
    'limit=%j → 422 param limit',
    async (limit) => {
      expectError(await list({ limit }), 422, 'validation_error', 'limit');
    },
  );

  test.each(['1', '100', '010', '0100', '00005', `${'0'.repeat(40)}7`])('limit=%j is accepted', async (limit) => {
    expect((await list({ limit })).status).toBe(200);
  });

  test('a parameter given twice → 422 naming it', async () => {
    expectError(await list({ limit: ['1', '2'] }), 422, 'validation_error', 'limit');
    expectError(await list({ limit: ['5', '5'] }), 422, 'validation_error', 'limit');
    expectError(await list({ reference: ['a', 'b'] }), 422, 'validation_error', 'reference');
    expectError(await list({ starting_after: ['off_a', 'off_b'] }), 422, 'validation_error', 'starting_after');
  });

  test('unknown list parameters → 422 naming them', async () => {
    expectError(await list({ foo: '1' }), 422, 'validation_error', 'foo');
    expectError(await list({ Limit: '1' }), 422, 'validation_error', 'Limit');
    expectError(await list({ ending_before: 'off_x' }), 422, 'validation_error', 'ending_before');
  });

  test('reference filter: 1 to 200 characters', async () => {
    expectError(await list({ reference: '' }), 422, 'validation_error', 'reference');
    expectError(await list({ reference: 'r'.repeat(201) }), 422, 'validation_error', 'reference');
    expect((await list({ reference: 'r'.repeat(200) })).status).toBe(200);
  });

  test('starting_after: empty, over 255 characters or with a NUL → 422; an unknown id → 404 resource_missing param starting_after', async () => {
    expectError(await list({ starting_after: '' }), 422, 'validation_error', 'starting_after');
    expectError(await list({ starting_after: 'o'.repeat(256) }), 422, 'validation_error', 'starting_after');
    // A NUL names no offset, and is refused as `reference` refuses it: 422, not a lookup's 404.
    expect(expectError(await list({ starting_after: 'off_\u0000' }), 422, 'validation_error', 'starting_after').message).toBe(
      'starting_after must not contain the NUL character (U+0000).',
    );
    const err = expectError(await list({ starting_after: 'off_doesnotexist' }), 404, 'resource_missing', 'starting_after');
    expect(err.type).toBe('invalid_request_error');
  });
});
