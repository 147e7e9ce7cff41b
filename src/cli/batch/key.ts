import { hash } from 'node:crypto';
import type { PurchaseParams } from '../../api/types.js';

/**
 * A batch row's identity, and the Idempotency-Key made of it (README, "Bought once").
 *
 * A row with a reference is that reference: the n-th row of the file with the same reference is
 * its n-th row (n counted in file order among those rows alone). Its quantity is not part of it,
 * so a row whose kg or amount was edited keeps its key, and the API's 409 for a key used with
 * another body tells carbon that the row changed after it was bought.
 * A row without a reference is what it buys: the n-th row without a reference that asks for the
 * same kg (or the same cents) is its n-th such row.
 * Neither the row's number, its line, the file's bytes (line endings, BOM, quoting, blank lines),
 * other columns, nor the rows around it are part of it. The batch id (`--batch-id`, else
 * `default`) is: the same row in another batch is another purchase.
 */

// crypto.hash, one call and no Hash object a row: 300,000 Hash objects hold native memory until a
// collection finds them.
const digest = (parts: unknown[]) => hash('sha256', JSON.stringify(parts), 'base64url').slice(0, 32);

/** What a row buys, as the API judges two bodies the same: kg or cents, and the reference. */
const contentOf = (p: PurchaseParams) => [p.kg ?? null, p.amount_cents ?? null, p.reference ?? null];

/**
 * Counts the rows of a file by identity, as they are read, so that each gets its occurrence. The
 * identities are kept as 64 bits of their SHA-256 in an open-addressed table of typed arrays
 * (12 bytes a slot): 300,000 distinct references take a few megabytes, not the strings and a Map.
 * Two identities that share those 64 bits would share a count: about one chance in 10^10 for a
 * file of 300,000 rows.
 */
export class Occurrences {
  /** `identity`: what makes two rows the same (a row's identity, without its occurrence, by default). */
  constructor(private readonly identity: (p: PurchaseParams) => unknown[] = (p) => identityOf(p, 0).slice(0, -1)) {}

  private hi = new Uint32Array(1 << 12);
  private lo = new Uint32Array(1 << 12);
  private count = new Uint32Array(1 << 12);
  private used = 0;

  /** The occurrence (1, 2, …) of this row's identity among the rows counted so far. */
  next(p: PurchaseParams): number {
    const [hi, lo] = bitsOf(this.identity(p));
    if ((this.used + 1) * 2 > this.count.length) this.grow();
    const i = this.slot(hi, lo);
    if (this.count[i] === 0) {
      this.hi[i] = hi;
      this.lo[i] = lo;
      this.used++;
    }
    return ++this.count[i]!;
  }

  /** How many rows counted so far share this row's identity. */
  countOf(p: PurchaseParams): number {
    const [hi, lo] = bitsOf(this.identity(p));
    return this.count[this.slot(hi, lo)]!;
  }

  private slot(hi: number, lo: number): number {
    const mask = this.count.length - 1;
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.count[i] !== 0 && (this.hi[i] !== hi || this.lo[i] !== lo)) i = (i + 1) & mask;
    return i;
  }

  private grow(): void {
    const { hi, lo, count } = this;
    this.hi = new Uint32Array(count.length * 2);
    this.lo = new Uint32Array(count.length * 2);
    this.count = new Uint32Array(count.length * 2);
    for (let j = 0; j < count.length; j++) {
      if (count[j] === 0) continue;
      const i = this.slot(hi[j]!, lo[j]!);
      this.hi[i] = hi[j]!;
      this.lo[i] = lo[j]!;
      this.count[i] = count[j]!;
    }
  }
}

/** 64 bits of the SHA-256 of an identity; 0 marks an empty slot, so an identity whose 64 bits are all zero is counted as ...0001. */
function bitsOf(identity: unknown[]): [number, number] {
  const h = hash('sha256', JSON.stringify(identity), 'buffer');
  const hi = h.readUInt32BE(0);
  return [hi, h.readUInt32BE(4) || (hi === 0 ? 1 : 0)];
}

/** A row's identity: its reference and occurrence, or, without a reference, what it buys and its occurrence. */
const identityOf = (p: PurchaseParams, occurrence: number) =>
  p.reference !== undefined ? ['ref', p.reference, occurrence] : ['buys', p.kg ?? null, p.amount_cents ?? null, occurrence];

/** The row's Idempotency-Key in the batch: its identity, never its place in the file. */
export function rowKey(batchId: string, p: PurchaseParams, occurrence: number): string {
  return `csv:${batchId}:${digest(identityOf(p, occurrence))}`;
}

/** The key of a changed row bought again as it is now (--rebuy-changed): its key and what it buys now. */
export function rebuyKey(key: string, p: PurchaseParams): string {
  return `${key}:${digest(contentOf(p)).slice(0, 12)}`;
}

/** Rows that share a reference are matched among the first SHARED_KEYS of them (README, "Bought once"). */
const SHARED_KEYS = 20;

/**
 * The keys a row may be bought under, in the order tried: its own, then, when other rows of the
 * file share its reference (`rows` of them in all), the keys of the first SHARED_KEYS of those.
 * Sorting the file hands such a row another's key, which bought another quantity (409, as a
 * changed row's key does): the row is found under the key that bought its quantity, or bought
 * under one that no purchase used. `taken` says whether a key is already another row's in this run.
 */
export function* keysOf(batchId: string, p: PurchaseParams, occurrence: number, rows: number): Generator<string> {
  yield rowKey(batchId, p, occurrence);
  if (p.reference === undefined) return;
  for (let j = 1; j <= Math.min(rows, SHARED_KEYS); j++) if (j !== occurrence) yield rowKey(batchId, p, j);
}

/** Whether a row's key may be another's too (keysOf): it shares its reference and is among the first SHARED_KEYS of it. */
export const mayBeShared = (p: PurchaseParams, occurrence: number, rows: number) =>
  p.reference !== undefined && rows > 1 && occurrence <= SHARED_KEYS;
