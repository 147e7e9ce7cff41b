import type { PurchaseParams } from '../api/types.js';
import { usage } from './errors.js';
import { parseDollars } from './render/format.js';

/**
 * A number option as typed. Ranges are the API's to judge (it names the field in its 422);
 * here we only refuse what is not a number at all, so `--kg 1.5` reaches the API and gets the
 * same answer a script calling the API would get.
 */
export function numberOption(value: string, flag: string): number {
  if (!/^-?\d+(\.\d+)?$/.test(value.trim())) throw usage(`${flag} must be a number, not "${value}".`);
  return Number(value);
}

/**
 * A whole number as typed, for counts and amounts the CLI judges itself (not the API): with
 * bounds, the message names them.
 */
export function wholeNumberOption(value: string, name: string, bounds?: { min: number; max: number }): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (bounds === undefined) {
    if (Number.isNaN(n)) throw usage(`${name} must be a whole number, not "${value}".`);
  } else if (!(n >= bounds.min && n <= bounds.max)) {
    throw usage(`${name} must be a whole number from ${bounds.min} to ${bounds.max}, not "${value}".`);
  }
  return n;
}

export interface PurchaseFlags {
  kg?: string;
  amountCents?: string;
  amount?: string;
  reference?: string;
}

/** --kg, --amount-cents or --amount (dollars): exactly one, as the API's body. */
export function purchaseParams(flags: PurchaseFlags): PurchaseParams {
  const given = [flags.kg !== undefined && '--kg', flags.amountCents !== undefined && '--amount-cents', flags.amount !== undefined && '--amount'].filter(Boolean);
  if (given.length === 0) throw usage('Say how much to buy: --kg N, --amount-cents N or --amount DOLLARS.');
  if (given.length > 1) throw usage(`Give only one of --kg, --amount-cents and --amount (got ${given.join(' and ')}).`);
  const params: PurchaseParams = {};
  if (flags.kg !== undefined) params.kg = numberOption(flags.kg, '--kg');
  if (flags.amountCents !== undefined) params.amount_cents = numberOption(flags.amountCents, '--amount-cents');
  if (flags.amount !== undefined) {
    const cents = parseDollars(flags.amount);
    if (cents === null) throw usage(`--amount must be dollars with at most two decimals, such as 12.50, not "${flags.amount}".`);
    params.amount_cents = cents;
  }
  if (flags.reference !== undefined) params.reference = flags.reference;
  return params;
}
