import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { refusalWithoutLedger } from '../../src/service/request-checks.js';
import { openWorld, type World } from '../support/world.js';

/**
 * The local engine answers a malformed request before its ledger exists with
 * `refusalWithoutLedger`: what a fresh sandbox's service answers it, to its own key, the same
 * status, headers and body (but the Request-Id), so a first command's refusal reads as every later one's.
 */

let w: World;
beforeAll(async () => {
  w = await openWorld();
});
afterAll(() => w.close());

function request(
  method: string,
  path: string,
  extra: { body?: string; query?: Record<string, string>; headers?: Record<string, string> } = {},
): ApiRequest {
  return {
    method,
    path: `/api/v1${path}`,
    query: extra.query ?? {},
    headers: { authorization: `Bearer ${w.keys.test}`, 'content-type': 'application/json', ...extra.headers },
    body: extra.body ?? '',
  };
}

const idem = { 'idempotency-key': 'k-1' };
const withoutId = ({ headers, ...rest }: ApiResponse) => ({ ...rest, headers: { ...headers, 'request-id': undefined } });

describe('refusalWithoutLedger answers as the service does', () => {
  test.each([
    ['kg below the minimum', () => request('POST', '/offsets', { body: '{"kg":-5}', headers: idem })],
    ['kg and amount_cents', () => request('POST', '/offsets', { body: '{"kg":5,"amount_cents":5}', headers: idem })],
    ['no Idempotency-Key, and a bad body (the header first)', () => request('POST', '/offsets', { body: '{"kg":0}' })],
    ['a padded Idempotency-Key', () => request('POST', '/offsets', { body: '{"kg":5}', headers: { 'idempotency-key': ' k' } })],
    [
      'a query on a purchase, and a bad body (the query first)',
      () => request('POST', '/offsets', { body: '{"kg":0}', query: { x: '1' }, headers: idem }),
    ],
    ['a body that is no JSON', () => request('POST', '/quotes', { body: '{"kg":' })],
    ['an unknown field', () => request('POST', '/quotes', { body: '{"kg":5,"colour":"green"}' })],
    ['amount_cents above the maximum', () => request('POST', '/quotes', { body: '{"amount_cents":99999999}' })],
    ['an empty reference in a list', () => request('GET', '/offsets', { query: { reference: '' } })],
    ['a list limit of 0', () => request('GET', '/offsets', { query: { limit: '0' } })],
    ['a path the API does not have', () => request('GET', '/nowhere')],
    ['a method the path does not take', () => request('DELETE', '/offsets')],
  ])('%s', async (_name, make) => {
    const refused = refusalWithoutLedger(make());
    expect(refused).toBeDefined();
    expect(refused!.headers['request-id']).toMatch(/^req_/);
    expect(withoutId(refused!)).toEqual(withoutId(await w.service.handle(make())));
  });

  test.each([
    ['a well-formed purchase', () => request('POST', '/offsets', { body: '{"kg":5}', headers: idem })],
    ['a well-formed quote', () => request('POST', '/quotes', { body: '{"amount_cents":500}' })],
    ['a list', () => request('GET', '/offsets', { query: { limit: '5' } })],
    ['an offset looked up, whatever its id', () => request('GET', '/offsets/%ZZ')],
    ['the balance', () => request('GET', '/balance')],
  ])('%s needs the ledger: no answer without it', (_name, make) => {
    expect(refusalWithoutLedger(make())).toBeUndefined();
  });
});
