import type { Offset } from '../../src/api/types.js';

/**
 * An offset as the API returns it, for tests that render, validate or page through offsets
 * without a ledger: a placed 5 kg test offset at the default rate, with `fields` over it.
 */
export function anOffset(fields: Partial<Offset> = {}): Offset {
  return {
    object: 'offset',
    id: 'off_0123456789abcdefghijklmn',
    livemode: false,
    status: 'placed',
    kg: 5,
    amount_cents: 20,
    currency: 'usd',
    rate_millicents_per_kg: 4000,
    requested: { kg: 5, amount_cents: null },
    reference: null,
    certificate_url: null,
    created: '2026-11-21T22:00:00.000Z',
    placed: null,
    ...fields,
  };
}
