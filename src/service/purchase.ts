import type { Mode } from '../api/types.js';
import type { AccountRecord, IdempotencyRecord, NewOffset, OffsetRecord } from '../store/port.js';
import { ApiError } from './errors.js';
import { settleAtFor } from './lifecycle.js';
import { price } from './pricing.js';
import type { PurchaseRequest } from './validation.js';

/**
 * The purchase rule (spec part 4, POST /offsets), as a plain function of what the ledger holds
 * and what was asked: replay or 409 on a known Idempotency-Key, price at the account's rate,
 * refuse when the balance falls short, hold for review above the limit, else buy. The store runs
 * it inside the purchase's transaction and writes what it decides; it touches nothing itself.
 */

/** What the ledger holds that the rule reads (for a batch, the store reads it in one call: `purchaseFacts`). */
export interface PurchaseState {
  account: AccountRecord;
  /** The balance of the mode, as the purchases before this one left it. */
  available: number;
  /** The Idempotency-Key's record in this mode, if the key was given and used before. */
  prior: IdempotencyRecord | undefined;
  /** created_ms of the newest offset of the mode. */
  newestCreated: number | null;
}

export interface PurchaseAsk {
  mode: Mode;
  request: PurchaseRequest;
  idempotencyKey: string | null;
  /** Model time, read inside the transaction (after the write lock is held). */
  now: number;
  /** The most it may cost (Carbon-Max-Amount-Cents), or null. */
  maxAmount: number | null;
}

export type PurchaseDecision = { kind: 'replay'; offsetId: string } | { kind: 'buy'; offset: NewOffset; fingerprint: string };

/** What makes two requests under one Idempotency-Key "the same body". */
export function fingerprint(request: PurchaseRequest): string {
  return JSON.stringify([request.kg ?? null, request.amount_cents ?? null, request.reference]);
}

/**
 * Decides one purchase. `ids` supplies the new offset's id and, for live offsets, its
 * certificate id (random; drawn only when a purchase is made).
 */
export function decidePurchase(
  state: PurchaseState,
  ask: PurchaseAsk,
  ids: { offset: () => string; certificate: () => string },
): PurchaseDecision {
  const { mode, request, idempotencyKey } = ask;
  const print = fingerprint(request);
  if (idempotencyKey !== null && state.prior !== undefined) {
    // Kept for the life of the ledger: the spec gives a key no expiry (docs/service-model.md).
    if (state.prior.fingerprint !== print) {
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used for a different request. Use a new key for a new purchase.',
      );
    }
    return { kind: 'replay', offsetId: state.prior.offset_id };
  }
  const { account } = state;
  const { kg, amount_cents: amount } = price(request, account.rate);
  // The caller's own ceiling first: nothing to top up for.
  if (ask.maxAmount !== null && amount > ask.maxAmount) {
    throw new ApiError(
      'amount_above_max',
      `This purchase would cost ${amount} cents, more than Carbon-Max-Amount-Cents (${ask.maxAmount}); nothing was bought.`,
      { required_cents: amount },
    );
  }
  if (state.available < amount) throw insufficientBalance(state.available, amount);
  const review = mode === 'live' && amount > account.review_limit_cents;
  // The list is newest first by insertion; `created` must agree with it even when another
  // process's clock runs a little behind (or the wall clock steps back).
  const created = state.newestCreated !== null && state.newestCreated > ask.now ? state.newestCreated : ask.now;
  return {
    kind: 'buy',
    fingerprint: print,
    offset: {
      id: ids.offset(),
      mode,
      status: 'processing',
      kg,
      amount_cents: amount,
      rate: account.rate,
      req_kg: request.kg ?? null,
      req_amount_cents: request.amount_cents ?? null,
      reference: request.reference,
      created_ms: created,
      settle_at_ms: review ? null : settleAtFor(mode, created),
      review: review ? 'pending' : null,
      placed_ms: null,
      certificate_id: mode === 'live' ? ids.certificate() : null,
    },
  };
}

function insufficientBalance(available: number, required: number): ApiError {
  return new ApiError('insufficient_balance', `The balance (${available} cents) does not cover this purchase (${required} cents).`, {
    balance_cents: available,
    required_cents: required,
  });
}

/** The replayed purchase's offset must exist: the store writes both in one transaction. */
export function replayed(offset: OffsetRecord | undefined, id: string): OffsetRecord {
  if (offset === undefined) throw new Error(`The ledger remembers an Idempotency-Key for ${id}, which it does not hold.`);
  return offset;
}
