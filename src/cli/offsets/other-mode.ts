import type { Mode } from '../../api/types.js';
import { CarbonApiError } from '../../client/errors.js';
import { Context } from '../context.js';
import { followUp } from '../follow-up.js';
import { hinted } from '../report-error.js';

/**
 * An offset looked up in one mode is 404 when it belongs to the other: the API keeps the two
 * apart. A 404 then says where the offset is and the command that shows it (this one, with
 * --live or --test instead of the mode it ran in): on the local engine, which holds both, from
 * the model; on the remote engine, by asking the API with the other mode's key, when the profile
 * has one (without one, no second request).
 */
export async function inEitherMode<T>(ctx: Context, id: string, words: string[], lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (err) {
    if (!(err instanceof CarbonApiError) || err.code !== 'resource_missing') throw err;
    const mode = ctx.settings.engine === 'local' ? await localMode(ctx, id) : await remoteMode(ctx, id);
    if (mode === undefined || mode === ctx.settings.mode) throw err;
    // A key given by CARBON_API_KEY or --api-key sets the mode: a flag of the other mode would clash with it.
    if (ctx.settings.apiKeySource === 'env' || ctx.settings.apiKeySource === 'flag') {
      throw hinted(err, `It is a ${mode} offset: use a ${mode} key to see it.`);
    }
    const command = followUp(
      [...words, `--${mode}`],
      process.argv.slice(2).filter((a) => a !== '--live' && a !== '--test'),
    );
    throw hinted(err, `It is a ${mode} offset: see it with \`${command}\`.`);
  }
}

async function localMode(ctx: Context, id: string): Promise<Mode | undefined> {
  // No ledger yet: no offset in either mode, and none is made to look (`carbon show ''` on a fresh home).
  if (await ctx.ledgerMissing()) return undefined;
  const offset = await (await ctx.sandbox()).offset(id);
  return offset === undefined ? undefined : offset.livemode ? 'live' : 'test';
}

/** The offset's mode as the API answers it to the other mode's key from the profile; undefined when there is none. */
async function remoteMode(ctx: Context, id: string): Promise<Mode | undefined> {
  const other: Mode = ctx.settings.mode === 'live' ? 'test' : 'live';
  const apiKey = ctx.settings.profile[other === 'live' ? 'live_key' : 'test_key'];
  if (apiKey === undefined) return undefined;
  // The same engine, retries and --verbose lines; only the mode and its key differ. Any failure keeps the first 404.
  const probe = new Context({ ...ctx.settings, mode: other, apiKey, apiKeySource: 'profile' }, ctx.out, ctx.env, ctx.verbose);
  try {
    return (await (await probe.client()).get(id)).livemode ? 'live' : 'test';
  } catch {
    return undefined;
  } finally {
    await probe.close();
  }
}
