import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import type { RequestEntry } from '../../src/api/journal.js';
import type { ApiRequest } from '../../src/api/types.js';
import { type Engine, openEngine } from '../../src/engine/open.js';
import { JOURNAL_BODY_LIMIT } from '../../src/service/journal-note.js';
import { JOURNAL_DEFAULTS, type JournalSettings, journalSettingsFrom } from '../../src/service/journal-settings.js';
import { NO_FILTER, type RequestFilter } from '../../src/service/journal-view.js';
import { linesOf } from '../../src/service/snapshot-format.js';
import { LedgerError } from '../../src/store/ledger-error.js';
import { openStore } from '../../src/store/open.js';
import { postgresAvailable, TEST_DATABASE_URL } from '../support/database.js';
import { journalRecord } from '../support/journal-records.js';
import { type StoreKind, storeMatrix, testLedger } from '../support/matrix.js';
import { T0, tempDir } from '../support/world.js';

// The request journal (docs/reliability.md, "The request journal"): every request the service
// answers, kept in the ledger with its answer, on each store; what an entry holds, what it never
// holds (a key's text), its bound, its retention, and that a clean close loses nothing.

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done();
  cleanup = [];
});

interface Opened {
  engine: Engine;
  clock: { now: number };
  keys: { test: string; live: string };
  call(
    method: string,
    path: string,
    options?: { key?: string | null; body?: string; idem?: string; query?: ApiRequest['query'] },
  ): Promise<{
    status: number;
    headers: Record<string, string>;
    body: unknown;
  }>;
  entries(filter?: Partial<RequestFilter>): Promise<RequestEntry[]>;
}

/** Engines on one fresh ledger of `store`, each with its own instance name, all on one clock. */
async function ledger(store: StoreKind, journal: Partial<JournalSettings> = {}) {
  const where = testLedger(store, 'journal');
  const dir = tempDir('carbon-journal-');
  const clock = { now: T0 };
  cleanup.push(
    async () => rmSync(dir, { recursive: true, force: true }),
    () => where.drop(),
  );
  const open = async (instance: string): Promise<Opened> => {
    const engine = await openEngine(where.target(dir), { clock: () => clock.now, journal: { ...JOURNAL_DEFAULTS, instance, ...journal } });
    let closed = false;
    cleanup.push(async () => {
      if (!closed) await engine.close();
    });
    const close = engine.close;
    engine.close = async (options) => {
      closed = true;
      await close(options);
    };
    const keys = { test: (await engine.sandbox.defaultKey('test'))!, live: (await engine.sandbox.defaultKey('live'))! };
    return {
      engine,
      clock,
      keys,
      call: async (method, path, o = {}) => {
        const headers: Record<string, string> = {};
        const key = o.key === undefined ? keys.test : o.key;
        if (key !== null) headers.authorization = `Bearer ${key}`;
        if (o.idem !== undefined) headers['idempotency-key'] = o.idem;
        if (o.body !== undefined) headers['content-type'] = 'application/json';
        return engine.service.handle({ method, path: `/api/v1${path}`, query: o.query ?? {}, headers, body: o.body ?? '' });
      },
      entries: (filter = {}) => engine.sandbox.journal.entries({ ...NO_FILTER, ...filter }),
    };
  };
  return { open, database: where.database, dir, target: where.target(dir) };
}

/** The busy timeout and PostgreSQL's statement deadline at a minute (for this test), so a write that waits as writes do hangs the test. */
function slowDeadlines(): void {
  const before = { busy: process.env.CARBON_BUSY_TIMEOUT_MS, statement: process.env.CARBON_PG_STATEMENT_TIMEOUT_MS };
  process.env.CARBON_BUSY_TIMEOUT_MS = '60000';
  process.env.CARBON_PG_STATEMENT_TIMEOUT_MS = '60000';
  cleanup.push(async () => {
    for (const [name, value] of [
      ['CARBON_BUSY_TIMEOUT_MS', before.busy],
      ['CARBON_PG_STATEMENT_TIMEOUT_MS', before.statement],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

/** Another process's hold on what a journal batch needs (SQLite's write lock; PostgreSQL's journal table); resolves with its release. */
async function holdJournalLock(store: StoreKind, database: string | undefined, dir: string): Promise<() => Promise<void>> {
  if (store === 'sqlite') {
    const other = new DatabaseSync(join(dir, 'ledger.db'));
    other.exec('BEGIN IMMEDIATE');
    return async () => {
      other.exec('COMMIT');
      other.close();
    };
  }
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  await db.query(`SET search_path = "${new URL(database!).searchParams.get('schema')}"`);
  await db.query('BEGIN; LOCK TABLE journal IN SHARE MODE');
  return async () => {
    await db.query('COMMIT');
    await db.end();
  };
}

/** The two ways `a` empties the journal, a reset and a load of a snapshot saved now (its keys the same), with what each is called. */
async function emptiers(a: Opened): Promise<Array<readonly [string, () => Promise<unknown>]>> {
  const chunks: string[] = [];
  await (await a.engine.sandbox.snapshots()).save(async (chunk) => void chunks.push(chunk), { carbon: 'test' });
  const load = async () =>
    (await a.engine.sandbox.snapshots()).load(() =>
      linesOf(
        (async function* () {
          yield* chunks;
        })(),
      ),
    );
  return [
    ['a reset', () => a.engine.sandbox.reset()],
    ['a load', load],
  ];
}

describe.each(storeMatrix())('the request journal on the $label store', ({ kind: store }) => {
  test('holds each answered request with its answer: ids, times, key, idempotency, offset, bodies; newest first', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    await a.engine.sandbox.advanceClock(60_000);
    const bought = await a.call('POST', '/offsets', { body: '{"kg":5,"reference":"ops-1"}', idem: 'order-1' });
    expect(bought.status).toBe(201);
    const again = await a.call('POST', '/offsets', { body: '{"kg":5,"reference":"ops-1"}', idem: 'order-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    const offsetId = (bought.body as { id: string }).id;
    await a.call('GET', `/offsets/${offsetId}`);
    await a.call('GET', '/offsets', { query: { limit: '2' } });
    const refused = await a.call('POST', '/offsets', { body: '{"kg":0}', idem: 'order-2' });
    expect(refused.status).toBe(422);

    const entries = await a.entries();
    expect(entries.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      'POST /api/v1/offsets 422',
      'GET /api/v1/offsets 200',
      `GET /api/v1/offsets/${offsetId} 200`,
      'POST /api/v1/offsets 201',
      'POST /api/v1/offsets 201',
    ]);
    const [bad, list, read, replay, first] = entries as [RequestEntry, RequestEntry, RequestEntry, RequestEntry, RequestEntry];
    // The Request-Id each answer carried.
    expect(first.id).toBe(bought.headers['request-id']);
    expect(replay.id).toBe(again.headers['request-id']);
    expect(first.id).toMatch(/^req_[A-Za-z0-9]{14}$/);
    // Model time (a minute ahead of the wall clock here) and real time beside it.
    expect(first.created).toBe(new Date(T0 + 60_000).toISOString());
    expect(first.real_time).toBe(new Date(T0).toISOString());
    expect(first).toMatchObject({ livemode: false, idempotency_key: 'order-1', replayed: false, offset: offsetId, instance: 'host-a:1' });
    expect(first.key_id).toMatch(/^key_/);
    expect(replay).toMatchObject({ replayed: true, offset: offsetId });
    expect(read.offset).toBe(offsetId);
    expect(list.query).toBe('limit=2');
    expect(first.request_body).toBe('{"kg":5,"reference":"ops-1"}');
    expect(JSON.parse(first.response_body)).toMatchObject({ id: offsetId, object: 'offset' });
    expect(first.error).toBeNull();
    expect(bad.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param: 'kg' });
    expect(bad.error!.message).toContain('kg');
    expect(entries.every((e) => e.duration_ms >= 0)).toBe(true);
    expect(entries.map((e) => e.seq)).toEqual([...entries.map((e) => e.seq)].sort((x, y) => y - x));
  });

  test('never holds a key: its id and mode only, and keys pasted into a body, a path, a query or an Idempotency-Key masked', async () => {
    const { open, dir } = await ledger(store);
    const a = await open('host-a:1');
    const { test: key, live } = a.keys;
    await a.call('POST', '/offsets', { body: JSON.stringify({ kg: 1, reference: `oops ${live}` }), idem: `idem-${key}` });
    await a.call('GET', `/offsets/${key}`, { query: { reference: live } });
    // A key the sandbox never made: refused (401), its mode still kept, its text not.
    const stranger = `ck_live_${'Z'.repeat(32)}`;
    await a.call('GET', '/balance', { key: stranger });
    const entries = await a.entries();
    const text = JSON.stringify(entries);
    for (const secret of [key, live, stranger]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(8));
    }
    expect(text).toContain(`ck_live_…${live.slice(-4)}`);
    expect(entries[0]).toMatchObject({ status: 401, key_id: null, livemode: true });
    expect(entries[1]!.path).toBe(`/api/v1/offsets/ck_test_…${key.slice(-4)}`);
    // Masked before it is written, not as it is read: the journal's rows as the ledger holds them have none of them
    // (the offset's own reference and its Idempotency-Key's record keep what was sent: docs/security.md).
    if (store === 'sqlite') {
      await a.engine.close();
      const db = new DatabaseSync(join(dir, 'ledger.db'), { readOnly: true });
      const rows = JSON.stringify(db.prepare('SELECT * FROM journal').all());
      db.close();
      expect(rows).toContain(`ck_live_…${live.slice(-4)}`);
      for (const secret of [key, live, stranger]) expect(rows).not.toContain(secret.slice(8));
    }
  });

  test('bounds each body, saying how much was left out', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    const reference = 'r-'.repeat(JOURNAL_BODY_LIMIT / 2 + 250);
    await a.call('POST', '/quotes', { body: JSON.stringify({ kg: 1, reference }) });
    const [entry] = await a.entries();
    expect(entry!.request_body.length).toBeLessThan(JOURNAL_BODY_LIMIT + 40);
    expect(entry!.request_body).toMatch(/…\[\d+ more characters\]$/);
  });

  test('keeps the start of a page of a list, item by item, saying how many items were left out', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    for (let i = 0; i < 40; i++)
      await a.call('POST', '/offsets', { body: JSON.stringify({ kg: 1, reference: `page-${i}` }), idem: `p-${i}` });
    const page = (await a.call('GET', '/offsets', { query: { limit: '40' } })).body as { data: unknown[] };
    const [entry] = await a.entries();
    const body = entry!.response_body;
    expect(body).toMatch(/…\[\d+ more of 40 items\]$/);
    // Exactly the answer with its first items, as JSON.stringify writes it (up to the bound), then the note.
    const left = Number(/(\d+) more of/.exec(body)![1]);
    const kept = JSON.stringify({ ...page, data: page.data.slice(0, 40 - left) }).slice(0, JOURNAL_BODY_LIMIT);
    expect(body).toBe(`${kept}…[${left} more of 40 items]`);
    expect(body.length).toBeLessThan(JOURNAL_BODY_LIMIT + 40);
    // What is kept is the answer's own text, the newest offsets first.
    expect(body.startsWith('{"object":"list","data":[{"object":"offset","id":"off_')).toBe(true);
    expect(body).toContain('"reference":"page-39"');
    expect(left).toBeGreaterThan(0);
    expect(body).not.toContain(`"reference":"page-${left - 1}"`);
  });

  test('a path the API does not have (404) and a method a path does not take (405) keep whose key sent them, as a 401 keeps its mode', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    const liveId = (await a.engine.sandbox.keys()).find((k) => k.mode === 'live')!.id;
    await a.call('GET', '/nowhere', { key: a.keys.live });
    await a.call('DELETE', '/balance', { key: a.keys.live });
    await a.call('GET', '/nowhere', { key: null });
    const kept = (await a.entries()).map((e) => [e.status, e.key_id, e.livemode]);
    // Before: both of the live key's were kept with no key and no mode, and a --live filter missed them.
    expect(kept).toEqual([
      [404, null, null],
      [405, liveId, true],
      [404, liveId, true],
    ]);
  });

  test('filters by status class or code, method, path prefix, error code, mode, Request-Id and real time', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    await a.call('GET', '/balance');
    await a.call('GET', '/balance', { key: a.keys.live });
    await a.call('POST', '/offsets', { body: '{"kg":1}' }); // 400: no Idempotency-Key
    a.clock.now += 60_000;
    await a.call('GET', '/nowhere');
    const ids = (es: RequestEntry[]) => es.map((e) => `${e.method} ${e.path} ${e.status}`);
    expect(ids(await a.entries({ status: '4xx' }))).toEqual(['GET /api/v1/nowhere 404', 'POST /api/v1/offsets 400']);
    expect(ids(await a.entries({ status: '404' }))).toEqual(['GET /api/v1/nowhere 404']);
    expect(ids(await a.entries({ method: 'POST' }))).toEqual(['POST /api/v1/offsets 400']);
    expect(ids(await a.entries({ path: '/api/v1/bal' }))).toHaveLength(2);
    expect(ids(await a.entries({ code: 'idempotency_key_missing' }))).toEqual(['POST /api/v1/offsets 400']);
    expect(ids(await a.entries({ mode: 'live' }))).toEqual(['GET /api/v1/balance 200']);
    expect(ids(await a.entries({ since: T0 + 60_000 }))).toEqual(['GET /api/v1/nowhere 404']);
    const all = await a.entries();
    expect(ids(await a.entries({ requestId: all[2]!.id }))).toEqual([ids(all)[2]]);
    expect(await a.engine.sandbox.journal.entry(all[3]!.id)).toEqual(all[3]);
    // Older than an entry (a page), and newer than one, oldest first (following).
    expect(ids(await a.entries({ before: all[1]!.seq }))).toEqual(ids(all).slice(2));
    expect(ids(await a.entries({ after: all[2]!.seq }))).toEqual(ids(all).slice(0, 2).reverse());
    expect(ids(await a.entries({ limit: 1 }))).toEqual(ids(all).slice(0, 1));
  });

  test('is one journal for every instance on the ledger, each entry naming the one that answered', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    const b = await open('host-b:2');
    await a.call('GET', '/balance');
    await a.engine.sandbox.journal.flush();
    await b.call('GET', '/impact');
    await b.engine.sandbox.journal.flush();
    // Entries are in the order they were written (each instance writes its own in batches).
    const seen = await a.entries();
    expect(seen.map((e) => [e.instance, e.path])).toEqual([
      ['host-b:2', '/api/v1/impact'],
      ['host-a:1', '/api/v1/balance'],
    ]);
  });

  test('loses nothing on a clean close: what was answered is written before the ledger closes', async () => {
    // Nothing is written by time here (an hour between batches): only the close writes.
    const { open } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    for (let i = 0; i < 30; i++) await a.call('GET', '/balance');
    await a.engine.close();
    const b = await open('host-b:2');
    expect(await b.entries({ limit: 100 })).toHaveLength(30);
  });

  test("at a command's end, waits only briefly for another process's lock: the entry is dropped, the close not held", async () => {
    // Any write that waited as writes do would wait a minute here, far past the test's limit.
    slowDeadlines();
    const { open, database, dir } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    await a.call('GET', '/balance');
    await a.engine.sandbox.journal.flush();
    const release = await holdJournalLock(store, database, dir);
    // Two batches left at the end: the first takes all of the wait, the second none.
    for (let i = 0; i < 150; i++) await a.call('GET', '/impact');
    // Resolves while the lock is still held; before, it waited the busy timeout (here a minute),
    // and on PostgreSQL the second batch did still.
    await a.engine.close({ exiting: true });
    expect(a.engine.sandbox.journal.dropped).toBe(150);
    await release();
    const b = await open('host-b:2');
    expect((await b.entries()).map((e) => e.path)).toEqual(['/api/v1/balance']);
  });

  test('writes every batch whole and in the order answered, one seq after another', async () => {
    // Written only when a batch fills (an hour between timed batches), then by the close: full
    // batches and a short last one.
    const { open } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    for (let i = 0; i < 203; i++) await a.call('GET', '/balance', { query: { n: String(i) } });
    await a.engine.close();
    const b = await open('host-b:2');
    const kept: RequestEntry[] = [];
    for (
      let page = await b.entries({ limit: 100, after: 0 });
      page.length > 0;
      page = await b.entries({ limit: 100, after: page.at(-1)!.seq })
    )
      kept.push(...page);
    expect(kept.map((e) => e.query)).toEqual(Array.from({ length: 203 }, (_, i) => `n=${i}`));
    expect(kept.map((e) => e.seq)).toEqual(Array.from({ length: 203 }, (_, i) => kept[0]!.seq + i));
  });

  test('keeps the newest entries and none older than its age; a reset empties it', async () => {
    const { open } = await ledger(store, { keep: 20, maxAgeMs: 3_600_000 });
    const a = await open('host-a:1');
    for (let i = 0; i < 25; i++) await a.call('GET', '/balance', { query: { n: String(i) } });
    await a.engine.sandbox.journal.flush();
    // Pruned as entries are written: at most `keep` and one hundredth more (at least one) between prunes.
    for (let i = 0; i < 5; i++) await a.call('GET', '/impact');
    await a.engine.sandbox.journal.flush();
    const kept = await a.entries({ limit: 100 });
    expect(kept.length).toBeGreaterThanOrEqual(20);
    expect(kept.length).toBeLessThanOrEqual(22);
    expect(kept.at(-1)!.query).not.toBe('n=0');
    // Two hours on, real time: the old entries go at the next prune.
    a.clock.now += 2 * 3_600_000;
    for (let i = 0; i < 2; i++) await a.call('GET', '/impact');
    await a.engine.sandbox.journal.flush();
    expect((await a.entries({ limit: 100 })).map((e) => e.real_time)).toEqual([
      new Date(a.clock.now).toISOString(),
      new Date(a.clock.now).toISOString(),
    ]);
    await a.engine.sandbox.reset();
    expect(await a.entries()).toEqual([]);
  });

  test('never hands out a seq twice: after a reset, and after a snapshot is loaded, entries number on from the highest before', async () => {
    const { open } = await ledger(store);
    const a = await open('host-a:1');
    const newest = async () => (await a.entries({ limit: 1 }))[0]!.seq;
    for (let i = 0; i < 5; i++) await a.call('GET', '/balance');
    const before = await newest();
    const snapshot: string[] = [];
    await (await a.engine.sandbox.snapshots()).save(async (chunk) => void snapshot.push(chunk), { carbon: 'test' });

    await a.engine.sandbox.reset();
    expect(await a.entries()).toEqual([]);
    // Where a follower starting now starts: the highest handed out, not 0 (the emptied journal's newest).
    expect(await a.engine.sandbox.journal.newestSeq()).toBe(before);
    // Fewer after it than before: an emptied table would number them 1 and 2, below what a follower saw.
    for (let i = 0; i < 2; i++) await a.call('GET', '/impact');
    const afterReset = await a.entries();
    expect(afterReset.map((e) => e.seq)).toEqual([before + 2, before + 1]);

    // A snapshot saved before all of them (without its journal) loaded: the next entry still numbers on.
    await (await a.engine.sandbox.snapshots()).load(() =>
      linesOf(
        (async function* () {
          yield* snapshot;
        })(),
      ),
    );
    expect(await a.entries()).toEqual([]);
    expect(await a.engine.sandbox.journal.newestSeq()).toBe(before + 2);
    await a.call('GET', '/balance');
    expect(await newest()).toBe(before + 3);
    // And again across a second reset, with the highest kept once more.
    await a.engine.sandbox.reset();
    await a.call('GET', '/balance');
    expect(await newest()).toBe(before + 4);
  });

  test("entries another instance answered before a reset or a load, still in its memory, are not written after it: the old sandbox's", async () => {
    const { open } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    const b = await open('host-b:2');
    for (const [what, empty] of await emptiers(a)) {
      // B answers two requests and keeps their entries (its batch is an hour off), as a busy
      // instance has its last 50 ms of entries on their way when another resets.
      await b.call('GET', '/balance', { query: { before: what } });
      await b.call('GET', '/impact', { query: { before: what } });
      a.clock.now += 1;
      await empty();
      a.clock.now += 1;
      await b.call('GET', '/balance', { key: (await a.engine.sandbox.defaultKey('test'))!, query: { after: what } });
      await b.engine.sandbox.journal.flush();
      expect([what, (await a.entries({ limit: 100 })).map((e) => e.query)]).toEqual([what, [`after=${what.replace(' ', '+')}`]]);
    }
  });

  test('an answer read from the sandbox before a reset or a load, in the same millisecond, is not written after it; one read after it is', async () => {
    const { open } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    const b = await open('host-b:2');
    // The clock never moves: each request is answered in the millisecond its reset or load marks.
    for (const [what, empty] of await emptiers(a)) {
      await b.call('GET', '/balance', { query: { before: what } });
      await empty();
      // After the load, the snapshot's own keys again: the same key id before and after, told apart by when it was read.
      await b.call('GET', '/balance', { key: (await a.engine.sandbox.defaultKey('test'))!, query: { after: what } });
      await b.engine.sandbox.journal.flush();
      expect([what, (await a.entries({ limit: 100 })).map((e) => e.query)]).toEqual([what, [`after=${what.replace(' ', '+')}`]]);
    }
  });

  test("a follower that saw seq n before a snapshot's load reads none of the loaded entries, only the requests after it", async () => {
    const a = await (await ledger(store)).open('host-a:1');
    const b = await (await ledger(store)).open('host-b:1');
    for (let i = 0; i < 6; i++) await a.call('GET', '/balance', { query: { n: String(i) } });
    const saved = await a.entries(); // written first: a read flushes what this engine answered
    const chunks: string[] = [];
    await (await a.engine.sandbox.snapshots()).save(async (chunk) => void chunks.push(chunk), { carbon: 'test', journal: true });
    const load = () =>
      b.engine.sandbox.snapshots().then((s) =>
        s.load(() =>
          linesOf(
            (async function* () {
              yield* chunks;
            })(),
          ),
        ),
      );
    const requestsOf = (entries: RequestEntry[]) => entries.map((e) => e.id);

    // B's one entry is below A's six (2 to 6 above it): before, a follower of B read five of A's as new.
    await b.call('GET', '/impact');
    const seen = (await b.entries({ limit: 1 }))[0]!.seq;
    await load();
    expect(await b.entries({ after: seen })).toEqual([]);
    expect(await b.entries({ after: 0 })).toEqual([]);
    // carbon logs lists them as the ledger's history, in their order, numbered on past every seq before.
    const loaded = await b.entries();
    expect(requestsOf(loaded)).toEqual(requestsOf(saved));
    expect(loaded.map((e) => e.seq)).toEqual(Array.from({ length: 6 }, (_, i) => seen + 6 - i));
    // A reader that is among them pages on through them (after= one of theirs), as before.
    expect(requestsOf(await b.entries({ after: loaded.at(-1)!.seq, limit: 2 }))).toEqual(requestsOf(saved.slice(-3, -1).reverse()));
    await b.call('GET', '/impact', { key: a.keys.test });
    const [next] = await b.entries({ limit: 1 });
    expect(requestsOf(await b.entries({ after: seen }))).toEqual([next!.id]);

    // Loaded again, now where B's seqs are past the file's: the follower reads none of them, and the
    // journal does not look started again (the newest is past what it saw).
    const now = next!.seq;
    await load();
    expect(await b.entries({ after: now })).toEqual([]);
    expect(await b.engine.sandbox.journal.newestSeq()).toBeGreaterThan(now);
    await b.call('GET', '/balance', { key: a.keys.test });
    expect((await b.entries({ after: now })).map((e) => e.path)).toEqual(['/api/v1/balance']);
  });

  test('records nothing when it is off (CARBON_JOURNAL=off)', async () => {
    const { open } = await ledger(store, { enabled: false });
    const a = await open('host-a:1');
    await a.call('GET', '/balance');
    expect(await a.entries()).toEqual([]);
  });
});

describe.each(storeMatrix())('on the $label store, the journal and another process holding the lock it needs', ({ kind: store }) => {
  test('a batch does not wait for the lock (the requests are answered); it is written once the lock is free', async () => {
    // A write that waited would wait a minute here (far past the test's limit).
    slowDeadlines();
    const { open, database, dir } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    const release = await holdJournalLock(store, database, dir);
    // 250 answers: a batch is tried at each hundred, finds the lock held, and waits in memory.
    for (let i = 0; i < 250; i++) expect((await a.call('GET', '/balance')).status).toBe(200);
    await release();
    expect(await a.entries({ limit: 1000 })).toHaveLength(250);
    expect(a.engine.sandbox.journal.dropped).toBe(0);
  }, 20_000);

  test("the store's batch with a wait of 0 gives up at once: a transient error, nothing written", async () => {
    // The port's "0: not at all" (port.ts, appendJournal); before, PostgreSQL read 0 as its usual
    // wait, and here waited the minute.
    slowDeadlines();
    const { open, database, dir, target } = await ledger(store, { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    const ledgerStore = await openStore(target);
    cleanup.push(() => ledgerStore.close());
    const release = await holdJournalLock(store, database, dir);
    const refused = await ledgerStore
      .appendJournal(
        [journalRecord({ request_id: 'req_waitsnot', model_ms: T0, instance: 'host-a:1' })],
        { keep: 10_000, maxAgeMs: 86_400_000, now: T0 },
        { waitMs: 0 },
      )
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LedgerError);
    expect((refused as LedgerError).transient).toBe(true);
    await release();
    expect(await a.entries({ requestId: 'req_waitsnot' })).toEqual([]);
  });
});

describe.runIf(postgresAvailable())('on PostgreSQL, the journal while a reset runs', () => {
  /** Two instances on one fresh schema, their batches an hour off, and a connection of the test's own to it. */
  async function twoInstances() {
    const { open, database } = await ledger('postgres', { flushMs: 3_600_000 });
    const a = await open('host-a:1');
    const b = await open('host-b:2');
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    cleanup.push(() => db.end());
    return { a, b, db, schema: new URL(database!).searchParams.get('schema')! };
  }

  test("another instance's batch under way when the reset starts is emptied with the rest; what comes after numbers on", async () => {
    const { a, b, db, schema } = await twoInstances();
    const journalLocks = async () =>
      Number((await db.query("SELECT count(*) AS n FROM pg_locks WHERE relation = to_regclass('journal') AND NOT granted")).rows[0].n);
    const waiters = async (n: number) => {
      while ((await journalLocks()) < n) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    await db.query(`SET search_path = "${schema}"`);
    await b.call('GET', '/balance');
    const seen = (await b.entries({ limit: 1 }))[0]!.seq;
    // B's next batch held on its way in (a lock the test holds), as a batch still being written is.
    await db.query('BEGIN; LOCK TABLE journal IN SHARE MODE');
    await b.call('GET', '/impact');
    const flushed = b.engine.sandbox.journal.flush();
    await waiters(1);
    const reset = a.engine.sandbox.reset();
    // The reset waits too (for the journal's lock, or its delete for the rows').
    await waiters(2);
    await db.query('COMMIT');
    await flushed;
    await reset;
    // Before: the reset's delete read a snapshot older than the batch, and B's /impact, answered before the reset, stayed.
    expect(await a.entries({ limit: 100 })).toEqual([]);
    expect(await a.entries({ after: seen })).toEqual([]);
    await b.call('GET', '/balance', { key: (await a.engine.sandbox.defaultKey('test'))! });
    const after = await b.entries({ after: seen });
    expect(after.map((e) => e.path)).toEqual(['/api/v1/balance']);
    expect(after[0]!.seq).toBeGreaterThan(seen + 1);
  });

  test("a request another instance answers from the old sandbox while the reset's transaction runs is not written after it", async () => {
    const { a, b, db, schema } = await twoInstances();
    // The reset held after its delete, before its commit (a trigger on a lock the test holds), as a
    // large ledger's delete holds it: meanwhile B answers from what it still reads, the old sandbox.
    const lock = randomInt(1, 2 ** 31 - 1);
    await db.query(`CREATE FUNCTION "${schema}".held() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${lock}); RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER held BEFORE INSERT ON "${schema}".account FOR EACH ROW EXECUTE FUNCTION "${schema}".held()`);
    await db.query('SELECT pg_advisory_lock($1)', [lock]);
    a.clock.now += 1;
    const reset = a.engine.sandbox.reset();
    const waiting = async () =>
      Number(
        (await db.query(`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND locktype = 'advisory' AND objid = ${lock}`)).rows[0].n,
      );
    while ((await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    a.clock.now += 1;
    expect((await b.call('GET', '/balance', { query: { during: 'reset' } })).status).toBe(200);
    a.clock.now += 1;
    await db.query('SELECT pg_advisory_unlock($1)', [lock]);
    await reset;
    a.clock.now += 1;
    await b.call('GET', '/balance', { key: (await a.engine.sandbox.defaultKey('test'))!, query: { after: 'reset' } });
    await b.engine.sandbox.journal.flush();
    // Before: the reset marked the journal emptied as of its start, and B's request, answered from the old sandbox after that, stayed.
    expect((await a.entries({ limit: 100 })).map((e) => e.query)).toEqual(['after=reset']);
  });
});

describe("CARBON_JOURNAL's words", () => {
  test('on: unset, empty, on, 1, true, yes; off: off, 0, false, no; in any case; any other word is refused, naming it', () => {
    const enabled = (value: string | undefined) => journalSettingsFrom(value === undefined ? {} : { CARBON_JOURNAL: value }).enabled;
    for (const on of [undefined, '', 'on', '1', 'true', 'yes', 'ON', 'Yes', 'TRUE']) expect(enabled(on), String(on)).toBe(true);
    for (const off of ['off', '0', 'false', 'no', 'OFF', 'No', 'False']) expect(enabled(off), off).toBe(false);
    for (const wrong of ['disabled', ' on', 'off ', 'onn', '2', 'constructor', 'toString'])
      expect(() => enabled(wrong), wrong).toThrow(`CARBON_JOURNAL must be off (or 0, false, no) or on, not "${wrong}".`);
  });
});
