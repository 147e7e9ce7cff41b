import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { StoreTarget } from '../../src/store/open.js';
import { freshSchema, postgresAvailable } from '../support/database.js';
import { openSandbox } from '../support/world.js';

/**
 * The developer page's reference filter is a prefix (`ops` finds `ops-flight-2`), the same on
 * every store: `%` and `_` are plain characters, and case counts.
 */

const REFERENCES = ['ops-flight-2', 'ops-hotel', 'OPS-upper', 'dev-ops', '100%_green', '100xxgreen', '50_50', '5050'];

async function prefixes(target: StoreTarget): Promise<Record<string, string[]>> {
  const sandbox = await openSandbox(target, () => Date.UTC(2030, 0, 15));
  try {
    const service = sandbox.service();
    const key = (await sandbox.defaultKey('test'))!;
    for (const [i, reference] of REFERENCES.entries()) {
      const res = await service.handle({
        method: 'POST',
        path: '/api/v1/offsets',
        query: {},
        body: JSON.stringify({ kg: 1, reference }),
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `prefix-${i}` },
      });
      expect(res.status).toBe(201);
    }
    const found: Record<string, string[]> = {};
    for (const prefix of ['ops', 'ops-flight-2', '100%', '100%_', '50_', 'OPS', 'nothing']) {
      found[prefix] = (await sandbox.offsets('test', { reference: prefix })).data.map((o) => o.reference!).sort();
    }
    return found;
  } finally {
    await sandbox.close();
  }
}

const EXPECTED = {
  ops: ['ops-flight-2', 'ops-hotel'],
  'ops-flight-2': ['ops-flight-2'],
  '100%': ['100%_green'],
  '100%_': ['100%_green'],
  '50_': ['50_50'],
  OPS: ['OPS-upper'],
  nothing: [],
};

describe('the reference filter of the developer page matches by prefix', () => {
  test('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'carbon-prefix-'));
    try {
      expect(await prefixes({ kind: 'sqlite', dir: join(dir, 'data') })).toEqual(EXPECTED);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.runIf(postgresAvailable())('PostgreSQL', async () => {
    const schema = freshSchema('prefix');
    try {
      expect(await prefixes({ kind: 'postgres', url: schema.url })).toEqual(EXPECTED);
    } finally {
      await schema.drop();
    }
  });
});
