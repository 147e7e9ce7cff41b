import type { PurchaseParams, Quote } from '../../api/types.js';
import type { CarbonClient } from '../../client/client.js';

/**
 * The quotes of a batch, one per quantity: what a quote says (the kg, the price, the balance)
 * depends on the kg or cents alone, so the rows that ask for the same quantity share one. A row
 * whose reference is not plainly within the API's bounds (1 to 200 characters, no NUL, no lone
 * surrogate) is quoted itself, so that the API judges it. Thousands of quantities at most are
 * kept; past that, rows are quoted one by one.
 */
export class QuoteCache {
  private readonly kept = new Map<number, Quote>();
  constructor(private readonly client: CarbonClient) {}

  async quote(params: PurchaseParams): Promise<Quote> {
    const r = params.reference;
    const plain = r === undefined || (r.length <= 200 && !/[\uD800-\uDFFF]/.test(r) && !r.includes('\u0000'));
    const key = params.kg !== undefined ? -params.kg : (params.amount_cents ?? 0);
    const kept = plain ? this.kept.get(key) : undefined;
    if (kept !== undefined) return kept;
    const q = await this.client.quote(params);
    if (plain && this.kept.size < 10_000) this.kept.set(key, q);
    return q;
  }
}
