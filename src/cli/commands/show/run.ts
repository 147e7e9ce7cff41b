import type { Context } from '../../context.js';
import { inEitherMode } from '../../offsets/other-mode.js';
import { printOffset } from '../../offsets/wait.js';
import { quietWith } from '../../options.js';

export async function run(ctx: Context, id: string, flags: { wait?: boolean; quiet?: boolean }): Promise<void> {
  if (flags.quiet && ctx.out.json) throw quietWith('--json');
  const client = await ctx.client();
  const offset = await inEitherMode(ctx, id, ['show', id, ...(flags.wait ? ['--wait'] : [])], () => client.get(id));
  // The local model knows an offset held for review: its card says so, as the purchase's did (an API's offset does not say).
  const review = offset.status === 'processing' && ctx.settings.engine === 'local' && (await (await ctx.sandbox()).awaitsReview(offset.id));
  await printOffset(ctx, client, offset, Boolean(flags.wait), Boolean(flags.quiet), review);
}
