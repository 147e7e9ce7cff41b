import type { Context } from '../context.js';
import { printOffset } from './wait.js';

export async function run(ctx: Context, id: string, flags: { wait?: boolean }): Promise<void> {
  const client = await ctx.client();
  await printOffset(ctx, client, await client.get(id), Boolean(flags.wait));
}
