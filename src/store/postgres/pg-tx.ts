import type { Mode } from '../../api/types.js';
import { DAY_MS } from '../periods.js';
import type * as port from '../port.js';
import { hashId } from '../port.js';
import { livemodeOf } from '../tables.js';
import { KEEP_JOURNAL_SEQ } from './pg-journal.js';
import { holdable, PgReads } from './pg-reads.js';
import { importLedger, overWholeLedger, retireTexts } from './pg-snapshot.js';

/** The writes of one transaction, on one connection. */
export class PgTx extends PgReads implements port.LedgerTx {
  /** What the store's read cache holds (the account, the balances, the named values; the keys) was written. */
  touched = false;
  touchedKeys = false;

  /** Everything the purchase rule reads for a batch, in one statement (the writer lock is held: see transaction()). */
  async purchaseFacts(mode: Mode, idempotencyKeys: string[], keyHashes: Uint8Array[]): Promise<port.PurchaseFacts> {
    const row = (
      await this.q.query<
        port.AccountRecord & {
          available: number | null;
          newest: number | null;
          priors: Array<port.IdempotencyRecord & { key: string }>;
          keys: Array<port.KeyRecord & { hash: string }>;
        }
      >(
        `SELECT a.status, a.rate, a.review_limit_cents, a.clock_offset_ms, a.rate_limit_requests, a.rate_limit_window_ms,
                (SELECT available_cents FROM balances WHERE livemode = $1) AS available,
                (SELECT created_ms FROM offsets WHERE livemode = $1 ORDER BY seq DESC LIMIT 1) AS newest,
                (SELECT coalesce(json_agg(json_build_object('key', key, 'fingerprint', fingerprint, 'offset_id', offset_id, 'created_ms', created_ms)), '[]')
                   FROM idempotency WHERE livemode = $1 AND key = ANY($2::text[])) AS priors,
                (SELECT coalesce(json_agg(json_build_object('id', id, 'hash', encode(hash, 'base64'), 'mode', CASE livemode WHEN 1 THEN 'live' ELSE 'test' END,
                   'permission', permission, 'last4', last4, 'created_ms', created_ms, 'revoked_ms', revoked_ms)), '[]')
                   FROM api_keys WHERE hash = ANY($3::bytea[])) AS keys
         FROM account a WHERE a.id = 1`,
        [livemodeOf(mode), idempotencyKeys, keyHashes.map((h) => Buffer.from(h))],
      )
    ).rows[0];
    if (row === undefined || row.available === null)
      return { account: undefined, available: 0, priors: new Map(), newestCreated: null, keys: new Map() };
    const { available, newest, priors, keys, ...account } = row;
    const keyRecords = keys.map((k) => ({ ...k, hash: new Uint8Array(Buffer.from(k.hash, 'base64')) }));
    return {
      account,
      available,
      priors: new Map(priors.map(({ key, ...record }) => [key, record])),
      newestCreated: newest,
      keys: new Map(keyRecords.map((k) => [hashId(k.hash), k])),
    };
  }

  async createAccount(account: port.AccountRecord, now: number): Promise<void> {
    this.touched = true;
    this.touchedKeys = true;
    await this.q.query(
      `INSERT INTO account (id, status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms, created_ms)
       VALUES (1, $1, $2, $3, $4, $5, $6, $7)`,
      [
        account.status,
        account.rate,
        account.review_limit_cents,
        account.clock_offset_ms,
        account.rate_limit_requests,
        account.rate_limit_window_ms,
        now,
      ],
    );
    await this.q.query('INSERT INTO balances VALUES (0, 0), (1, 0)');
    await this.q.query('INSERT INTO impact VALUES (0, 0, 0, 0), (1, 0, 0, 0)');
  }

  async updateAccount(patch: Partial<port.AccountRecord>): Promise<port.AccountRecord> {
    this.touched = true;
    const columns = (Object.keys(patch) as Array<keyof port.AccountRecord>).filter((k) =>
      ['status', 'rate', 'review_limit_cents', 'clock_offset_ms', 'rate_limit_requests', 'rate_limit_window_ms'].includes(k),
    );
    if (columns.length > 0) {
      await this.q.query(
        `UPDATE account SET ${columns.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE id = 1`,
        columns.map((c) => patch[c]),
      );
    }
    return (await this.account())!;
  }

  async moveBalance(mode: Mode, cents: number, kind: 'topup' | 'charge' | 'refund', offsetId: string | null, now: number): Promise<number> {
    this.touched = true;
    await this.q.query('INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES ($1, $2, $3, $4, $5)', [
      livemodeOf(mode),
      kind,
      cents,
      offsetId,
      now,
    ]);
    const r = await this.q.query<{ available_cents: number }>(
      'UPDATE balances SET available_cents = available_cents + $1 WHERE livemode = $2 RETURNING available_cents',
      [cents, livemodeOf(mode)],
    );
    return r.rows[0]?.available_cents ?? 0;
  }

  /** The batch in one statement: its offsets, charges, balance, totals, days' totals and keys. */
  async insertOffsets(purchases: port.NewPurchase[]): Promise<port.OffsetRecord[]> {
    if (purchases.length === 0) return [];
    this.touched = true;
    const column = <T>(pick: (p: port.NewPurchase) => T): T[] => purchases.map(pick);
    const r = await this.q.query<{ id: string; seq: number }>(
      `WITH r AS (
         SELECT * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::bigint[],
                              $10::bigint[], $11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[])
           WITH ORDINALITY AS r(id, kg, amount_cents, rate, req_kg, req_amount_cents, reference, created_ms, settle_at_ms, review,
                                certificate_id, day, ikey, fingerprint, n)),
       o AS (
         INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference, created_ms, settle_at_ms, review, certificate_id)
         SELECT id, $1, 'processing', kg, amount_cents, rate, req_kg, req_amount_cents, reference, created_ms, settle_at_ms, review, certificate_id
         FROM r ORDER BY n RETURNING id, seq),
       e AS (INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) SELECT $1, 'charge', -amount_cents, id, created_ms FROM r ORDER BY n),
       b AS (UPDATE balances SET available_cents = available_cents - (SELECT sum(amount_cents) FROM r) WHERE livemode = $1),
       i AS (UPDATE impact SET processing_kg = processing_kg + (SELECT sum(kg) FROM r), offsets = offsets + (SELECT count(*) FROM r) WHERE livemode = $1),
       d AS (INSERT INTO impact_daily AS d (livemode, day, kg, offsets) SELECT $1, day, sum(kg), count(*) FROM r GROUP BY day
             ON CONFLICT (livemode, day) DO UPDATE SET kg = d.kg + excluded.kg, offsets = d.offsets + excluded.offsets),
       k AS (INSERT INTO idempotency (livemode, key, fingerprint, offset_id, created_ms) SELECT $1, ikey, fingerprint, id, created_ms FROM r WHERE ikey IS NOT NULL)
       SELECT id, seq FROM o`,
      [
        livemodeOf(purchases[0]!.offset.mode),
        column((p) => p.offset.id),
        column((p) => p.offset.kg),
        column((p) => p.offset.amount_cents),
        column((p) => p.offset.rate),
        column((p) => p.offset.req_kg),
        column((p) => p.offset.req_amount_cents),
        column((p) => p.offset.reference),
        column((p) => p.offset.created_ms),
        column((p) => p.offset.settle_at_ms),
        column((p) => p.offset.review),
        column((p) => p.offset.certificate_id),
        column((p) => Math.floor(p.offset.created_ms / DAY_MS)),
        column((p) => p.idempotency?.key ?? null),
        column((p) => p.idempotency?.fingerprint ?? null),
      ],
    );
    const seqs = new Map(r.rows.map((row) => [row.id, row.seq]));
    return purchases.map(({ offset }) => ({ ...offset, seq: seqs.get(offset.id)! }));
  }

  async placeDue(now: number): Promise<void> {
    await this.q.query(
      `WITH placed AS (
         UPDATE offsets SET status = 'placed', placed_ms = settle_at_ms, settle_at_ms = NULL
         WHERE status = 'processing' AND settle_at_ms <= $1 RETURNING livemode, kg),
       sums AS (SELECT livemode, SUM(kg) AS kg FROM placed GROUP BY livemode)
       UPDATE impact SET processing_kg = impact.processing_kg - sums.kg, placed_kg = impact.placed_kg + sums.kg
       FROM sums WHERE impact.livemode = sums.livemode`,
      [now],
    );
  }

  async place(offset: port.OffsetRecord, now: number, review: port.ReviewState | null): Promise<port.OffsetRecord> {
    await this.q.query(
      // Live offsets carry their certificate id from the purchase (purchase.ts).
      "UPDATE offsets SET status = 'placed', review = coalesce($1, review), placed_ms = $2, settle_at_ms = NULL WHERE id = $3 AND status = 'processing'",
      [review, now, offset.id],
    );
    await this.q.query('UPDATE impact SET processing_kg = processing_kg - $1, placed_kg = placed_kg + $1 WHERE livemode = $2', [
      offset.kg,
      livemodeOf(offset.mode),
    ]);
    return (await this.offset(offset.id))!;
  }

  async markRefunded(offset: port.OffsetRecord, review: port.ReviewState | null): Promise<port.OffsetRecord> {
    const livemode = livemodeOf(offset.mode);
    await this.q.query(
      "UPDATE offsets SET status = 'refunded', settle_at_ms = NULL, review = coalesce($1, review) WHERE id = $2 AND status = 'processing'",
      [review, offset.id],
    );
    await this.q.query('UPDATE impact SET processing_kg = processing_kg - $1, offsets = offsets - 1 WHERE livemode = $2', [
      offset.kg,
      livemode,
    ]);
    await this.q.query('UPDATE impact_daily SET kg = kg - $1, offsets = offsets - 1 WHERE livemode = $2 AND day = $3', [
      offset.kg,
      livemode,
      Math.floor(offset.created_ms / DAY_MS),
    ]);
    return (await this.offset(offset.id))!;
  }

  async insertKey(key: port.KeyRecord, secret: string, defaultFor: port.DefaultKey | null): Promise<void> {
    this.touched = true;
    this.touchedKeys = true;
    await this.q.query('INSERT INTO api_keys (id, hash, livemode, permission, last4, created_ms) VALUES ($1, $2, $3, $4, $5, $6)', [
      key.id,
      Buffer.from(key.hash),
      livemodeOf(key.mode),
      key.permission,
      key.last4,
      key.created_ms,
    ]);
    // The first key of a role becomes its default; a later one of the same role is just kept.
    await this.q.query(
      `INSERT INTO key_vault (id, secret, default_for)
       VALUES ($1, $2, CASE WHEN $3::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM key_vault WHERE default_for = $3) THEN $3 END)`,
      [key.id, secret, defaultFor],
    );
  }

  async revokeKey(id: string, now: number): Promise<boolean> {
    if (!holdable([id])) return false;
    this.touched = true;
    this.touchedKeys = true;
    return (
      ((await this.q.query('UPDATE api_keys SET revoked_ms = $1 WHERE id = $2 AND revoked_ms IS NULL', [now, id])).rowCount ?? 0) === 1
    );
  }

  async putMeta(name: string, value: string | null): Promise<void> {
    // The store keeps named values too: moving the version tells every instance to read them again.
    this.touched = true;
    if (value === null) await this.q.query('DELETE FROM meta WHERE name = $1', [name]);
    else
      await this.q.query('INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [
        name,
        value,
      ]);
  }

  async dropMetas(prefix: string, expiredBy?: number): Promise<void> {
    this.touched = true;
    // A prefix compared as text (LIKE would read the `_` in the names as a wildcard); the expiry is
    // the value's leading digits (`<expiry>` and `<expiry>.<rest>` alike).
    await this.q.query(
      `DELETE FROM meta WHERE left(name, length($1::text)) = $1::text
       AND ($2::bigint IS NULL OR substring(value from '^[0-9]{1,18}')::bigint <= $2::bigint)`,
      [prefix, expiredBy ?? null],
    );
  }

  async importLedger(rows: port.LedgerImport, metaNames: readonly string[]): Promise<void> {
    this.touched = true;
    this.touchedKeys = true;
    await importLedger(this.q, rows, metaNames);
  }

  async ledgerProblem(): Promise<string | null> {
    // Loaded on a snapshot's load only: no other command reads the rules.
    const { ledgerProblem, POSTGRES_JSON_TEXT } = await import('../ledger-rules.js');
    // Each rule reads every row of its tables: a deadline of its own, as emptying the ledger has (pg-snapshot.ts).
    return ledgerProblem(POSTGRES_JSON_TEXT, async (sql) => (await overWholeLedger<{ problem: string }>(this.q, sql))[0]?.rows[0]?.problem);
  }

  /**
   * The key vault keeps its texts, retired (port.ts: a snapshot loaded later brings their keys
   * back); which keys were the starting ones is forgotten.
   *
   * DELETE, not TRUNCATE: TRUNCATE takes an ACCESS EXCLUSIVE lock on each table in turn, which a
   * read holding one table while it waits for the next would deadlock with, and it is not MVCC-safe.
   * Writers are held off by the writer lock this transaction holds; the journal's, which write
   * outside it (pg-journal.ts), by the journal's lock, taken as a load takes it (pg-snapshot.ts)
   * and before the snapshot (the first statement of the transaction after the writer lock): a
   * batch under way is waited for and emptied with the rest (the snapshot sees it), one that comes
   * later waits and numbers on. Taken after the snapshot, a batch committed meanwhile stayed.
   */
  async clear(): Promise<void> {
    this.touched = true;
    this.touchedKeys = true;
    await this.q.query(`LOCK TABLE journal IN SHARE ROW EXCLUSIVE MODE; ${KEEP_JOURNAL_SEQ}`);
    // Emptying the whole ledger takes as long as it is large: a deadline of its own, as a snapshot's load has (pg-snapshot.ts).
    await overWholeLedger(
      this.q,
      'DELETE FROM idempotency; DELETE FROM entries; DELETE FROM offsets; DELETE FROM impact; DELETE FROM impact_daily; DELETE FROM balances; ' +
        'UPDATE key_vault SET default_for = NULL; DELETE FROM key_vault WHERE secret IS NULL; DELETE FROM api_keys; DELETE FROM rate_windows; DELETE FROM journal; DELETE FROM account',
    );
    await retireTexts(this.q);
  }

  /** COMMIT, after moving the ledger's version when the read cache's part changed (one round trip). */
  commitStatement(): string {
    if (this.touchedKeys) return 'UPDATE ledger_version SET version = version + 1, keys_version = keys_version + 1; COMMIT';
    return this.touched ? 'UPDATE ledger_version SET version = version + 1; COMMIT' : 'COMMIT';
  }
}
