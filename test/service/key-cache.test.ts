import { afterEach, beforeEach, expect, test } from 'vitest';
import { expectError, openSandbox, openWorld, type World } from '../support/world.js';

// The service remembers the digest of an Authorization header it has seen name a key, to skip
// hashing it again; whether the key is still good must be decided afresh on every request.

let w: World;
beforeEach(async () => {
  w = await openWorld();
});
afterEach(() => w.close());

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a key used, then revoked through another connection, is refused on the next request', async () => {
  const extra = await w.sandbox.createKey('test', 'purchase');
  for (let i = 0; i < 3; i++) expect((await w.call('GET', '/balance', { key: extra.secret })).status).toBe(200);
  const other = await openSandbox(w.dir, () => w.clock.now);
  try {
    await other.revokeKey(extra.id);
  } finally {
    await other.close();
  }
  await nextTurn();
  expectError(await w.call('GET', '/balance', { key: extra.secret }), 401, 'api_key_revoked');
  expect((await w.call('GET', '/balance')).status).toBe(200);
});

test('a key used, then revoked or wiped through this connection, is refused at once', async () => {
  const extra = await w.sandbox.createKey('test', 'purchase');
  expect((await w.call('GET', '/balance', { key: extra.secret })).status).toBe(200);
  await w.sandbox.revokeKey(extra.id);
  expectError(await w.call('GET', '/balance', { key: extra.secret }), 401, 'api_key_revoked');

  const old = w.keys.test;
  expect((await w.call('GET', '/balance', { key: old })).status).toBe(200);
  await w.sandbox.reset();
  expectError(await w.call('GET', '/balance', { key: old }), 401, 'api_key_invalid');
  expect((await w.call('GET', '/balance', { key: (await w.sandbox.defaultKey('test'))! })).status).toBe(200);
});

test('the same key in differently written headers, and many keys, all authenticate alike', async () => {
  const key = w.keys.test;
  for (const header of [`Bearer ${key}`, `bearer ${key}`, `Bearer   ${key}  `, `BEARER ${key}`]) {
    const res = await w.call<{ livemode: boolean }>('GET', '/balance', { key: null, headers: { authorization: header } });
    expect(res.status, header).toBe(200);
  }
  const many = [];
  for (let i = 0; i < 100; i++) many.push(await w.sandbox.createKey('live', 'read_only'));
  for (let round = 0; round < 2; round++) {
    for (const k of many) expect((await w.call<{ livemode: boolean }>('GET', '/balance', { key: k.secret })).body.livemode).toBe(true);
  }
  expectError(await w.call('POST', '/offsets', { key: many[0]!.secret, idem: 'ro', body: { kg: 1 } }), 403, 'insufficient_permissions');
  expectError(await w.call('GET', '/balance', { key: `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}` }), 401, 'api_key_invalid');
});
