import type { PurchaseParams } from '../../api/types.js';
import { Occurrences } from './key.js';

/**
 * What the check of a batch leaves for its second reading (the purchases, or a dry run's rows):
 * each kept row's occurrence and quote, 12 bytes a row in typed arrays. The rows themselves are
 * read again from the spooled copy of the file (read.ts), so a file of 300,000 rows is held in a
 * few megabytes, not as 300,000 objects and strings.
 */
export class RowTable {
  /** How many rows share each identity (batch/key.ts): a row's occurrence, and how many rows of the file have its reference. */
  readonly occurrences = new Occurrences();
  /**
   * How many rows of the file ask each body (kg or amount) under each shared reference (batch/buy.ts:
   * a row's own key that bought what no row asks now). A reference's first row is counted when the
   * purchases reach it (firstOfShared), once its reference is known to be shared: counting every
   * row's here would take 12 MB for 300,000 rows of distinct references.
   */
  private readonly asked = new Occurrences((p) => [p.reference ?? null, p.kg ?? null, p.amount_cents ?? null]);
  private size = 0;
  private occurrence = new Uint32Array(1024);
  private quotedKg = new Uint32Array(1024);
  private quotedCents = new Uint32Array(1024);

  get length(): number {
    return this.size;
  }

  private grow(): void {
    const more = (a: Uint32Array) => {
      const b = new Uint32Array(Math.ceil(a.length * 1.5));
      b.set(a);
      return b;
    };
    this.occurrence = more(this.occurrence);
    this.quotedKg = more(this.quotedKg);
    this.quotedCents = more(this.quotedCents);
  }

  /** Keeps a quoted row; false (nothing kept) when a number is beyond 32 bits, which no quote within the API's bounds is. */
  push(params: PurchaseParams, quoted: { kg: number; cents: number }): boolean {
    const fits = (n: number) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;
    if (!fits(quoted.kg) || !fits(quoted.cents)) return false;
    const occurrence = this.occurrences.next(params);
    if (params.reference !== undefined && occurrence > 1) this.asked.next(params);
    if (this.size === this.occurrence.length) this.grow();
    const i = this.size++;
    this.occurrence[i] = occurrence;
    this.quotedKg[i] = quoted.kg;
    this.quotedCents[i] = quoted.cents;
    return true;
  }

  /** Counts the first row of a reference that other rows share (see `asked`), before any of them is bought. */
  firstOfShared(params: PurchaseParams): void {
    this.asked.next(params);
  }

  /** How many rows of the file ask `body` (its kg, or its amount, and its reference). */
  askers(body: PurchaseParams): number {
    return this.asked.countOf(body);
  }

  occurrenceOf(i: number): number {
    return this.occurrence[i]!;
  }

  quote(i: number): { kg: number; cents: number } {
    return { kg: this.quotedKg[i]!, cents: this.quotedCents[i]! };
  }
}
