import { homedir } from 'node:os';
import { join } from 'node:path';

export interface CarbonPaths {
  /** Directory of config.json. */
  configDir: string;
  /** Directory of the local ledger (ledger.db, sandbox-keys.json). */
  dataDir: string;
}

/**
 * Where carbon keeps things. `CARBON_HOME` holds everything (config and data), so one variable
 * isolates a CI job or a test; otherwise the platform's per-user config and data directories.
 */
export function resolvePaths(env: NodeJS.ProcessEnv = process.env, platform = process.platform): CarbonPaths {
  if (env.CARBON_HOME) return { configDir: env.CARBON_HOME, dataDir: join(env.CARBON_HOME, 'data') };
  // $HOME as the shell has it: node:os, which says the same, is loaded only without it (the
  // build defers builtins to their first use, and loading this one costs start-up time).
  const home = (platform !== 'win32' && env.HOME) || homedir();
  if (platform === 'darwin') {
    const base = join(home, 'Library', 'Application Support', 'carbon');
    return { configDir: join(home, 'Library', 'Preferences', 'carbon'), dataDir: base };
  }
  if (platform === 'win32') {
    const appData = env.APPDATA ?? join(home, 'AppData', 'Roaming');
    const local = env.LOCALAPPDATA ?? join(home, 'AppData', 'Local');
    return { configDir: join(appData, 'carbon', 'Config'), dataDir: join(local, 'carbon', 'Data') };
  }
  return {
    configDir: join(env.XDG_CONFIG_HOME || join(home, '.config'), 'carbon'),
    dataDir: join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'carbon'),
  };
}
