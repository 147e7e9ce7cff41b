import type { Context } from '../../context.js';
import { inEitherMode } from '../../offsets/other-mode.js';
import { printOffset, readForWait } from '../../offsets/wait.js';
import { quietWith } from '../../options.js';

export async function run(ctx: Context, id: string, flags: { wait?: boolean; quiet?: boolean }): Promise<void> {
  if (flags.quiet && ctx.out.json) throw quietWith('--json');
  const client = await ctx.client();
  // With --wait, the first read is the wait's first poll: --timeout bounds the whole command.
  const waitStartedMs = performance.now();
  const read = () => client.get(id);
  const offset = await inEitherMode(
    ctx,
    id,
    ['show', id, ...(flags.wait ? ['--wait'] : [])],
    flags.wait ? () => readForWait(ctx, id, read) : read,
  );
  // The local model knows an offset held for review: its card says so, as the purchase's did (an API's offset does not say).
  const review = offset.status === 'processing' && ctx.settings.engine === 'local' && (await (await ctx.sandbox()).awaitsReview(offset.id));
  await printOffset(ctx, client, offset, { wait: flags.wait, quiet: flags.quiet, review, waitStartedMs });
}
