import { describe, expect, it } from 'vitest';
import type { ApiErrorBody, ApiResponse } from '../../src/api/types.js';
import { forThisProject, useEngine } from '../support/engines.js';
import { engineMatrix } from '../support/matrix.js';
import { rawExchange } from '../support/raw-http.js';

/**
 * Where the model once differed from the specification (issue: fidelity), on every engine and
 * store: any text as an Idempotency-Key, strings returned exactly or refused, what unknown query
 * parameters do, and every kind of wrong JSON value.
 */

const ENGINES = engineMatrix();

const errorOf = (r: ApiResponse) => (r.body as { error: ApiErrorBody }).error;

describe.each(ENGINES.filter((e) => forThisProject(e.kind)))('fidelity: $kind, $store', ({ kind, store }) => {
  const e = useEngine(kind, store);

  const buy = (body: unknown, idem: string) =>
    e.raw<{ id: string; reference: string | null }>({ method: 'POST', path: '/offsets', body, headers: { 'idempotency-key': idem } });

  it('an Idempotency-Key beyond ASCII buys, replays and conflicts like any other', async () => {
    for (const key of ['clé-1', 'ключ 🔑 東京', '🔑'.repeat(255)]) {
      const first = await buy({ kg: 3 }, key);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const again = await buy({ kg: 3 }, key);
      expect([again.status, again.headers['idempotent-replayed'], again.body.id]).toEqual([201, 'true', first.body.id]);
      const other = await buy({ kg: 4 }, key);
      expect([other.status, errorOf(other).code]).toEqual([409, 'idempotency_key_reused']);
    }
    // Two keys that differ only beyond ASCII are two purchases.
    const a = await buy({ kg: 1 }, 'café');
    const b = await buy({ kg: 1 }, 'cafe\u0301');
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('an Idempotency-Key that a header cannot carry intact is 400 and buys nothing', async () => {
    // Other control characters cannot even be put in an HTTP request: the HTTP client refuses
    // them before sending (below); the in-process engine answers 400.
    for (const key of ['k\tk', '🔑'.repeat(256), ...(kind === 'local' ? ['k\u0001k', 'k\u0000'] : [])]) {
      const r = await buy({ kg: 1 }, key);
      expect([r.status, errorOf(r).code]).toEqual([400, 'idempotency_key_invalid']);
    }
    if (kind === 'http') {
      await expect(e.client(e.keys().test).buy({ kg: 1 }, { idempotencyKey: 'k\u0001k' })).rejects.toThrow(
        /cannot be sent: it holds a control character/,
      );
    }
    // White space at either end: HTTP strips it, so sent it would buy under another key (` k1` as `k1`).
    for (const key of [' k1', 'k1 ', 'k1\t']) {
      if (kind === 'http') {
        await expect(e.client(e.keys().test).buy({ kg: 1 }, { idempotencyKey: key })).rejects.toThrow(/white space at either end/);
      } else {
        const r = await buy({ kg: 1 }, key);
        expect([r.status, errorOf(r).code]).toEqual([400, 'idempotency_key_invalid']);
      }
    }
    expect((await e.raw<{ data: unknown[] }>({ method: 'GET', path: '/offsets' })).body.data).toEqual([]);
  });

  it('a body is read as JSON whatever its Content-Type says, a leading BOM skipped (docs/service-model.md)', async () => {
    // The BOM is bytes: over HTTP only (the in-process engine is handed text, and JSON has no BOM).
    for (const [body, type] of [
      ['{"kg":2}', 'text/plain'],
      ['{"kg":2}', 'application/x-www-form-urlencoded'],
      ...(kind === 'http' ? [['\uFEFF{"kg":2}', 'application/json']] : []),
    ]) {
      const r = await e.raw<{ kg: number }>({ method: 'POST', path: '/quotes', body, headers: { 'content-type': type! } });
      expect([type, r.status, r.body.kg]).toEqual([type, 200, 2]);
    }
    const form = await e.raw({
      method: 'POST',
      path: '/quotes',
      body: 'kg=2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([form.status, errorOf(form).code]).toEqual([400, 'invalid_json']);
  });

  it('a reference is returned exactly as sent, or refused naming it: an unpaired surrogate is 422', async () => {
    const exact = '😀 Zürich → 東京 \u202e \u0007 "quoted" \\ back';
    const ok = await buy({ kg: 1, reference: exact }, 'ref-ok');
    expect(ok.body.reference).toBe(exact);
    for (const raw of ['{"kg":1,"reference":"a\\ud800b"}', '{"kg":1,"reference":"\\udc00"}', '{"kg":1,"reference":"a\\u0000b"}']) {
      const r = await buy(raw, `ref-${raw.length}-${raw.charCodeAt(28)}`);
      expect([r.status, errorOf(r).code, errorOf(r).param]).toEqual([422, 'validation_error', 'reference']);
    }
    // The list's reference filter too.
    const listed = await e.raw({ method: 'GET', path: '/offsets', query: { reference: exact } });
    expect((listed.body as { data: Array<{ id: string }> }).data.map((o) => o.id)).toEqual([ok.body.id]);
  });

  it.each([
    ['null', 'null', 'kg'],
    ['1.5', '1.5', 'kg'],
    ['"5"', '"5"', 'kg'],
    ['true', 'true', 'kg'],
    ['[]', '[]', 'kg'],
    ['{}', '{}', 'kg'],
    ['1e400', '1e400', 'kg'],
    ['-0', '-0', 'kg'],
    ['0', '0', 'kg'],
    ['1000001', '1000001', 'kg'],
  ])('"kg": %s is 422 validation_error naming kg, and buys nothing', async (_name, value, param) => {
    const r = await buy(`{"kg":${value}}`, `v-${value}`);
    expect([r.status, errorOf(r).code, errorOf(r).param]).toEqual([422, 'validation_error', param]);
    const q = await e.raw({ method: 'POST', path: '/quotes', body: `{"kg":${value}}` });
    expect([q.status, errorOf(q).param]).toEqual([422, param]);
  });

  it.each([
    ['1.5', '1.5'],
    ['"500"', '"500"'],
    ['false', 'false'],
    ['5000001', '5000001'],
  ])('"amount_cents": %s is 422 naming amount_cents', async (_name, value) => {
    const r = await buy(`{"amount_cents":${value}}`, `a-${value}`);
    expect([r.status, errorOf(r).code, errorOf(r).param]).toEqual([422, 'validation_error', 'amount_cents']);
  });

  it('5.0 is the whole number 5 (JSON has one number type); null beside the other amount is absent', async () => {
    const five = await buy('{"kg":5.0}', 'five');
    expect([five.status, (five.body as unknown as { kg: number }).kg]).toEqual([201, 5]);
    const byPrice = await buy('{"kg":null,"amount_cents":400}', 'null-kg');
    expect([byPrice.status, (byPrice.body as unknown as { kg: number }).kg]).toEqual([201, 100]);
  });

  it.each(['text/plain', 'application/json', 'application/x-www-form-urlencoded', ''])(
    'a body that is not JSON is 400 invalid_json, whatever its Content-Type (%s)',
    async (type) => {
      const r = await e.raw({
        method: 'POST',
        path: '/offsets',
        body: 'kg=5',
        headers: { 'idempotency-key': `nj-${type}`, 'content-type': type },
      });
      expect([r.status, errorOf(r).code]).toEqual([400, 'invalid_json']);
    },
  );

  it('unknown query parameters: ignored where the spec lists no 422, refused by name where it does', async () => {
    for (const path of ['/balance', '/impact']) expect((await e.raw({ method: 'GET', path, query: { expand: 'all' } })).status).toBe(200);
    const list = await e.raw({ method: 'GET', path: '/offsets', query: { expand: 'all' } });
    expect([list.status, errorOf(list).param]).toEqual([422, 'expand']);
    const quote = await e.raw({ method: 'POST', path: '/quotes', body: { kg: 1 }, query: { expand: 'all' } });
    expect([quote.status, errorOf(quote).param]).toEqual([422, 'expand']);
  });

  if (kind === 'http') {
    it('an Idempotency-Key whose bytes are not UTF-8 is 400 idempotency_key_invalid', async () => {
      const key = e.keys().test;
      // Bytes on the wire: 6b ff fe 6b is no UTF-8 (a client library would encode text as UTF-8).
      const head = Buffer.from(
        `POST /api/v1/offsets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 8\r\nConnection: close\r\nIdempotency-Key: `,
        'latin1',
      );
      const request = Buffer.concat([head, Buffer.from([0x6b, 0xff, 0xfe, 0x6b]), Buffer.from('\r\n\r\n{"kg":1}', 'latin1')]);
      const r = await rawExchange(Number(new URL(e.origin).port), request);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('idempotency_key_invalid');
      // The same key sent as UTF-8 text is an ordinary key.
      expect((await buy({ kg: 1 }, 'k\u00ff\u00fek')).status).toBe(201);
    });
  }
});
