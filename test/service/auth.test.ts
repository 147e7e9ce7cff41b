import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { expectError, openWorld, type World } from '../support/world.js';

let w: World;
beforeEach(async () => {
  w = await openWorld();
});
afterEach(() => w.close());

/** All six operations, each with a request that succeeds for a purchase key. */
async function operations(world: World): Promise<{ name: string; run: (key: string | null) => ReturnType<World['call']> }[]> {
  const existing = (await world.buy({ kg: 1 })).body.id;
  let n = 0;
  return [
    { name: 'POST /offsets', run: (key) => world.call('POST', '/offsets', { key, body: { kg: 1 }, idem: `auth-${++n}` }) },
    { name: 'POST /quotes', run: (key) => world.call('POST', '/quotes', { key, body: { kg: 1 } }) },
    { name: 'GET /offsets', run: (key) => world.call('GET', '/offsets', { key }) },
    { name: 'GET /offsets/{id}', run: (key) => world.call('GET', `/offsets/${existing}`, { key }) },
    { name: 'GET /balance', run: (key) => world.call('GET', '/balance', { key }) },
    { name: 'GET /impact', run: (key) => world.call('GET', '/impact', { key }) },
  ];
}

describe('401: missing, malformed, unknown or revoked key', () => {
  test("a fresh account has a test key, a live key and a read-only test key in the ck_ format, each saying it is the sandbox's", async () => {
    // The spec's shape (the prefix, the mode, 32 letters and digits), the secret starting `sandbox`: no real key's look-alike.
    expect(w.keys.test).toMatch(/^ck_test_sandbox[A-Za-z0-9]{25}$/);
    expect(w.keys.live).toMatch(/^ck_live_sandbox[A-Za-z0-9]{25}$/);
    expect(w.keys.readOnly).toMatch(/^ck_test_sandbox[A-Za-z0-9]{25}$/);
    expect(new Set([w.keys.test, w.keys.live, w.keys.readOnly]).size).toBe(3);
    const keys = await w.sandbox.keys();
    expect(keys.map((k) => [k.mode, k.permission, k.default])).toEqual([
      ['test', 'purchase', 'test'],
      ['live', 'purchase', 'live'],
      ['test', 'read_only', 'read_only'],
    ]);
    expect(keys[0]!.masked).toBe(`ck_test_…${w.keys.test.slice(-4)}`);
  });

  test('the ledger holds only SHA-256 digests, never a usable key', () => {
    const rows = w.rows<{ hash: Buffer; last4: string }>('SELECT hash, last4 FROM api_keys');
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r.hash.length).toBe(32);
    const dump = JSON.stringify(w.rows('SELECT * FROM api_keys'));
    for (const key of Object.values(w.keys)) expect(dump).not.toContain(key.slice(8));
  });

  test('no Authorization header, or a blank one → 401 api_key_missing on every operation', async () => {
    for (const op of await operations(w)) {
      const err = expectError(await op.run(null), 401, 'api_key_missing');
      expect(err.type, op.name).toBe('authentication_error');
    }
    expectError(await w.call('GET', '/balance', { key: null, headers: { authorization: '   ' } }), 401, 'api_key_missing');
    expectError(await w.call('GET', '/balance', { key: null, headers: { authorization: '' } }), 401, 'api_key_missing');
  });

  test.each([
    ['no scheme', (k: string) => k],
    ['Basic scheme', (k: string) => `Basic ${k}`],
    ['Bearer with nothing after it', () => 'Bearer'],
    ['Bearer and a space only', () => 'Bearer '],
    ['two tokens', (k: string) => `Bearer ${k} ${k}`],
    ['a wrong prefix', (k: string) => `Bearer sk${k.slice(2)}`],
    ['a wrong mode', (k: string) => `Bearer ${k.replace('_test_', '_prod_')}`],
    ['one character short', (k: string) => `Bearer ${k.slice(0, -1)}`],
    ['one character long', (k: string) => `Bearer ${k}x`],
    ['a non-base62 character', (k: string) => `Bearer ${k.slice(0, -1)}-`],
    ['upper-case prefix', (k: string) => `Bearer ${k.toUpperCase()}`],
  ])('a malformed key (%s) → 401 api_key_invalid on every operation', async (_name, header) => {
    for (const op of await operations(w)) {
      const authorization = header(w.keys.test);
      const res = await w.call(op.name.split(' ')[0]!, op.name.split(' ')[1]!.replace('{id}', 'off_x'), {
        key: null,
        headers: { authorization },
        body: op.name.startsWith('POST') ? { kg: 1 } : undefined,
        idem: 'k',
      });
      expectError(res, 401, 'api_key_invalid');
    }
  });

  test('the scheme is case-insensitive and extra spaces around the key are tolerated', async () => {
    for (const authorization of [`bearer ${w.keys.test}`, `BEARER ${w.keys.test}`, `Bearer   ${w.keys.test}`, `Bearer ${w.keys.test}  `]) {
      expect((await w.call('GET', '/balance', { key: null, headers: { authorization } })).status).toBe(200);
    }
  });

  test('a well-formed key the account never issued → 401 api_key_invalid, in either mode', async () => {
    const unknownTest = `ck_test_${'A'.repeat(32)}`;
    const unknownLive = `ck_live_${'b'.repeat(32)}`;
    for (const op of await operations(w)) {
      expectError(await op.run(unknownTest), 401, 'api_key_invalid');
      expectError(await op.run(unknownLive), 401, 'api_key_invalid');
    }
  });

  test('a revoked key → 401 api_key_revoked on every operation; other keys keep working', async () => {
    const extra = await w.sandbox.createKey('test', 'purchase');
    expect(extra.secret).toMatch(/^ck_test_sandbox[A-Za-z0-9]{25}$/);
    expect((await w.call('GET', '/balance', { key: extra.secret })).status).toBe(200);
    await w.sandbox.revokeKey(extra.id);
    for (const op of await operations(w)) {
      const err = expectError(await op.run(extra.secret), 401, 'api_key_revoked');
      expect(err.type).toBe('authentication_error');
    }
    expect((await w.call('GET', '/balance')).status).toBe(200);
    expect((await w.sandbox.keys()).find((k) => k.id === extra.id)?.revoked).toMatch(/Z$/);
  });

  test('revoking the default live key revokes it; revoking twice or an unknown key is refused', async () => {
    const live = (await w.sandbox.keys()).find((k) => k.default === 'live')!;
    await w.sandbox.revokeKey(live.id);
    expectError(await w.call('GET', '/balance', { key: w.keys.live }), 401, 'api_key_revoked');
    await expect(w.sandbox.revokeKey(live.id)).rejects.toThrow(/already revoked/);
    await expect(w.sandbox.revokeKey('key_nope')).rejects.toThrow(/No such key/);
  });

  test('authentication comes first: a bad body or a missing Idempotency-Key without a key is still 401', async () => {
    expectError(await w.call('POST', '/offsets', { key: null, body: '{not json' }), 401, 'api_key_missing');
    expectError(await w.call('POST', '/offsets', { key: `ck_test_${'Z'.repeat(32)}`, body: { kg: 0 } }), 401, 'api_key_invalid');
  });

  test('the 401 message never echoes the key that was sent', async () => {
    const sent = `ck_test_${'Q'.repeat(32)}`;
    const err = expectError(await w.call('GET', '/balance', { key: sent }), 401, 'api_key_invalid');
    expect(err.message).not.toContain('QQQQ');
  });

  test('a 401 changes nothing', async () => {
    await w.call('POST', '/offsets', { key: `ck_test_${'Z'.repeat(32)}`, body: { kg: 5 }, idem: 'x' });
    expect(w.rows('SELECT * FROM offsets')).toHaveLength(0);
    expect((await w.sandbox.status()).balances.test).toBe(100_000);
  });
});

describe('403 insufficient_permissions: read-only keys may read and quote but not buy', () => {
  test('a read-only key cannot buy, in test or live mode, and nothing is charged', async () => {
    const liveRo = (await w.sandbox.createKey('live', 'read_only')).secret;
    await w.sandbox.topUp('live', 25_000);
    for (const key of [w.keys.readOnly, liveRo]) {
      const err = expectError(await w.call('POST', '/offsets', { key, body: { kg: 10 }, idem: 'ro' }), 403, 'insufficient_permissions');
      expect(err.type).toBe('permission_error');
    }
    expect(w.rows('SELECT * FROM offsets')).toHaveLength(0);
    expect((await w.sandbox.status()).balances).toEqual({ test: 100_000, live: 25_000 });
  });

  test('the permission check comes before the Idempotency-Key and body checks', async () => {
    expectError(await w.call('POST', '/offsets', { key: w.keys.readOnly, body: '{bad' }), 403, 'insufficient_permissions');
  });

  test('a read-only key may quote, list, get, and read the balance and impact of its mode', async () => {
    const id = (await w.buy({ kg: 7 })).body.id;
    const ro = w.keys.readOnly;
    expect((await w.call('POST', '/quotes', { key: ro, body: { kg: 7 } })).status).toBe(200);
    expect((await w.call<{ data: { id: string }[] }>('GET', '/offsets', { key: ro })).body.data.map((o) => o.id)).toEqual([id]);
    expect((await w.call('GET', `/offsets/${id}`, { key: ro })).status).toBe(200);
    expect((await w.call<{ available_cents: number }>('GET', '/balance', { key: ro })).body.available_cents).toBe(100_000 - 28);
    expect((await w.call<{ offsets: number }>('GET', '/impact', { key: ro })).body.offsets).toBe(1);
  });
});

describe('403 api_access_inactive: a suspended or unapproved account, on every operation', () => {
  test.each(['suspended', 'unapproved'] as const)('%s account', async (status) => {
    const ops = await operations(w);
    const before = w.rows('SELECT seq FROM offsets').length;
    await w.sandbox.setStatus(status);
    for (const key of [w.keys.test, w.keys.live, w.keys.readOnly]) {
      for (const op of ops) {
        const err = expectError(await op.run(key), 403, 'api_access_inactive');
        expect(err.type, `${op.name}`).toBe('permission_error');
        expect(err.message).toContain(status === 'suspended' ? 'suspended' : 'not yet approved');
      }
    }
    expect(w.rows('SELECT seq FROM offsets').length).toBe(before);
    await w.sandbox.setStatus('active');
    for (const op of ops) expect((await op.run(w.keys.test)).status, op.name).toBeLessThan(300);
  });

  test('a bad key on an inactive account is still 401 (who you are is checked before the account)', async () => {
    await w.sandbox.setStatus('suspended');
    expectError(await w.call('GET', '/balance', { key: null }), 401, 'api_key_missing');
    expectError(await w.call('GET', '/balance', { key: `ck_live_${'x'.repeat(32)}` }), 401, 'api_key_invalid');
  });
});

describe('mode of the key', () => {
  test('livemode follows the key on every resource', async () => {
    await w.sandbox.topUp('live', 25_000);
    for (const [key, live] of [
      [w.keys.test, false],
      [w.keys.live, true],
    ] as const) {
      const offset = (await w.buy({ kg: 1 }, { key })).body;
      expect(offset.livemode).toBe(live);
      expect((await w.call<{ livemode: boolean }>('POST', '/quotes', { key, body: { kg: 1 } })).body.livemode).toBe(live);
      expect((await w.call<{ livemode: boolean }>('GET', '/balance', { key })).body.livemode).toBe(live);
      expect((await w.call<{ livemode: boolean }>('GET', '/impact', { key })).body.livemode).toBe(live);
      expect((await w.call<{ livemode: boolean }>('GET', `/offsets/${offset.id}`, { key })).body.livemode).toBe(live);
    }
  });
});
