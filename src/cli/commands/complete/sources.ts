import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Offset } from '../../../api/types.js';
import type { CompletionSource } from '../../command.js';
import type { Profile } from '../../config-store.js';
import type { GlobalOptions } from '../../settings.js';

/** Where the values `carbon __complete` offers come from, when a declaration names a source. */

export interface Candidate {
  value: string;
  description?: string;
}

/** Where a file name goes: the one line the shells read as "complete paths here" (run.ts). */
export const FILE_NAMES: Candidate = Object.freeze({ value: ':files' });

/** Where values that are not in the command tree come from; tests pass their own. */
export interface Sources extends Record<CompletionSource, (globals: GlobalOptions) => Promise<Candidate[]>> {
  /** The newest offset ids on the engine the typed global options select. */
  offsetIds(globals: GlobalOptions): Promise<Candidate[]>;
  /** The local model's offsets waiting for review (live, above the review limit), oldest first. */
  reviewIds(globals: GlobalOptions): Promise<Candidate[]>;
  /** The local model's processing offsets, of both modes, newest first. */
  processingIds(globals: GlobalOptions): Promise<Candidate[]>;
  /** The profiles to use: `default`, then the config file's. */
  profiles(globals: GlobalOptions): Promise<Candidate[]>;
  /** The profiles the config file holds (`config delete`'s). */
  savedProfiles(globals: GlobalOptions): Promise<Candidate[]>;
  /** The keys `carbon config set` accepts. */
  configKeys(): Promise<Candidate[]>;
  /** The local model's API key ids (never the keys). */
  keyIds(globals: GlobalOptions): Promise<Candidate[]>;
}

/** The newest offsets offered for `show`: enough to pick a recent one, few enough to be quick. */
const OFFSET_ID_LIMIT = 20;
/** The whole answer, engine included, must come within this. */
export const DEADLINE_MS = 3000;

/**
 * Runs `use` with a Context on the engine the typed global options select, quietly: its output
 * goes nowhere, no retries, a short timeout, and on the local engine only when the model already
 * exists (completing a word never provisions one) and with its request journal off. Resolves to [] when there is nothing to ask.
 */
async function onEngine(
  globals: GlobalOptions,
  env: NodeJS.ProcessEnv,
  use: (ctx: import('../../context.js').Context) => Promise<Candidate[]>,
  { localOnly = false } = {},
): Promise<Candidate[]> {
  const [{ resolveSettings }, { Context }, { Output }, { Writable }] = await Promise.all([
    import('../../settings.js'),
    import('../../context.js'),
    import('../../output.js'),
    import('node:stream'),
  ]);
  const resolved = resolveSettings(globals, env, { tightenConfig: false });
  if (resolved.engine === 'remote' && localOnly) return [];
  if (resolved.engine === 'local') {
    const { LEDGER_FILE } = await import('../../../engine/ledger.js');
    if (!existsSync(join(resolved.paths.dataDir, LEDGER_FILE))) return [];
  }
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  // A TAB is no request anyone sent: the local model's journal (`carbon logs`) does not keep it.
  // A remote server keeps what reaches it, as any API does.
  const journal = { ...resolved.journal, enabled: false };
  const settings = { ...resolved, journal, maxRetries: 0, timeoutSeconds: DEADLINE_MS / 1000 };
  const ctx = new Context(settings, new Output({ stdout: sink, stderr: sink, json: true, env }), env);
  try {
    return await use(ctx);
  } finally {
    await ctx.close();
  }
}

/** Offsets as candidates: the id, described by kg, status (or mode), day and reference. */
async function offsetCandidates(offsets: readonly Offset[], show: 'status' | 'mode' = 'status'): Promise<Candidate[]> {
  const { kg, oneLine } = await import('../../render/format.js');
  return offsets.map((o) => ({
    value: o.id,
    description: [
      kg(o.kg),
      show === 'status' ? o.status : o.livemode ? 'live' : 'test',
      o.created.slice(0, 10),
      o.reference === null ? '' : oneLine(o.reference),
    ]
      .filter(Boolean)
      .join(' · '),
  }));
}

/** The real sources: the config file and the engine the settings select. */
export function realSources(env: NodeJS.ProcessEnv = process.env): Sources {
  return {
    offsetIds: (globals) =>
      onEngine(globals, env, async (ctx) => {
        const page = await (await ctx.client()).list({ limit: OFFSET_ID_LIMIT });
        // One page, no loop; a page that repeats an id is still refused (no candidates offered).
        const { PageGuard } = await import('../../../client/paging.js');
        new PageGuard().check(page, undefined);
        return offsetCandidates(page.data);
      }),
    // `sandbox review` decides only what waits for review, of either mode: not the key's newest offsets.
    reviewIds: (globals) =>
      onEngine(globals, env, async (ctx) => offsetCandidates(await (await ctx.sandbox()).reviewQueue(OFFSET_ID_LIMIT), 'mode'), {
        localOnly: true,
      }),
    // `sandbox fail` refunds only a processing offset, of either mode.
    processingIds: (globals) =>
      onEngine(
        globals,
        env,
        async (ctx) => {
          const sandbox = await ctx.sandbox();
          const filter = { status: 'processing', limit: OFFSET_ID_LIMIT } as const;
          const both = [...(await sandbox.offsets('test', filter)).data, ...(await sandbox.offsets('live', filter)).data];
          both.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
          return offsetCandidates(both.slice(0, OFFSET_ID_LIMIT), 'mode');
        },
        { localOnly: true },
      ),
    keyIds: (globals) =>
      onEngine(
        globals,
        env,
        async (ctx) =>
          (await (await ctx.sandbox()).keys())
            .filter((k) => k.revoked === null)
            .map((k) => ({ value: k.id, description: `${k.masked} · ${k.permission}${k.default ? ` · default ${k.default}` : ''}` })),
        { localOnly: true },
      ),
    profiles: () => profileCandidates(env, true),
    // Only what the file holds: `default` unwritten has nothing to delete.
    savedProfiles: () => profileCandidates(env, false),
    async configKeys() {
      const { CONFIG_KEYS } = await import('../../config-store.js');
      return Object.keys(CONFIG_KEYS).map((value) => ({ value }));
    },
  };
}

/** The profiles to offer: the file's, after `default` (always there to use, written to the file or not) when `withDefault`. */
async function profileCandidates(env: NodeJS.ProcessEnv, withDefault: boolean): Promise<Candidate[]> {
  const [{ DEFAULT_PROFILE, readConfig }, { resolvePaths }, { redactSecrets }] = await Promise.all([
    import('../../config-store.js'),
    import('../../paths.js'),
    import('../../../service/keys.js'),
  ]);
  const config = readConfig(resolvePaths(env).configDir, { tighten: false });
  const profiles: Record<string, Profile> = withDefault ? { [DEFAULT_PROFILE]: {}, ...config.profiles } : (config.profiles ?? {});
  // A hand-edited file's profile named by a key is not offered: typed in, its name would show the key.
  return Object.entries(profiles)
    .filter(([name]) => redactSecrets(name) === name)
    .map(([name, p]) => ({
      value: name,
      // Never a key: only where the profile points and in which mode (masked, should a hand-edited file hold one there).
      description: [name === config.current_profile ? 'current' : '', p.mode ?? 'test', p.base_url ?? 'local model']
        .filter(Boolean)
        .map((part) => redactSecrets(part))
        .join(' · '),
    }));
}
