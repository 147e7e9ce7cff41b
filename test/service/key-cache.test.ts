import { afterEach, beforeEach, expect, test } from 'vitest';
import { Sandbox } from '../../src/service/sandbox.js';
import { type World, expectError, openWorld } from './helpers.js';

// The service remembers the digest of an Authorization header it has seen name a key, to skip
// hashing it again; whether the key is still good must be decided afresh on every request.

let w: World;
beforeEach(() => {
  w = openWorld();
});
afterEach(() => w.close());

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a key used, then revoked through another connection, is refused on the next request', async () => {
  const extra = w.sandbox.createKey('test', 'purchase');
  for (let i = 0; i < 3; i++) expect(w.call('GET', '/balance', { key: extra.secret }).status).toBe(200);
  const other = Sandbox.open(w.dir, () => w.clock.now);
  try {
    other.revokeKey(extra.id);
  } finally {
    other.close();
  }
  await nextTurn();
  expectError(w.call('GET', '/balance', { key: extra.secret }), 401, 'api_key_revoked');
  expect(w.call('GET', '/balance').status).toBe(200);
});

test('a key used, then revoked or wiped through this connection, is refused at once', () => {
  const extra = w.sandbox.createKey('test', 'purchase');
  expect(w.call('GET', '/balance', { key: extra.secret }).status).toBe(200);
  w.sandbox.revokeKey(extra.id);
  expectError(w.call('GET', '/balance', { key: extra.secret }), 401, 'api_key_revoked');

  const old = w.keys.test;
  expect(w.call('GET', '/balance', { key: old }).status).toBe(200);
  w.sandbox.reset();
  expectError(w.call('GET', '/balance', { key: old }), 401, 'api_key_invalid');
  expect(w.call('GET', '/balance', { key: w.sandbox.defaultKey('test')! }).status).toBe(200);
});

test('the same key in differently written headers, and many keys, all authenticate alike', () => {
  const key = w.keys.test;
  for (const header of [`Bearer ${key}`, `bearer ${key}`, `Bearer   ${key}  `, `BEARER ${key}`]) {
    const res = w.call<{ livemode: boolean }>('GET', '/balance', { key: null, headers: { authorization: header } });
    expect(res.status, header).toBe(200);
  }
  const many = Array.from({ length: 100 }, () => w.sandbox.createKey('live', 'read_only'));
  for (let round = 0; round < 2; round++) {
    for (const k of many) expect(w.call<{ livemode: boolean }>('GET', '/balance', { key: k.secret }).body.livemode).toBe(true);
  }
  expectError(w.call('POST', '/offsets', { key: many[0]!.secret, idem: 'ro', body: { kg: 1 } }), 403, 'insufficient_permissions');
  expectError(w.call('GET', '/balance', { key: `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}` }), 401, 'api_key_invalid');
});
