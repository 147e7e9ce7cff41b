import type { Mode } from '../api/types.js';
import {
  type AccountRecord,
  hashId,
  JOURNAL_EMPTIED_META,
  type LedgerStore,
  type LedgerTx,
  type NewPurchase,
  type OffsetRecord,
  type PurchaseFacts,
} from '../store/port.js';
import { checkPermission, checkStanding } from './access.js';
import { ApiError } from './errors.js';
import { newCertificateId, newOffsetId } from './keys.js';
import { mustHaveAccount } from './lifecycle.js';
import { decidePurchase, replayed } from './purchase.js';
import type { PurchaseRequest } from './validation.js';

/**
 * Purchases are written in batches, as TigerBeetle batches transfers: every purchase that arrives
 * while one transaction is under way waits for it, and the next transaction takes them all. Each
 * mode's balance is one row, so purchases of a mode are ordered one after another anyway; a batch
 * pays for that order (the writer lock, the reads, the commit) once instead of once a purchase.
 * The rule stays what it is, a plain function (purchase.ts), applied to each purchase in turn
 * against the facts as the ones before it in the batch left them. Each purchase is answered only
 * once its batch has committed; one that the rule refuses (402, 409, 401) refuses that purchase
 * alone. On SQLite, where a transaction costs microseconds, the first purchase of a quiet moment
 * runs at once as a batch of one.
 */

export interface PurchaseJob {
  mode: Mode;
  request: PurchaseRequest;
  idempotencyKey: string | null;
  /** The SHA-256 of the caller's API key: the key is checked again inside the write. */
  keyHash: Uint8Array;
  /** The most it may cost (Carbon-Max-Amount-Cents), or null. */
  maxAmount: number | null;
}

export interface PurchaseOutcome {
  offset: OffsetRecord;
  replayed: boolean;
  /** Model time of the batch's transaction. */
  now: number;
  /** The journal's emptied mark the batch's transaction read (journal-types.ts, writtenSince). */
  emptied: number;
}

/** The most purchases one transaction takes; more wait for the next. */
const MAX_BATCH = 512;

interface Waiting {
  job: PurchaseJob;
  resolve: (outcome: PurchaseOutcome) => void;
  reject: (err: unknown) => void;
}

export class PurchaseQueue {
  private waiting: Waiting[] = [];
  private busy = false;

  constructor(
    private readonly store: LedgerStore,
    /** Model time for the account, read inside the transaction. */
    private readonly now: (account: AccountRecord) => number,
  ) {}

  submit(job: PurchaseJob): Promise<PurchaseOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      try {
        const outcomes = await this.store.transaction((tx) =>
          writeBatch(
            tx,
            batch.map((w) => w.job),
            this.now,
            this.store.label,
          ),
        );
        for (const [i, outcome] of outcomes.entries()) {
          if (outcome instanceof ApiError) batch[i]!.reject(outcome);
          else batch[i]!.resolve(outcome);
        }
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.busy = false;
  }
}

/** One transaction's purchases, mode by mode: the facts read once, the rule applied in order, the offsets written at once. */
async function writeBatch(
  tx: LedgerTx,
  jobs: PurchaseJob[],
  modelNow: (account: AccountRecord) => number,
  label: string,
): Promise<Array<PurchaseOutcome | ApiError>> {
  const outcomes: Array<PurchaseOutcome | ApiError> = new Array(jobs.length);
  let now: number | undefined;
  let emptied = 0;
  for (const mode of ['test', 'live'] as const) {
    const slots = jobs.flatMap((job, i) => (job.mode === mode ? [i] : []));
    if (slots.length === 0) continue;
    const mine = slots.map((i) => jobs[i]!);
    const facts = await tx.purchaseFacts(
      mode,
      mine.flatMap((j) => (j.idempotencyKey === null ? [] : [j.idempotencyKey])),
      mine.map((j) => j.keyHash),
    );
    const account = mustHaveAccount(facts.account, label);
    if (now === undefined) {
      // Taken inside the transaction, after the write lock: `created` follows the list's order.
      now = modelNow(account);
      emptied = Number((await tx.meta(JOURNAL_EMPTIED_META)) ?? 0);
      // Recording due placements first keeps the due set small; it does not change the facts.
      await tx.placeDue(now);
    }
    const { writes, written, replays } = decideAll(mode, mine, slots, facts, account, now, outcomes);
    const rows = await tx.insertOffsets(writes);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const [k, offset] of rows.entries()) outcomes[written[k]!] = { offset, replayed: false, now: now!, emptied };
    for (const [slot, id] of replays) {
      outcomes[slot] = { offset: replayed(byId.get(id) ?? (await tx.offset(id)), id), replayed: true, now, emptied };
    }
  }
  return outcomes;
}

/**
 * The rule applied to each purchase of one mode in turn, against the balance the ones before it
 * left: what to write (and for which slot), which slots replay which offset; refusals go into
 * `outcomes` at their slot.
 */
function decideAll(
  mode: Mode,
  mine: PurchaseJob[],
  slots: number[],
  facts: PurchaseFacts,
  account: AccountRecord,
  now: number,
  outcomes: Array<PurchaseOutcome | ApiError>,
): { writes: NewPurchase[]; written: number[]; replays: Map<number, string> } {
  let available = facts.available;
  let newestCreated = facts.newestCreated;
  const writes: NewPurchase[] = [];
  const written: number[] = [];
  const replays = new Map<number, string>();
  for (const [n, job] of mine.entries()) {
    const slot = slots[n]!;
    try {
      const key = facts.keys.get(hashId(job.keyHash));
      if (key === undefined) throw new ApiError('api_key_invalid', 'Invalid API key provided.');
      checkStanding(key, account);
      checkPermission(key, 'purchase');
      const prior = job.idempotencyKey === null ? undefined : facts.priors.get(job.idempotencyKey);
      const decision = decidePurchase(
        { account, available, prior, newestCreated },
        { mode, request: job.request, idempotencyKey: job.idempotencyKey, now, maxAmount: job.maxAmount },
        { offset: newOffsetId, certificate: newCertificateId },
      );
      if (decision.kind === 'replay') {
        replays.set(slot, decision.offsetId);
        continue;
      }
      const { offset } = decision;
      available -= offset.amount_cents;
      newestCreated = offset.created_ms;
      const idempotency = job.idempotencyKey === null ? null : { key: job.idempotencyKey, fingerprint: decision.fingerprint };
      // A later purchase of this batch under the same key is a replay of this one (or a 409).
      if (idempotency !== null) {
        facts.priors.set(idempotency.key, { fingerprint: idempotency.fingerprint, offset_id: offset.id, created_ms: offset.created_ms });
      }
      writes.push({ offset, idempotency });
      written.push(slot);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      outcomes[slot] = err;
    }
  }
  return { writes, written, replays };
}
