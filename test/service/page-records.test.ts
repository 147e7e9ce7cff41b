import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/open.js';
import { TEST_DATABASE_URL } from '../support/database.js';
import { type StoreKind, storeMatrix, testLedger } from '../support/matrix.js';
import { openSqlite, scalar } from '../support/sqlite.js';
import { tempDir } from '../support/world.js';

/**
 * The developer page's records in the store's named values (src/service/page-access.ts): a login
 * token is recorded until it is used, a session until it is signed out of. Before, a token never
 * used, one a reset ended, a session that ran out or that a reset ended stayed in `meta` forever,
 * one row each (a `carbon serve` start makes a token, so does each `carbon sandbox login`). Now the
 * expired ones go when a token or a session is made, and all of them at a reset or a snapshot's load.
 */

const HOUR = 60 * 60 * 1000;
const T0 = Date.UTC(2030, 0, 1);

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done();
  cleanup = [];
});

/** An engine on a fresh ledger of `store`, and how many of its `meta` rows each of the page's kinds of record has. */
async function opened(store: StoreKind): Promise<{ engine: Engine; count: () => Promise<Record<string, number>> }> {
  const ledger = testLedger(store, 'pagerec');
  const dir = tempDir('carbon-pagerec-');
  const engine = await openEngine(ledger.target(dir));
  cleanup.push(
    async () => rmSync(dir, { recursive: true, force: true }),
    () => ledger.drop(),
    () => engine.close(),
  );
  const kinds = ['token', 'session', 'flash'];
  const sql = (p: string) => `SELECT count(*) AS n FROM meta WHERE substr(name, 1, ${p.length}) = '${p}'`;
  const count = async () => {
    const counts: Record<string, number> = {};
    if (store === 'sqlite') {
      const db = openSqlite(join(dir, 'ledger.db'), { readonly: true });
      try {
        for (const kind of kinds) counts[kind] = Number(scalar(db, sql(`developer_page.${kind}.`)));
      } finally {
        db.close();
      }
      return counts;
    }
    const schema = new URL(ledger.database!).searchParams.get('schema')!;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`SET search_path = "${schema}"`);
      for (const kind of kinds) counts[kind] = Number((await client.query(sql(`developer_page.${kind}.`))).rows[0].n);
    } finally {
      await client.end();
    }
    return counts;
  };
  return { engine, count };
}

describe.each(storeMatrix())("the developer page's records on the $label store", ({ kind: store }) => {
  test('login tokens: a used one goes at once, an expired one when a token is made or used; one still good stays, and works', async () => {
    const { engine, count } = await opened(store);
    const pages = engine.sandbox.pages;
    await pages.recordUrl('http://127.0.0.1:4011');
    const [used, , , stillGood] = [
      await pages.newLoginToken(T0),
      await pages.newLoginToken(T0),
      await pages.newLoginToken(T0),
      await pages.newLoginToken(T0 + 2 * HOUR),
    ];
    expect(await count()).toMatchObject({ token: 4 });
    expect(await pages.useLoginToken(used, T0 + 1)).toBe(true);
    expect(await count()).toMatchObject({ token: 3 });
    // A day later the two never used have run out: the next token made takes them away. Before: 4 rows.
    const next = await pages.newLoginToken(T0 + 25 * HOUR);
    expect(await count()).toMatchObject({ token: 2 });
    expect(await pages.useLoginToken(stillGood, T0 + 25 * HOUR)).toBe(true);
    expect(await count()).toMatchObject({ token: 1 });
    // Using a token takes the expired ones too.
    const late = await pages.newLoginToken(T0 + 30 * HOUR);
    expect(await pages.useLoginToken(late, T0 + 49 * HOUR + 1)).toBe(true);
    expect(await count()).toMatchObject({ token: 0 });
    expect(await pages.useLoginToken(next, T0 + 49 * HOUR + 1)).toBe(false);
    // The page's other named values are not the tokens'.
    expect(await pages.recordedUrl()).toBe('http://127.0.0.1:4011');
  });

  test('sessions and what an action left for their page: the expired ones go when a session is made; one still current stays', async () => {
    const { engine, count } = await opened(store);
    const pages = engine.sandbox.pages;
    const first = (await pages.readSession(await pages.newSession(T0), T0))!;
    await pages.newSession(T0);
    const later = await pages.newSession(T0 + 6 * HOUR);
    await pages.putFlash(first, '{"key":"key_x"}', T0 + 6 * HOUR);
    expect(await count()).toMatchObject({ session: 3, flash: 1 });
    // 13 hours on, the first two sessions (12 hours each) and the flash (5 minutes) have run out. Before: 4 sessions, 1 flash.
    await pages.newSession(T0 + 13 * HOUR);
    expect(await count()).toMatchObject({ session: 2, flash: 0 });
    expect(await pages.readSession(later, T0 + 13 * HOUR)).not.toBeNull();
  });

  test('a session opens nothing once its 12 hours are over, nor with its time changed in the cookie', async () => {
    const { engine } = await opened(store);
    const pages = engine.sandbox.pages;
    const cookie = await pages.newSession(T0);
    expect(await pages.readSession(cookie, T0 + 12 * HOUR - 1)).not.toBeNull();
    expect(await pages.readSession(cookie, T0 + 12 * HOUR)).toBeNull();
    // The cookie's time is signed: moved on by a day, it is no session (its record still ends it at 12 hours).
    const [id, , signature] = cookie.split('.');
    expect(await pages.readSession(`${id}.${T0 + 36 * HOUR}.${signature}`, T0 + 13 * HOUR)).toBeNull();
  });

  test('a reset, and a snapshot loaded, take every token, session and flash with the signing secret', async () => {
    const { engine, count } = await opened(store);
    const pages = engine.sandbox.pages;
    const fill = async () => {
      const now = Date.now();
      await pages.newLoginToken(now);
      await pages.newLoginToken(now);
      const session = (await pages.readSession(await pages.newSession(now), now))!;
      await pages.putFlash(session, '{"key":"key_x"}', now);
      expect(await count()).toEqual({ token: 2, session: 1, flash: 1 });
    };
    await fill();
    // Before: the records stayed, under names no token or cookie would be looked for by again.
    await engine.sandbox.reset();
    expect(await count()).toEqual({ token: 0, session: 0, flash: 0 });

    const snapshots = await engine.sandbox.snapshots();
    let text = '';
    await snapshots.save(
      async (chunk) => {
        text += chunk;
      },
      { carbon: 'test' },
    );
    await fill();
    await snapshots.load(async function* () {
      yield* text.split('\n').filter((line) => line !== '');
    });
    expect(await count()).toEqual({ token: 0, session: 0, flash: 0 });
  });
});
