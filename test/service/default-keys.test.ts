import { afterEach, describe, expect, test } from 'vitest';
import { T0, type World, openWorld } from './helpers.js';

/**
 * The key the local engine uses when none is configured: the starting key of its role while it
 * is active, else the newest active key of that role; the starting account's time is the clock's.
 */
describe('Sandbox.defaultKey', () => {
  let w: World;
  afterEach(() => w?.close());

  test('is the starting key of each role while it is active', () => {
    w = openWorld();
    expect(w.sandbox.defaultKey('test')).toBe(w.keys.test);
    expect(w.sandbox.defaultKey('live')).toBe(w.keys.live);
    expect(w.sandbox.defaultKey('read_only')).toBe(w.keys.readOnly);
  });

  test('after the starting key is revoked: the newest active key of the same mode and access', () => {
    w = openWorld();
    const startingId = w.sandbox.keys().find((k) => k.default === 'test')!.id;
    w.sandbox.revokeKey(startingId);
    expect(w.sandbox.defaultKey('test')).toBeUndefined();

    const older = w.sandbox.createKey('test', 'purchase');
    w.sandbox.createKey('test', 'read_only'); // another role: never chosen for 'test'
    w.sandbox.createKey('live', 'purchase'); // another mode: never chosen for 'test'
    const newer = w.sandbox.createKey('test', 'purchase');
    expect(w.sandbox.defaultKey('test')).toBe(newer.secret);
    w.sandbox.revokeKey(newer.id);
    expect(w.sandbox.defaultKey('test')).toBe(older.secret);

    const res = w.call('GET', '/balance', { key: w.sandbox.defaultKey('test')! });
    expect(res.status).toBe(200);
    expect(w.sandbox.defaultKey('live')).toBe(w.keys.live);
  });

  test('the account and its starting keys are created at the injected clock', () => {
    w = openWorld();
    expect(w.sandbox.keys().map((k) => k.created)).toEqual(Array(3).fill(new Date(T0).toISOString()));
  });
});
