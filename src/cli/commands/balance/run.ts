import type { Context } from '../../context.js';
import { printResource } from '../../print.js';

export async function run(ctx: Context): Promise<void> {
  await printResource(ctx, await (await ctx.client()).balance());
}
