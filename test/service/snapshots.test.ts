import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { openLocal } from '../../src/engine/local.js';
import { NO_FILTER } from '../../src/service/journal-view.js';
import type { Sandbox } from '../../src/service/sandbox.js';
import { linesOf, MAX_LINE, SnapshotError } from '../../src/service/snapshot-format.js';
import { inspectSnapshot } from '../../src/service/snapshots.js';
import { freshSchema, postgresAvailable, TEST_DATABASE_URL, type TestSchema } from '../support/database.js';
import { tempDirs } from '../support/temp.js';
import { openSandbox, T0 } from '../support/world.js';

/**
 * Snapshots in-process, with a clock the test moves (docs/snapshots.md): the model's clock
 * starts again from the snapshot's, whatever time has passed; a file whose checksum is right
 * but whose rows break the ledger's rules is refused and changes nothing; the reader refuses
 * lines past its bound. On SQLite, and on PostgreSQL when there is one.
 */

const schemas: TestSchema[] = [];
const dirs = tempDirs('carbon-svc-');
afterAll(async () => {
  await Promise.all(schemas.map((s) => s.drop()));
  dirs.removeAll();
});

interface Opened {
  sandbox: Sandbox;
  clock: { now: number };
  /** Another writer on the same ledger: a second instance on PostgreSQL; on SQLite the same store (one writer a process). */
  other(): Promise<Sandbox>;
}

async function sqlite(): Promise<Opened> {
  const clock = { now: T0 };
  const sandbox = await openSandbox(dirs.make(), () => clock.now);
  return { sandbox, clock, other: async () => sandbox };
}

async function postgres(): Promise<Opened> {
  const schema = freshSchema('snapsvc');
  schemas.push(schema);
  const clock = { now: T0 };
  const target = { kind: 'postgres' as const, url: schema.url };
  return { sandbox: await openSandbox(target, () => clock.now), clock, other: () => openSandbox(target, () => clock.now) };
}

const STORES: Array<[string, () => Promise<Opened>]> = [['SQLite', sqlite]];
if (postgresAvailable()) STORES.push(['PostgreSQL', postgres]);

async function save(sandbox: Sandbox, journal = false): Promise<string> {
  let text = '';
  await (await sandbox.snapshots()).save(
    async (chunk) => {
      text += chunk;
    },
    { carbon: 'test', journal },
  );
  return text;
}

/**
 * A snapshot's text as a load reads it, held after its header and first two rows (so the load has
 * begun its transaction) until `release()`; `atGate` settles once the load waits there.
 */
function heldAfterTwoRows(text: string): { lines: () => ReturnType<typeof linesOf>; atGate: Promise<void>; release: () => void } {
  let reached!: () => void;
  const atGate = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const cut = text.split('\n', 3).join('\n').length + 1;
  async function* halves(): AsyncGenerator<string> {
    yield text.slice(0, cut);
    reached();
    await gate;
    yield text.slice(cut);
  }
  return { lines: () => linesOf(halves()), atGate, release };
}

async function* chunks(text: string): AsyncGenerator<string> {
  // Cut anywhere, as a stream is: the reader joins lines across chunks.
  for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7);
}

const load = async (sandbox: Sandbox, text: string) => (await sandbox.snapshots()).load(() => linesOf(chunks(text)));

/** The rows of a snapshot's text: every line but the header and the end line (which carry times). */
const rowsOf = (text: string) => text.trimEnd().split('\n').slice(1, -1);

/** The lines made whole again: counts in the header and the checksum matching, as a careful forger would. */
function resealed(lines: string[]): string {
  const header = JSON.parse(lines[0]!) as { tables: Record<string, { rows: number }> };
  const rows = lines.slice(1);
  for (const t of Object.keys(header.tables)) header.tables[t]!.rows = rows.filter((l) => l.startsWith(`["${t}",`)).length;
  const body = [JSON.stringify(header), ...rows].map((l) => `${l}\n`).join('');
  return `${body}${JSON.stringify({ end: { rows: rows.length, sha256: createHash('sha256').update(body).digest('hex') } })}\n`;
}

describe.each(STORES)('on %s', (_name, open) => {
  test('the clock starts again from the snapshot: an offset processing then is processing after any wait, and places on time', async () => {
    const { sandbox, clock } = await open();
    try {
      const key = (await sandbox.defaultKey('live'))!;
      await sandbox.topUp('live', 25_000);
      const res = await sandbox.service().handle({
        method: 'POST',
        path: '/api/v1/offsets',
        query: {},
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'clock-1', 'content-type': 'application/json' },
        body: '{"kg":20}',
      });
      expect(res.status).toBe(201);
      const id = (res.body as { id: string }).id;
      clock.now += 10_000;
      const text = await save(sandbox);
      const savedNow = await sandbox.now();
      // A day later, on a sandbox started over.
      clock.now += 86_400_000;
      await sandbox.reset();
      await load(sandbox, text);
      expect(await sandbox.now()).toBe(savedNow);
      expect((await sandbox.offset(id))?.status).toBe('processing');
      clock.now += 50_000;
      expect((await sandbox.offset(id))?.status).toBe('placed');
      expect((await sandbox.status()).clock.offset_ms).toBe(savedNow - (T0 + 10_000 + 86_400_000));
    } finally {
      await sandbox.close();
    }
  });

  test('--with-journal: the request journal travels with the snapshot and comes back as it was (numbered on); without it a load leaves none', async () => {
    const { sandbox } = await open();
    try {
      const key = (await sandbox.defaultKey('test'))!;
      for (const kg of [3, 4]) {
        const res = await sandbox.service().handle({
          method: 'POST',
          path: '/api/v1/offsets',
          query: {},
          headers: { authorization: `Bearer ${key}`, 'idempotency-key': `journal-${kg}`, 'content-type': 'application/json' },
          body: `{"kg":${kg}}`,
        });
        expect(res.status).toBe(201);
      }
      await sandbox.journal.flush();
      const saveJournal = async () => rowsOf(await save(sandbox, true)).filter((l) => l.startsWith('["journal",'));
      const before = await saveJournal();
      expect(before).toHaveLength(2);
      expect(before.join('\n')).not.toContain(key);
      const text = await save(sandbox, true);
      const plain = await save(sandbox);
      await sandbox.reset();
      await load(sandbox, text);
      // As they were, in their order, numbered on past the seqs the ledger handed out (docs/snapshots.md).
      const seqOf = (line: string) => Number(/^\["journal",(\d+),/.exec(line)![1]);
      const unnumbered = (lines: string[]) => lines.map((l) => l.replace(/^\["journal",\d+,/, '["journal",'));
      const after = await saveJournal();
      expect(unnumbered(after)).toEqual(unnumbered(before));
      expect(after.map(seqOf)).toEqual([seqOf(before[1]!) + 1, seqOf(before[1]!) + 2]);
      await load(sandbox, plain);
      expect(await saveJournal()).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  test("journal rows out of their seqs' order under a right checksum: refused (their order is what a load keeps), nothing changed", async () => {
    const { sandbox } = await open();
    try {
      for (let i = 0; i < 2; i++)
        await sandbox.service().handle({ method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' });
      await sandbox.journal.flush();
      const text = await save(sandbox, true);
      const lines = text.trimEnd().split('\n').slice(0, -1);
      const at = lines.findIndex((l) => l.startsWith('["journal",'));
      expect(lines[at + 1]).toMatch(/^\["journal",2,/);
      const swapped = resealed([...lines.slice(0, at), lines[at + 1]!, lines[at]!, ...lines.slice(at + 2)]);
      const err = await load(sandbox, swapped).catch((e: unknown) => e);
      expect((err as SnapshotError).code).toBe('snapshot_damaged');
      expect((err as Error).message).toMatch(/journal seq 1 after 2/);
      expect(rowsOf(await save(sandbox, true))).toEqual(rowsOf(text));
    } finally {
      await sandbox.close();
    }
  });

  test('journal rows given a key or a password by hand, under a right checksum: loaded masked, as the journal records them', async () => {
    const { sandbox } = await open();
    try {
      const live = (await sandbox.defaultKey('live'))!;
      await sandbox.service().handle({ method: 'GET', path: '/api/v1/balance', query: {}, headers: {}, body: '' });
      await sandbox.journal.flush();
      const lines = (await save(sandbox, true)).trimEnd().split('\n').slice(0, -1);
      const at = lines.findIndex((l) => l.startsWith('["journal",'));
      const row = JSON.parse(lines[at]!) as unknown[];
      // ["journal", seq, request_id, model_ms, real_ms, method, path, query, …, idempotency_key (16), …, request_body (20), response_body (21)]
      Object.assign(row, {
        6: `/api/v1/offsets/${live}`,
        7: `api_key=${live}&password=hunter2`,
        16: `retry-${live}`,
        20: `{"kg":10,"password":"hunter2","note":"${live}"}`,
        21: `{"echo":"${live}"}`,
      });
      await load(sandbox, resealed([...lines.slice(0, at), JSON.stringify(row), ...lines.slice(at + 1)]));
      const [entry] = await sandbox.journal.entries({ ...NO_FILTER, limit: 10 });
      const shown = JSON.stringify(entry);
      expect(shown).not.toContain(live.slice(8));
      expect(shown).not.toContain('hunter2');
      expect(entry!.query).toContain('password=');
    } finally {
      await sandbox.close();
    }
  });

  test('a UTF-8 byte-order mark an editor put before the header is no part of the file: skipped, not summed, the file loads', async () => {
    const { sandbox } = await open();
    try {
      await buy(sandbox, 'test', 'bom-1', { kg: 5 });
      const text = await save(sandbox);
      const bytes = async function* () {
        yield Buffer.from(`\ufeff${text}`, 'utf8');
      };
      await expect((await sandbox.snapshots()).load(() => linesOf(bytes()))).resolves.toMatchObject({ counts: { offsets: 1 } });
      expect(rowsOf(await save(sandbox))).toEqual(rowsOf(text));
    } finally {
      await sandbox.close();
    }
  });

  test('rows that break the ledger (an offset twice) under a right checksum: refused, nothing changed', async () => {
    const { sandbox } = await open();
    try {
      await sandbox.topUp('test', 25_000);
      const key = (await sandbox.defaultKey('test'))!;
      for (const idem of ['a', 'b']) {
        await sandbox.service().handle({
          method: 'POST',
          path: '/api/v1/offsets',
          query: {},
          headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
          body: '{"kg":5}',
        });
      }
      const text = await save(sandbox);
      const lines = text.trimEnd().split('\n').slice(0, -1);
      const offset = lines.find((l) => l.startsWith('["offsets",'))!;
      // The same offset id again, under another seq.
      const twice = resealed([...lines, offset.replace(/^\["offsets",\d+,/, '["offsets",99,')].sort(byTable(lines)));
      await expect(inspectSnapshot(linesOf(chunks(twice)))).resolves.toMatchObject({ counts: { offsets: 3 } });
      const err = await load(sandbox, twice).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SnapshotError);
      expect((err as SnapshotError).code).toBe('snapshot_damaged');
      expect((err as Error).message).toMatch(/a row breaks the ledger's rules/);
      expect(rowsOf(await save(sandbox))).toEqual(rowsOf(text));
    } finally {
      await sandbox.close();
    }
  });
});

/**
 * Each file (its lines resealed) refused as damaged, by the line reader (`--dry-run`'s checks of a
 * line) and by the load, with `why` in the load's message; the sandbox saved as `text` still, and answering.
 */
async function refusedEach(sandbox: Sandbox, text: string, files: Array<[string, string[], RegExp]>): Promise<void> {
  for (const [what, changed, why] of files) {
    const file = resealed(changed);
    const dry = await inspectSnapshot(linesOf(chunks(file))).catch((e: unknown) => e);
    expect([what, (dry as SnapshotError).code], String(dry)).toEqual([what, 'snapshot_damaged']);
    const err = await load(sandbox, file).catch((e: unknown) => e);
    expect([what, (err as SnapshotError).code], String(err)).toEqual([what, 'snapshot_damaged']);
    expect((err as Error).message).toMatch(why);
    expect(rowsOf(await save(sandbox))).toEqual(rowsOf(text));
    await sandbox.status();
    await sandbox.faults();
  }
}

/** A snapshot's lines (its end line left out) with one line changed by `edit` where `which` says. */
function edited(lines: string[], which: (line: string) => boolean, edit: (row: unknown[]) => unknown): string[] {
  return lines.map((l, i) => (i > 0 && which(l) ? JSON.stringify(edit(JSON.parse(l) as unknown[])) : l));
}

describe.each(STORES)('on %s: settings no command could make', (_name, open) => {
  test('under a right checksum (a rate limit, a fault setting, a starting key role, a clock out of bounds): refused, by --dry-run too, nothing changed', async () => {
    const { sandbox } = await open();
    try {
      await sandbox.setFaults({ error_rate: 0.5, seed: 7 });
      const text = await save(sandbox);
      const lines = text.trimEnd().split('\n').slice(0, -1);
      const account = (l: string) => l.startsWith('["account",');
      const faults = (l: string) => l.startsWith('["meta","sandbox.faults",');
      const startingKey = (role: string) => (l: string) => l.startsWith('["api_keys",') && l.endsWith(`,"${role}"]`);
      const header = JSON.parse(lines[0]!) as { clock: { now_ms: number } };
      const files: Array<[string, string[], RegExp]> = [
        ['a rate limit window of 0 ms', edited(lines, account, (r) => [...r.slice(0, 6), 0, r[7]]), /window/],
        ['a rate limit of -1 requests', edited(lines, account, (r) => [...r.slice(0, 5), -1, ...r.slice(6)]), /rate limit/],
        ['a fault setting that is no JSON', edited(lines, faults, (r) => [r[0], r[1], '{garbage']), /fault setting/],
        [
          'an error rate of 5',
          edited(lines, faults, (r) => [r[0], r[1], String(r[2]).replace('"error_rate":0.5', '"error_rate":5')]),
          /error rate/,
        ],
        ['a starting key role no command gives', edited(lines, startingKey('test'), (r) => [...r.slice(0, 8), 'admin']), /"admin" key/],
        ['the starting test role on the live key', edited(lines, startingKey('live'), (r) => [...r.slice(0, 8), 'test']), /"test" key/],
        [
          'two starting test keys',
          edited(lines, startingKey('read_only'), (r) => [...r.slice(0, 4), 'purchase', ...r.slice(5, 8), 'test']),
          /second starting test key/,
        ],
        [
          'a clock past the year 9999',
          [JSON.stringify({ ...header, clock: { ...header.clock, now_ms: 8.64e15 } }), ...lines.slice(1)],
          /clock/,
        ],
      ];
      await refusedEach(sandbox, text, files);
    } finally {
      await sandbox.close();
    }
  });
});

describe.each(STORES)('on %s: ids and keys in shapes the model never makes', (_name, open) => {
  test('under a right checksum (an offset id without off_, a certificate id, an empty Idempotency-Key, a fingerprint, a key id, a reference too long): refused, by --dry-run too, nothing changed', async () => {
    const { sandbox } = await open();
    try {
      await sandbox.topUp('live', 25_000);
      const id = await buy(sandbox, 'live', 'shapes-1', { kg: 5 });
      const text = await save(sandbox);
      const lines = text.trimEnd().split('\n').slice(0, -1);
      const table = (name: string) => (l: string) => l.startsWith(`["${name}",`);
      const files: Array<[string, string[], RegExp]> = [
        ['an offset id without off_', lines.map((l) => l.replaceAll(id, 'not_an_offset_id')), /offsets.id "not_an_offset_id"/],
        ['a certificate id not cert_ and hex', edited(lines, table('offsets'), (r) => [...r.slice(0, 15), 'cert_XYZ']), /certificate_id/],
        ['an empty Idempotency-Key', edited(lines, table('idempotency'), (r) => [r[0], r[1], '', ...r.slice(3)]), /idempotency.key ""/],
        [
          'a fingerprint no request makes',
          edited(lines, table('idempotency'), (r) => [...r.slice(0, 3), 'garbage', ...r.slice(4)]),
          /fingerprint/,
        ],
        ['a key id without key_', edited(lines, table('api_keys'), (r) => [r[0], 'k1', ...r.slice(2)]), /api_keys.id "k1"/],
        // The API refuses a reference over 200 characters, so it never serves one.
        [
          'a reference of 201 characters',
          edited(lines, table('offsets'), (r) => [...r.slice(0, 10), 'x'.repeat(201), ...r.slice(11)]),
          /offsets.reference "x{201}"/,
        ],
      ];
      await refusedEach(sandbox, text, files);
    } finally {
      await sandbox.close();
    }
  });
});

/** A purchase through the API, as an application makes it; the offset's id. */
async function buy(sandbox: Sandbox, mode: 'test' | 'live', idem: string, body: object): Promise<string> {
  const key = (await sandbox.defaultKey(mode))!;
  const res = await sandbox.service().handle({
    method: 'POST',
    path: '/api/v1/offsets',
    query: {},
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { id: string }).id;
}

/**
 * A ledger with every kind of row the model makes: both modes; by kg and by amount, at two rates
 * (amounts rounded up); placed, processing, refunded; waiting for review, approved, rejected, and
 * failed while waiting. Returns the ids by what they are.
 */
async function everyKindOfOffset(sandbox: Sandbox): Promise<Record<string, string>> {
  await sandbox.topUp('live', 25_000);
  await sandbox.setReviewLimit(1_000);
  const ids: Record<string, string> = {};
  ids.placed = await buy(sandbox, 'test', 't-kg', { kg: 5 });
  await sandbox.setRate(3_333);
  ids.byAmount = await buy(sandbox, 'test', 't-amount', { amount_cents: 1_001 });
  ids.refunded = await buy(sandbox, 'test', 't-refunded', { kg: 7 });
  await sandbox.fail(ids.refunded);
  ids.livePlaced = await buy(sandbox, 'live', 'l-small', { kg: 10 });
  for (const what of ['approved', 'rejected', 'pending', 'failedInReview'])
    ids[what] = await buy(sandbox, 'live', `l-${what}`, { kg: 500, reference: what });
  await sandbox.approve(ids.approved!);
  await sandbox.reject(ids.rejected!);
  await sandbox.fail(ids.failedInReview!);
  await sandbox.advanceClock(61_000);
  ids.processing = await buy(sandbox, 'test', 't-processing', { amount_cents: 50 });
  // A reference JSON escapes (its key's recorded request is compared as JSON text: ledger-rules.ts).
  ids.escaped = await buy(sandbox, 'test', 't-escaped', { kg: 3, reference: 'a"b\\c\td\ne\u001bf\u0001 é 🌍 \u2028\u007f/' });
  return ids;
}

describe.each(STORES)("on %s: rows that break the ledger's invariants together", (_name, open) => {
  test('under a right checksum (an amount not its kg at its rate, a balance not its entries, a key naming no offset…): refused, nothing changed; a whole ledger loads', async () => {
    const { sandbox } = await open();
    try {
      const ids = await everyKindOfOffset(sandbox);
      const text = await save(sandbox);
      // Every kind of offset, in both modes, loads: it is what the model makes.
      await sandbox.reset();
      await load(sandbox, text);
      expect(rowsOf(await save(sandbox))).toEqual(rowsOf(text));
      expect((await sandbox.offset(ids.pending!))?.status).toBe('processing');
      expect(await sandbox.awaitsReview(ids.pending!)).toBe(true);
      const lines = text.trimEnd().split('\n').slice(0, -1);
      const row = (table: string, id?: string) => (l: string) =>
        l.startsWith(`["${table}",`) && (id === undefined || l.includes(`"${id}"`));
      const offset = (id: string, edit: (r: unknown[]) => void) =>
        edited(lines, row('offsets', id), (r) => {
          edit(r);
          return r;
        });
      const balances = lines.filter(row('balances'));
      const impact = lines.filter(row('impact'));
      const files: Array<[string, string[], RegExp]> = [
        [
          'an amount not its kg at its rate',
          offset(ids.placed!, (r) => (r[6] = 999)),
          /offset off_\w+: amount_cents 999 is not 5 kg at the rate it was bought at \(4000 millicents a kg: 20 cents\)/,
        ],
        ['livemode 7', offset(ids.placed!, (r) => (r[3] = 7)), /livemode 7 is neither 0 \(test\) nor 1 \(live\)/],
        ['a negative kg', offset(ids.placed!, (r) => (r[5] = -5)), /kg -5 is not 1 to 1000000/],
        ['by amount, fewer kg than it buys', offset(ids.byAmount!, (r) => (r[9] = 2_000)), /is not the most 2000 cents/],
        ['by kg, another kg', offset(ids.placed!, (r) => (r[8] = 6)), /kg 5 is not the 6 kg bought/],
        ['processing with no settle time', offset(ids.processing!, (r) => (r[12] = null)), /processing, it has no settle time/],
        ['a review no code makes', offset(ids.pending!, (r) => (r[13] = 'maybe')), /review 'maybe' is none the model makes/],
        [
          'a test offset with a certificate',
          offset(ids.placed!, (r) => (r[15] = 'cert_0123456789abcdef01234567')),
          /a test offset has no certificate \(cert_0123456789abcdef01234567\)/,
        ],
        [
          'placed while waiting for review',
          offset(ids.pending!, (r) => Object.assign(r, { 4: 'placed', 14: 1 })),
          /placed, its review is pending/,
        ],
        [
          'a key naming no offset',
          edited(lines, row('idempotency', 't-kg'), (r) => [...r.slice(0, 4), 'off_missing', r[5]]),
          /Idempotency-Key t-kg: its offset off_missing is not in the ledger/,
        ],
        // Each key's request as another purchase made it: the same body would be refused 409, another replayed.
        ...(
          [
            ['t-kg', '[26,null,null]'],
            ['t-amount', '[null,1002,null]'],
            ['t-kg', '[null,20,null]'],
            ['l-pending', '[500,null,"other"]'],
            ['l-pending', '[500,null,null]'],
            ['t-kg', '[5,null,"added"]'],
          ] as const
        ).map(([key, print]): [string, string[], RegExp] => [
          `the key ${key} recording ${print}`,
          edited(lines, row('idempotency', key), (r) => [...r.slice(0, 3), print, ...r.slice(4)]),
          new RegExp(`Idempotency-Key ${key}: the request it recorded is not the one offset off_\\w+ was bought with`),
        ]),
        [
          'two keys naming one offset',
          edited(lines, row('idempotency', 't-kg'), (r) => [...r.slice(0, 4), ids.byAmount, r[5]]),
          /offset off_\w+ is named by 2 Idempotency-Keys/,
        ],
        ['a missing balance', lines.filter((l) => l !== balances[1]), /the live balance is missing/],
        [
          'a balance not the sum of its entries',
          edited(
            lines,
            (l) => l === balances[0],
            (r) => [r[0], r[1], (r[2] as number) + 100],
          ),
          /the test balance, \d+ cents, is not the sum of its entries/,
        ],
        [
          'an offset never charged',
          lines.filter((l) => !(l.startsWith('["entries",') && l.includes(`"charge",-20,"${ids.placed}"`))),
          /0 charges and 0 refunds, not one charge and no refund/,
        ],
        [
          'a refund of an offset not refunded',
          lines.map((l) => (l.includes(`"charge",-20,"${ids.placed}"`) ? l.replace('"charge",-20', '"refund",20') : l)),
          /\(placed\): 0 charges and 1 refunds/,
        ],
        [
          "a charge not its offset's amount",
          lines.map((l) => (l.includes(`"charge",-20,"${ids.placed}"`) ? l.replace('"charge",-20', '"charge",-21') : l)),
          /its charge is -21 cents, not -20/,
        ],
        [
          'a charge of the other mode',
          lines.map((l) => (l.includes(`"charge",-20,"${ids.placed}"`) ? l.replace(/^\["entries",(\d+),0,/, '["entries",$1,1,') : l)),
          /an entry or Idempotency-Key of the other mode names it/,
        ],
        [
          'a top-up naming an offset',
          edited(
            lines,
            (l) => l.startsWith('["entries",') && l.includes('"topup"'),
            (r) => [...r.slice(0, 5), ids.placed, r[6]],
          ),
          /\(topup of \d+ cents\): a top-up names an offset/,
        ],
        [
          'impact not its offsets',
          edited(
            lines,
            (l) => l === impact[0],
            (r) => [r[0], r[1], (r[2] as number) + 1, r[3], r[4]],
          ),
          /the test impact \(\d+ kg placed.* is not its offsets'/,
        ],
        [
          'a day not its offsets',
          edited(lines, row('impact_daily'), (r) => [...r.slice(0, 3), (r[3] as number) + 1, r[4]]),
          /impact of day \d+/,
        ],
      ];
      for (const [what, changed, why] of files) {
        const err = await load(sandbox, resealed(changed)).catch((e: unknown) => e);
        expect([what, (err as SnapshotError).code], String(err)).toEqual([what, 'snapshot_damaged']);
        expect([what, (err as Error).message]).toEqual([what, expect.stringMatching(why)]);
        expect(rowsOf(await save(sandbox))).toEqual(rowsOf(text));
      }
    } finally {
      await sandbox.close();
    }
  });
});

describe.each(STORES)('on %s, under the writer lock', (_name, open) => {
  test('a write that comes while a load runs waits for it, and lands on the loaded ledger', async () => {
    const { sandbox, other } = await open();
    const second = await other();
    try {
      const loaded = (await sandbox.status()).balances.test;
      // The file arrives in two parts, the second only when the test says.
      const { lines, atGate, release } = heldAfterTwoRows(await save(sandbox));
      const loading = (await sandbox.snapshots()).load(lines);
      await atGate;
      const topUp = second.topUp('test', 25_000);
      release();
      await loading;
      await topUp;
      // Had the top-up not waited, the load would have replaced it.
      expect((await sandbox.status()).balances.test).toBe(loaded + 25_000);
    } finally {
      if (second !== sandbox) await second.close();
      await sandbox.close();
    }
  });
});

describe.runIf(postgresAvailable())('on PostgreSQL, the journal while a load runs', () => {
  test("another instance's entry written meanwhile waits for the load, is kept, and numbers on past the loaded ones", async () => {
    const schema = freshSchema('snapjournal');
    schemas.push(schema);
    const target = { kind: 'postgres' as const, url: schema.url };
    const sandbox = await openSandbox(target, () => T0);
    const second = await openSandbox(target, () => T0);
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      const get = (s: Sandbox, path: string) => s.service().handle({ method: 'GET', path, query: {}, headers: {}, body: '' });
      for (let i = 0; i < 3; i++) await get(sandbox, '/api/v1/balance');
      const seen = await sandbox.journal.newestSeq();
      const { lines, atGate, release } = heldAfterTwoRows(await save(sandbox, true));
      const loading = (await sandbox.snapshots()).load(lines);
      await atGate;
      await get(second, '/api/v1/impact');
      const flushed = second.journal.flush();
      // Until its write is written (before: at once) or waits on the load's lock on the journal.
      let written = false;
      const waiting = async () => {
        while (!written) {
          const { rows } = await db.query('SELECT 1 FROM pg_locks WHERE relation = to_regclass($1) AND NOT granted', [
            `"${schema.schema}".journal`,
          ]);
          if (rows.length > 0) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      await Promise.race([flushed.then(() => void (written = true)), waiting()]);
      release();
      await loading;
      await flushed;
      // Without the load's lock on the journal it took a seq the load then gave a loaded row: the load was refused as damaged.
      const after = await sandbox.journal.entries({ ...NO_FILTER, after: seen });
      expect(after.map((e) => e.path)).toEqual(['/api/v1/impact']);
      expect(after[0]!.seq).toBe(seen + 4);
    } finally {
      await db.end();
      await second.close();
      await sandbox.close();
    }
  });
});

/** Keeps the header first and each row with its table, in the order the tables came. */
function byTable(lines: string[]): (a: string, b: string) => number {
  const order = (l: string) => (l.startsWith('{') ? -1 : lines.findIndex((x) => x.startsWith(l.slice(0, l.indexOf(',') + 1))));
  return (a, b) => order(a) - order(b);
}

describe('the reader', () => {
  test('joins lines cut across chunks, and refuses a line past its bound', async () => {
    const lines: string[] = [];
    for await (const line of linesOf(chunks('ab\ncd\n\nef'))) lines.push(line);
    expect(lines).toEqual(['ab', 'cd', '', 'ef']);
    // A multi-byte character cut between two chunks.
    const bytes = Buffer.from('é\n');
    const split: string[] = [];
    for await (const line of linesOf(
      (async function* () {
        yield bytes.subarray(0, 1);
        yield bytes.subarray(1);
      })(),
    ))
      split.push(line);
    expect(split).toEqual(['é']);
    const long = async () => {
      for await (const _ of linesOf(chunks(`{"carbon_snapshot":1}\n${'x'.repeat(MAX_LINE + 10)}\n`)));
    };
    await expect(long()).rejects.toMatchObject({ code: 'snapshot_damaged', message: /line 2: it is longer than/ });
    // A first line that long is no snapshot at all (a binary file, say).
    const first = async () => {
      for await (const _ of linesOf(chunks('y'.repeat(MAX_LINE + 1))));
    };
    await expect(first()).rejects.toMatchObject({ code: 'not_a_snapshot' });
  });
});

describe('openLocal', () => {
  test("on a ledger loaded from another directory's snapshot: its keys are not known here, and the error names the way on", async () => {
    const from = await openLocal(dirs.make());
    const text = await save(from.sandbox);
    await from.client.close();
    const dir = dirs.make();
    const to = await openLocal(dir);
    await load(to.sandbox, text);
    await to.client.close();
    await expect(openLocal(dir)).rejects.toThrow(
      /test keys are not known here \(its ledger came from a snapshot .*`carbon sandbox keys create`, or pass one of its keys as apiKey/,
    );
    await expect(openLocal(dir, { key: 'read_only' })).rejects.toThrow(/`carbon sandbox keys create --read-only`/);
  });
});
