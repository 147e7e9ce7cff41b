import { afterEach, describe, expect, test } from 'vitest';
import { openWorld, T0, type World } from '../support/world.js';

/**
 * The key the local engine uses when none is configured: the starting key of its role while it
 * is active, else the newest active key of that role; the starting account's time is the clock's.
 */
describe('Sandbox.defaultKey', () => {
  let w: World;
  afterEach(() => w?.close());

  test('is the starting key of each role while it is active', async () => {
    w = await openWorld();
    expect(await w.sandbox.defaultKey('test')).toBe(w.keys.test);
    expect(await w.sandbox.defaultKey('live')).toBe(w.keys.live);
    expect(await w.sandbox.defaultKey('read_only')).toBe(w.keys.readOnly);
  });

  test('after the starting key is revoked: the newest active key of the same mode and access', async () => {
    w = await openWorld();
    const startingId = (await w.sandbox.keys()).find((k) => k.default === 'test')!.id;
    await w.sandbox.revokeKey(startingId);
    expect(await w.sandbox.defaultKey('test')).toBeUndefined();

    const older = await w.sandbox.createKey('test', 'purchase');
    await w.sandbox.createKey('test', 'read_only'); // another role: never chosen for 'test'
    await w.sandbox.createKey('live', 'purchase'); // another mode: never chosen for 'test'
    const newer = await w.sandbox.createKey('test', 'purchase');
    expect(await w.sandbox.defaultKey('test')).toBe(newer.secret);
    await w.sandbox.revokeKey(newer.id);
    expect(await w.sandbox.defaultKey('test')).toBe(older.secret);

    const res = await w.call('GET', '/balance', { key: (await w.sandbox.defaultKey('test'))! });
    expect(res.status).toBe(200);
    expect(await w.sandbox.defaultKey('live')).toBe(w.keys.live);
  });

  test('the account and its starting keys are created at the injected clock', async () => {
    w = await openWorld();
    expect((await w.sandbox.keys()).map((k) => k.created)).toEqual(Array(3).fill(new Date(T0).toISOString()));
  });
});
