import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach } from 'vitest';

/**
 * The PostgreSQL the tests use: CARBON_TEST_DATABASE_URL (`.ci/run` starts one and sets it).
 * Each user of it gets a schema of its own, dropped afterwards, so suites never see each other.
 * In CI (CI=true) a missing PostgreSQL is a failure, never a skip.
 */
export const TEST_DATABASE_URL = process.env.CARBON_TEST_DATABASE_URL || undefined;

if (TEST_DATABASE_URL === undefined && process.env.CI === 'true') {
  throw new Error('CARBON_TEST_DATABASE_URL is not set: in CI the PostgreSQL suites must run (.ci/run starts PostgreSQL and sets it).');
}

let announced = false;
/** True when the PostgreSQL suites can run; otherwise says once, in one line, why they are skipped. */
export function postgresAvailable(): boolean {
  if (TEST_DATABASE_URL === undefined && !announced) {
    announced = true;
    process.stderr.write('PostgreSQL suites skipped: set CARBON_TEST_DATABASE_URL=postgres://… to run them (CI always does).\n');
  }
  return TEST_DATABASE_URL !== undefined;
}

export interface TestSchema {
  /** The URL with ?schema=<name>. */
  url: string;
  schema: string;
  drop(): Promise<void>;
}

/** A fresh, empty schema name on the test database (created by carbon on first use). */
export function freshSchema(prefix = 't'): TestSchema {
  if (TEST_DATABASE_URL === undefined) throw new Error('no test database');
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('schema', schema);
  return {
    url: url.toString(),
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * What a test of the store in this process undoes after it, newest first (its store closed, its
 * schema dropped, its sessions ended), and the CARBON_PG_ deadlines it set in the environment,
 * which a store reads as it opens, put back.
 */
export function cleanedAfterEach(): Array<() => Promise<unknown>> {
  const cleanup: Array<() => Promise<unknown>> = [];
  const saved = { ...process.env };
  afterEach(async () => {
    for (const done of cleanup.splice(0).reverse()) await done();
    for (const name of Object.keys(process.env)) if (name.startsWith('CARBON_PG_')) delete process.env[name];
    Object.assign(process.env, saved);
  });
  return cleanup;
}
