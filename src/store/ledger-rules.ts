import { LIMITS } from '../api/types.js';

/**
 * The rules every write keeps across the ledger's rows, as SQL both stores run (SQLite and
 * PostgreSQL read the same text): what a serial history of purchases, top-ups, refunds, reviews
 * and placements leaves, and nothing else. A snapshot's load checks them inside its transaction
 * (a file that breaks one is refused, the ledger as it was: docs/snapshots.md), and the
 * reliability suites check them after each round (test/support/ledger-check.ts).
 *
 * - an offset: a mode, 1 to 1,000,000 kg at a rate a command could set, charged kg × rate
 *   millicents rounded up to whole cents (pricing.ts); bought by kg (that kg, at most 5,000,000
 *   cents) or by amount (the most whole kg it buys); its times and review as its status has them;
 * - an entry: a top-up (no offset, above 0), or an offset's charge (−its amount) or refund (+its
 *   amount, once it is refunded), of the offset's mode; each offset charged once, refunded once
 *   exactly when it is refunded;
 * - each mode's balance = the sum of its entries; its impact and per-day impact = the sums over
 *   its offsets not refunded (by status; by UTC day of created_ms);
 * - an Idempotency-Key names one offset of its mode, and no offset has two; the request it
 *   recorded (its fingerprint, `[kg, amount_cents, reference]`: purchase.ts) is the one that
 *   offset was bought with, so the same body replays it and no other does.
 *
 * Each rule is one SELECT of one text column: the first row that breaks it, said for a person
 * (`offset off_…: …`), or no row. Arithmetic stays below 2^53: kg and the rate are bounded
 * before they are multiplied (a CASE tries its branches in order on both stores).
 */

const MODES = "(SELECT 0 AS livemode, 'test' AS name UNION ALL SELECT 1, 'live')";
const NOT_A_MODE = (column: string) => `${column} NOT IN (0, 1)`;
const MODE_PROBLEM = (column: string) => `'livemode ' || ${column} || ' is neither 0 (test) nor 1 (live)'`;
/** The charge for kg at the rate, in whole cents rounded up (pricing.ts, chargeCents). */
const CHARGE = '((kg * rate + 999) / 1000)';
/** By amount, kg is the most whole kg the amount buys, at most kgMax (pricing.ts, kgForAmount). */
const MOST_KG = `kg * rate <= req_amount_cents * 1000 AND (kg = ${LIMITS.kgMax} OR (kg + 1) * rate > req_amount_cents * 1000)`;

const OFFSET = `CASE
  WHEN ${NOT_A_MODE('livemode')} THEN ${MODE_PROBLEM('livemode')}
  WHEN kg < ${LIMITS.kgMin} OR kg > ${LIMITS.kgMax} THEN 'kg ' || kg || ' is not ${LIMITS.kgMin} to ${LIMITS.kgMax}'
  WHEN rate < 1 OR rate > ${LIMITS.rateMax} THEN 'rate ' || rate || ' is not 1 to ${LIMITS.rateMax} millicents a kg'
  WHEN amount_cents <> ${CHARGE} THEN 'amount_cents ' || amount_cents || ' is not ' || kg || ' kg at the rate it was bought at ('
    || rate || ' millicents a kg: ' || ${CHARGE} || ' cents)'
  WHEN (req_kg IS NULL) = (req_amount_cents IS NULL) THEN 'it was bought by kg or by amount: one of req_kg and req_amount_cents, not '
    || CASE WHEN req_kg IS NULL THEN 'neither' ELSE 'both' END
  WHEN req_kg IS NOT NULL AND req_kg <> kg THEN 'kg ' || kg || ' is not the ' || req_kg || ' kg bought (req_kg)'
  WHEN amount_cents > ${LIMITS.amountCentsMax} THEN 'amount_cents ' || amount_cents || ' is past ${LIMITS.amountCentsMax} cents a purchase'
  WHEN req_amount_cents < ${LIMITS.amountCentsMin} OR req_amount_cents > ${LIMITS.amountCentsMax} THEN 'req_amount_cents ' || req_amount_cents
    || ' is not ${LIMITS.amountCentsMin} to ${LIMITS.amountCentsMax}'
  WHEN req_amount_cents IS NOT NULL AND NOT (${MOST_KG}) THEN 'kg ' || kg || ' is not the most ' || req_amount_cents
    || ' cents (req_amount_cents) buy at ' || rate || ' millicents a kg'
  WHEN created_ms < 0 THEN 'created_ms ' || created_ms || ' is before 1970'
  WHEN review NOT IN ('pending', 'approved', 'rejected') THEN 'review ''' || review || ''' is none the model makes (pending, approved, rejected)'
  WHEN review IS NOT NULL AND livemode = 0 THEN 'a test offset is never reviewed (review ' || review || ')'
  WHEN certificate_id IS NOT NULL AND livemode = 0 THEN 'a test offset has no certificate (' || certificate_id || ')'
  WHEN status = 'processing' AND review = 'pending' AND settle_at_ms IS NOT NULL THEN 'waiting for review, it has a settle time'
  WHEN status = 'processing' AND review IS NULL AND settle_at_ms IS NULL THEN 'processing, it has no settle time'
  WHEN status = 'processing' AND placed_ms IS NOT NULL THEN 'processing, it has a time it was placed'
  WHEN status = 'processing' AND review <> 'pending' THEN 'processing, its review is ' || review
  WHEN status = 'placed' AND (placed_ms IS NULL OR settle_at_ms IS NOT NULL) THEN 'placed, it has no time it was placed, or a settle time'
  WHEN status = 'placed' AND review <> 'approved' THEN 'placed, its review is ' || review
  WHEN status = 'refunded' AND (placed_ms IS NOT NULL OR settle_at_ms IS NOT NULL) THEN 'refunded, it has a settle time or a time it was placed'
  WHEN status = 'refunded' AND review = 'approved' THEN 'refunded, its review is approved'
END`;

/** An entry alone; what it owes its offset is the offset's rule (OFFSET_ENTRIES). */
const ENTRY = `CASE
  WHEN ${NOT_A_MODE('livemode')} THEN ${MODE_PROBLEM('livemode')}
  WHEN kind = 'topup' AND offset_id IS NOT NULL THEN 'a top-up names an offset (' || offset_id || ')'
  WHEN kind = 'topup' AND amount_cents < 1 THEN 'a top-up is 1 cent or more'
  WHEN kind <> 'topup' AND offset_id IS NULL THEN 'it names no offset'
END`;

/**
 * A text column as a JSON string (`"a\"b"`; NULL as `null`), as each store writes JSON: the only
 * words of the rules the two do not share. Both escape as JSON.stringify does (`\"`, `\\`, `\n`,
 * `\u001b`), which wrote the fingerprints.
 */
export type JsonText = (column: string) => string;
export const SQLITE_JSON_TEXT: JsonText = (column) => `json_quote(${column})`;
export const POSTGRES_JSON_TEXT: JsonText = (column) => `coalesce(to_json(${column})::text, 'null')`;

/**
 * Per offset id, the offset and what names it (its entries, its Idempotency-Key) in one aggregate
 * over the three tables, no join: a join planned on tables just loaded (no statistics yet) looked
 * up each row's offset one by one, or every offset's entries. The request an offset was bought
 * with and the one its key recorded come as the same JSON text (purchase.ts, fingerprint), to be compared.
 */
const NAMED = (json: JsonText) => `SELECT id, seq, livemode, status, amount_cents, 1 AS n, 0 AS charges, 0 AS charged, 0 AS refunds,
    0 AS refunded, 0 AS keys, NULL AS key, NULL AS recorded, '[' || coalesce(CAST(req_kg AS TEXT), 'null') || ','
    || coalesce(CAST(req_amount_cents AS TEXT), 'null') || ',' || ${json('reference')} || ']' AS bought FROM offsets
  UNION ALL SELECT offset_id, NULL, livemode, NULL, NULL, 0, CASE WHEN kind = 'charge' THEN 1 ELSE 0 END,
    CASE WHEN kind = 'charge' THEN amount_cents ELSE 0 END, CASE WHEN kind = 'refund' THEN 1 ELSE 0 END,
    CASE WHEN kind = 'refund' THEN amount_cents ELSE 0 END, 0, NULL, NULL, NULL FROM entries WHERE offset_id IS NOT NULL
  UNION ALL SELECT offset_id, NULL, livemode, NULL, NULL, 0, 0, 0, 0, 0, 1, key, fingerprint, NULL FROM idempotency`;
const OFFSET_ENTRIES = `CASE
  WHEN sum(n) = 0 AND sum(keys) > 0 THEN 'Idempotency-Key ' || max(key) || ': its offset ' || id || ' is not in the ledger'
  WHEN sum(n) = 0 THEN 'an entry names offset ' || id || ', which is not in the ledger'
  WHEN min(livemode) <> max(livemode) THEN 'offset ' || id || ': an entry or Idempotency-Key of the other mode names it'
  WHEN sum(charges) <> 1 OR sum(refunds) <> CASE WHEN max(status) = 'refunded' THEN 1 ELSE 0 END THEN 'offset ' || id || ' (' || max(status)
    || '): ' || sum(charges) || ' charges and ' || sum(refunds) || ' refunds, not '
    || CASE WHEN max(status) = 'refunded' THEN 'one of each' ELSE 'one charge and no refund' END
  WHEN sum(charged) <> -max(amount_cents) THEN 'offset ' || id || ': its charge is ' || sum(charged) || ' cents, not -' || max(amount_cents)
  WHEN sum(refunded) <> CASE WHEN max(status) = 'refunded' THEN max(amount_cents) ELSE 0 END THEN 'offset ' || id || ': its refund is '
    || sum(refunded) || ' cents, not ' || max(amount_cents)
  WHEN sum(keys) > 1 THEN 'offset ' || id || ' is named by ' || sum(keys) || ' Idempotency-Keys'
  WHEN sum(keys) = 1 AND max(recorded) <> max(bought) THEN 'Idempotency-Key ' || max(key)
    || ': the request it recorded is not the one offset ' || id || ' was bought with'
END`;

/** Kept kg and offsets per mode, by status, from the offsets themselves. */
const SUMS = `SELECT livemode, sum(CASE WHEN status = 'placed' THEN kg ELSE 0 END) AS placed_kg,
  sum(CASE WHEN status = 'processing' THEN kg ELSE 0 END) AS processing_kg, sum(CASE WHEN status = 'refunded' THEN 0 ELSE 1 END) AS offsets
  FROM offsets GROUP BY livemode`;
const DAILY = `SELECT livemode, created_ms / 86400000 AS day, sum(kg) AS kg, count(*) AS offsets
  FROM offsets WHERE status <> 'refunded' GROUP BY livemode, created_ms / 86400000`;
/** A day's totals against its offsets'; `row` is the side that has the row (d, the stored; s, the summed). */
const DAY_PROBLEM = (row: 'd' | 's') =>
  `'the ' || CASE ${row}.livemode WHEN 1 THEN 'live' ELSE 'test' END || ' impact of day ' || ${row}.day || ' (' || coalesce(d.kg, 0)
  || ' kg, ' || coalesce(d.offsets, 0) || ' offsets) is not its offsets'' (' || coalesce(s.kg, 0) || ' kg, ' || coalesce(s.offsets, 0) || ')'`;

/** The rules, in the order they are checked, each one SELECT; `json` is how the store writes a JSON string. */
export const ledgerRules = (json: JsonText): readonly string[] => [
  `SELECT problem FROM (${['balances', 'impact', 'impact_daily', 'idempotency', 'api_keys']
    .map((t) => `SELECT '${t}: ' || ${MODE_PROBLEM('livemode')} AS problem FROM ${t} WHERE ${NOT_A_MODE('livemode')}`)
    .join(' UNION ALL ')}) x LIMIT 1`,
  `SELECT 'offset ' || id || ': ' || problem AS problem FROM (SELECT seq, id, ${OFFSET} AS problem FROM offsets) x
   WHERE problem IS NOT NULL ORDER BY seq LIMIT 1`,
  `SELECT 'entry ' || seq || ' (' || kind || ' of ' || amount_cents || ' cents): ' || problem AS problem
   FROM (SELECT seq, kind, amount_cents, ${ENTRY} AS problem FROM entries) x WHERE problem IS NOT NULL ORDER BY seq LIMIT 1`,
  `SELECT problem FROM (SELECT min(seq) AS seq, ${OFFSET_ENTRIES} AS problem FROM (${NAMED(json)}) x GROUP BY id) y
   WHERE problem IS NOT NULL ORDER BY seq LIMIT 1`,
  `SELECT CASE WHEN b.livemode IS NULL THEN 'the ' || m.name || ' balance is missing'
     ELSE 'the ' || m.name || ' balance, ' || b.available_cents || ' cents, is not the sum of its entries (' || coalesce(s.total, 0) || ' cents)'
     END AS problem
   FROM ${MODES} m LEFT JOIN balances b ON b.livemode = m.livemode
     LEFT JOIN (SELECT livemode, sum(amount_cents) AS total FROM entries GROUP BY livemode) s ON s.livemode = m.livemode
   WHERE b.livemode IS NULL OR b.available_cents <> coalesce(s.total, 0) ORDER BY m.livemode LIMIT 1`,
  `SELECT CASE WHEN i.livemode IS NULL THEN 'the ' || m.name || ' impact is missing'
     ELSE 'the ' || m.name || ' impact (' || i.placed_kg || ' kg placed, ' || i.processing_kg || ' kg processing, ' || i.offsets
       || ' offsets) is not its offsets'' (' || coalesce(s.placed_kg, 0) || ', ' || coalesce(s.processing_kg, 0) || ', '
       || coalesce(s.offsets, 0) || ')' END AS problem
   FROM ${MODES} m LEFT JOIN impact i ON i.livemode = m.livemode LEFT JOIN (${SUMS}) s ON s.livemode = m.livemode
   WHERE i.livemode IS NULL OR i.placed_kg <> coalesce(s.placed_kg, 0) OR i.processing_kg <> coalesce(s.processing_kg, 0)
     OR i.offsets <> coalesce(s.offsets, 0)
   ORDER BY m.livemode LIMIT 1`,
  `WITH s AS (${DAILY}) SELECT problem FROM (
     SELECT d.livemode, d.day, ${DAY_PROBLEM('d')} AS problem FROM impact_daily d
       LEFT JOIN s ON s.livemode = d.livemode AND s.day = d.day WHERE d.kg <> coalesce(s.kg, 0) OR d.offsets <> coalesce(s.offsets, 0)
     UNION ALL
     SELECT s.livemode, s.day, ${DAY_PROBLEM('s')} AS problem FROM s
       LEFT JOIN impact_daily d ON d.livemode = s.livemode AND d.day = s.day WHERE d.livemode IS NULL
   ) x ORDER BY livemode, day LIMIT 1`,
];

/**
 * The first rule the ledger breaks, said for a person; null when it keeps them all. `first` runs
 * one rule's SELECT and gives its `problem` (undefined when no row).
 */
export async function ledgerProblem(
  json: JsonText,
  first: (sql: string) => Promise<string | null | undefined> | string | null | undefined,
): Promise<string | null> {
  for (const sql of ledgerRules(json)) {
    const problem = await first(sql);
    if (problem !== undefined && problem !== null) return problem;
  }
  return null;
}
