import { CarbonApiError } from '../../client/errors.js';
import type { Context } from '../context.js';
import { followUp } from '../follow-up.js';
import { hinted } from '../report-error.js';

/**
 * An offset looked up in one mode is 404 when it belongs to the other: the API keeps the two
 * apart. On the local engine, which holds both, a 404 says where the offset is and the command
 * that shows it (this one, with --live or --test instead of the mode it ran in).
 */
export async function inEitherMode<T>(ctx: Context, id: string, words: string[], lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (err) {
    if (!(err instanceof CarbonApiError) || err.code !== 'resource_missing' || ctx.settings.engine !== 'local') throw err;
    const offset = await (await ctx.sandbox()).offset(id);
    if (offset === undefined || offset.livemode === (ctx.settings.mode === 'live')) throw err;
    const found = { mode: offset.livemode ? 'live' : 'test' };
    // A key given by CARBON_API_KEY or --api-key sets the mode: a flag of the other mode would clash with it.
    if (ctx.settings.apiKeySource === 'env' || ctx.settings.apiKeySource === 'flag') throw hinted(err, `It is a ${found.mode} offset: use a ${found.mode} key to see it.`);
    const command = followUp([...words, `--${found.mode}`], process.argv.slice(2).filter((a) => a !== '--live' && a !== '--test'));
    throw hinted(err, `It is a ${found.mode} offset: see it with \`${command}\`.`);
  }
}
