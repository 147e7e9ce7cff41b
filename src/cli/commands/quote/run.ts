import type { Quote } from '../../../api/types.js';
import type { Context } from '../../context.js';
import { type PurchaseFlags, purchaseParams } from '../../options.js';
import { printResource } from '../../print.js';

async function quote(ctx: Context, flags: PurchaseFlags): Promise<Quote> {
  const params = purchaseParams(flags);
  return (await ctx.client()).quote(params);
}

export async function run(ctx: Context, flags: PurchaseFlags): Promise<void> {
  await printResource(ctx, await quote(ctx, flags));
}
