import type { Handler, SettingsKind } from './command.js';
import type { Context } from './context.js';
import type { ContextOpened } from './run-to-exit.js';
import type { GlobalOptions, Settings } from './settings.js';

/** What a command was given: the global flags, its own arguments and its own flags. */
export interface Invocation {
  globals: GlobalOptions;
  positionals: readonly unknown[];
  flags: Record<string, unknown>;
  /** The settings the flags resolve to, when the caller has resolved them already (quick.ts). */
  settings?: Settings;
}

/**
 * Runs a command's handler with its Context: the output, the settings resolved from the flags (all
 * of them, or for `config` kind only where the config is), and the warnings a flag deserves. The
 * same for commander's actions (registry.ts) and the quick start (quick.ts). Errors are left to
 * runToExit().
 */
export async function invoke(load: () => Promise<Handler>, kind: SettingsKind, given: Invocation, opened?: ContextOpened): Promise<void> {
  const { globals } = given;
  const [run, { Context }, { Output }, { resolveSettings, resolveConfigSettings }, { databasePasswordWarning }] = await Promise.all([
    load(),
    import('./context.js'),
    import('./output.js'),
    import('./settings.js'),
    import('./settings-ledger.js'),
  ]);
  const out = new Output({ json: Boolean(globals.json), ...(globals.color === false ? { color: false } : {}) });
  const settings =
    given.settings ??
    (kind === 'config'
      ? resolveConfigSettings(globals)
      : resolveSettings(globals, process.env, { modeFilters: kind === 'journal', localLedger: kind === 'ledger' }));
  const ctx = new Context(settings, out, process.env, Boolean(globals.verbose));
  opened?.(ctx);
  if (ctx.settings.apiKeySource === 'flag' || (kind === 'config' && globals.apiKey !== undefined)) {
    out.warn(
      'an API key given with --api-key can be read by other users (ps) and stays in shell history; ' +
        'prefer CARBON_API_KEY or `carbon config set`.',
    );
  }
  const passwordWarning = databasePasswordWarning(globals);
  if (passwordWarning !== undefined) out.warn(passwordWarning);
  await (run as (ctx: Context, ...rest: unknown[]) => Promise<void>)(ctx, ...given.positionals, given.flags);
}
