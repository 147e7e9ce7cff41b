// Fast seeding for the benchmark: offsets written straight into the ledger's own tables, in
// big transactions, by SQL that generates the rows inside SQLite (no per-row round trip into
// JavaScript), keeping every derived figure the service keeps (the balance, its entries, the
// impact totals, the per-day totals) consistent with the rows. A million offsets take seconds; buying them
// through the API would take minutes.
//
// The ledger must exist already (run any carbon command on the data directory first): the
// schema and the account are the model's to create, not the bench's.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

const DAY_MS = 24 * 60 * 60 * 1000;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** One random base62 character, in SQL. */
const CHAR = `substr('${BASE62}', 1 + abs(random() % 62), 1)`;
/** An id shaped like the model's: off_ and 24 random base62 characters. */
const ID = `'off_' || ${Array.from({ length: 24 }, () => CHAR).join(' || ')}`;

/**
 * Adds `count` placed test-mode offsets to the ledger in `dataDir`, oldest first, all in the
 * past (so no placement is due), one ms apart. kg cycles 1..500; every tenth has a reference.
 * Each offset has its charge entry; one top-up entry before them covers the total, so the
 * available balance is unchanged and the entries still add up to it. The impact totals grow
 * by what was added. Returns the ids of the oldest, middle and newest offset added.
 */
export function seedOffsets(dataDir, count, { batch = 100_000 } = {}) {
  const db = new DatabaseSync(join(dataDir, 'ledger.db'));
  try {
    // Seeding only, with nobody else on the file: no journal, no fsync, one lock. A crash
    // mid-seed just means seeding again. WAL is set back at the end (it is persistent).
    db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -262144');
    const account = db.prepare('SELECT rate FROM account WHERE id = 1').get();
    if (!account) throw new Error(`no account in ${dataDir}: create the ledger first`);
    const firstSeq = (db.prepare('SELECT max(seq) AS m FROM offsets').get().m ?? 0) + 1;
    const start = Date.now() - 2 * DAY_MS - count;
    // Row i (0-based): kg = 1 + i % 500, charge = ceil(kg × rate / 1000) cents.
    const insertOffsets = db.prepare(`
      WITH RECURSIVE p(rate, start) AS (SELECT CAST(@rate AS INTEGER), CAST(@start AS INTEGER)),
      n(i) AS (SELECT CAST(@from AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @to),
      r AS (SELECT i, 1 + i % 500 AS kg, p.start + i AS created, p.rate AS rate FROM n, p)
      INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference,
        created_ms, settle_at_ms, review, placed_ms, certificate_id)
      SELECT ${ID}, 0, 'placed', kg, (kg * rate + 999) / 1000, rate, kg, NULL,
        CASE WHEN i % 10 = 0 THEN 'bench-' || (i % 1000) END, created, NULL, NULL, created + 3000, NULL
      FROM r ORDER BY i`);
    const insertCharges = db.prepare(`
      INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms)
      SELECT 0, 'charge', -amount_cents, id, created_ms FROM offsets WHERE seq >= ? ORDER BY seq`);
    const totals = db.prepare('SELECT count(*) AS n, sum(kg) AS kg, sum(amount_cents) AS cents FROM offsets WHERE seq >= ?');
    db.exec('BEGIN');
    {
      for (let from = 0; from < count; from += batch) {
        insertOffsets.run({ from, to: Math.min(count, from + batch), start, rate: account.rate });
      }
      const t = totals.get(firstSeq);
      if (t.n !== count) throw new Error(`seeded ${t.n} offsets, expected ${count}`);
      db.prepare("INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES (0, 'topup', ?, NULL, ?)").run(
        t.cents,
        start - 1,
      );
      insertCharges.run(firstSeq);
      db.prepare('UPDATE impact SET placed_kg = placed_kg + ?, offsets = offsets + ? WHERE livemode = 0').run(t.kg, t.n);
      // The per-day totals (the developer page's chart), as the model keeps them.
      db.exec(`DELETE FROM impact_daily WHERE livemode = 0;
        INSERT INTO impact_daily (livemode, day, kg, offsets)
        SELECT 0, created_ms / 86400000, SUM(kg), COUNT(*) FROM offsets WHERE livemode = 0 AND status != 'refunded' GROUP BY created_ms / 86400000`);
    }
    db.exec('COMMIT');
    const pick = db.prepare('SELECT id FROM offsets WHERE seq = ?');
    const ids = {
      oldest: pick.get(firstSeq).id,
      middle: pick.get(firstSeq + Math.floor(count / 2)).id,
      newest: pick.get(firstSeq + count - 1).id,
    };
    db.exec('PRAGMA locking_mode = NORMAL; PRAGMA journal_mode = WAL');
    return ids;
  } finally {
    db.close();
  }
}
