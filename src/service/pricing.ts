import { LIMITS } from '../api/types.js';
import { ApiError, validationError } from './errors.js';
import { grouped } from './units.js';

/**
 * The charge for `kg` at `rate` millicents per kg, in whole cents, rounded up: the service
 * never sells a fraction of a cent below cost. (The spec leaves the rounding rule "not shown";
 * docs/service-model.md records this choice.) All arithmetic is on safe integers: kg ≤ 10^6
 * and the rate ≤ 10^7 keep kg × rate below 2^53.
 */
function chargeCents(kg: number, rate: number): number {
  return Math.ceil((kg * rate) / 1000);
}

/**
 * The most whole kg whose charge fits in `amountCents`, capped at the per-purchase kg limit.
 * floor(amount·1000 / rate) kg costs at most `amountCents` (its exact price is ≤ amount·1000
 * millicents, so rounding up to whole cents stays ≤ amount), and one kg more would not fit.
 */
function kgForAmount(amountCents: number, rate: number): number {
  return Math.min(Math.floor((amountCents * 1000) / rate), LIMITS.kgMax);
}

/** The smallest `amount_cents` that buys at least 1 kg: the charge for 1 kg. */
function smallestAmountCents(rate: number): number {
  return chargeCents(1, rate);
}

/**
 * What a validated request buys and costs at `rate`: by volume, the kg asked; by price, the most
 * whole kg that fits. A price that buys nothing is 422 `amount_too_small`.
 */
export function price(request: { kg?: number; amount_cents?: number }, rate: number): { kg: number; amount_cents: number } {
  if (request.kg !== undefined) {
    // Part 8 bounds the charge of every purchase or quote (amount_cents, 1 to 5,000,000), so a
    // kg whose charge would pass it is refused as the kg, which is what the caller chose; by price
    // it cannot happen (the charge never passes the amount asked).
    const charge = chargeCents(request.kg, rate);
    if (charge > LIMITS.amountCentsMax) {
      const most = kgForAmount(LIMITS.amountCentsMax, rate);
      throw validationError(
        'kg',
        `${grouped(request.kg)} kg would cost ${grouped(charge)} cents, above the limit of ` +
          `${grouped(LIMITS.amountCentsMax)} cents a purchase; at this rate kg must be at most ${grouped(most)}.`,
      );
    }
  }
  const kg = request.kg ?? kgForAmount(request.amount_cents ?? 0, rate);
  if (kg < 1) {
    throw new ApiError(
      'amount_too_small',
      `The amount is too small to buy 1 kg; the smallest amount is ${smallestAmountCents(rate)} cents.`,
      {
        param: 'amount_cents',
      },
    );
  }
  return { kg, amount_cents: chargeCents(kg, rate) };
}
