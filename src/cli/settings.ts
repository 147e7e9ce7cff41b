import type { Mode } from '../api/types.js';
import type { StoreTarget } from '../engine/ledger.js';
import { JOURNAL_DEFAULTS, type JournalSettings, journalSettingsFrom } from '../service/journal-settings.js';
import { keyShape } from '../service/keys.js';
import { type ConfigData, DEFAULT_PROFILE, isMode, type Profile, profileFlag, profileNamed, readConfig } from './config-store.js';
import { usage } from './errors.js';
import { wholeNumberOption } from './options.js';
import { type CarbonPaths, resolvePaths } from './paths.js';
import { storeTarget } from './settings-ledger.js';

/** The options every command accepts (declared once, as ROOT's flags in commands/index.ts). */
export interface GlobalOptions {
  json?: boolean;
  profile?: string;
  live?: boolean;
  test?: boolean;
  local?: boolean;
  apiKey?: string;
  baseUrl?: string;
  color?: boolean;
  maxRetries?: string;
  timeout?: string;
  allowInsecureHttp?: boolean;
  database?: string;
  databaseSchema?: string;
  verbose?: boolean;
}

type Engine = 'local' | 'remote';
type KeySource = 'flag' | 'env' | 'profile' | 'sandbox';

/** Where the key a command sends came from, as a message names it (undefined: the local sandbox's own). */
export function keyFrom(s: Pick<Settings, 'apiKeySource' | 'mode' | 'profileName'>): string | undefined {
  const from = { sandbox: undefined, profile: `the ${s.mode}-key of profile ${s.profileName}`, flag: '--api-key', env: 'CARBON_API_KEY' };
  return from[s.apiKeySource];
}

/** Everything a command needs to know about where and how to talk to the API. */
export interface Settings {
  paths: CarbonPaths;
  config: ConfigData;
  profileName: string;
  profile: Profile;
  mode: Mode;
  /** The mode --live or --test gave, if one did (`carbon logs` filters by it only then). */
  modeFlag?: Mode;
  engine: Engine;
  /** Set for the remote engine. */
  baseUrl: string | null;
  /** Undefined on the local engine means "the sandbox's own key for the mode". */
  apiKey: string | undefined;
  apiKeySource: KeySource;
  maxRetries: number;
  /** Seconds: each HTTP request's timeout, and how long --wait waits. */
  timeoutSeconds: number | undefined;
  allowInsecureHttp: boolean;
  /**
   * Where the local model keeps its ledger: PostgreSQL when a URL is given (--database, then
   * CARBON_DATABASE_URL), else SQLite in the data directory.
   */
  store: StoreTarget;
  /** The local model's request journal: on or off, and its bounds (CARBON_JOURNAL…). */
  journal: JournalSettings;
}

const modeOfKey = (key: string): Mode | null => keyShape(key)?.mode ?? null;

/**
 * Resolves settings with one precedence for everything: flag > environment > profile > default.
 * With no configuration at all: the local engine, test mode, the model's own keys.
 */
export function resolveSettings(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  options: { allowMissingProfile?: boolean; ledger?: boolean; localLedger?: boolean; modeFilters?: boolean; tightenConfig?: boolean } = {},
): Settings {
  const paths = resolvePaths(env);
  const config = readConfig(paths.configDir, { tighten: options.tightenConfig !== false });
  const { profileName, profile } = chooseProfile(opts, env, config, options);
  const mode = chooseMode(opts, env, profile, options.modeFilters === true);
  // A mode written by hand that is none: refused where it would be used, as a malformed key is (`carbon config` reads it to fix it).
  if (options.ledger !== false && !isMode(mode)) {
    throw usage(
      `Profile ${profileName} has mode "${mode}", which is neither test nor live; nothing was sent.`,
      `Set it: \`carbon config set${profileFlag(config, profileName)} mode test\` (or live).`,
    );
  }
  const [apiKey, apiKeySource] = chooseKey(opts, env, profile, mode);
  // `carbon config` (ledger: false) reads the file to fix it: a key in the wrong place must not stop it.
  // Where the profile's keys are in play, neither of them may be of the other mode, the one this call does not use either.
  if ((apiKeySource === 'profile' || apiKeySource === 'sandbox') && options.ledger !== false)
    for (const slot of [mode, mode === 'live' ? 'test' : 'live'] as const) {
      const key = profile?.[`${slot}_key`];
      if (key !== undefined) refuseKeyOfOtherMode(key, slot, slot === mode, profileName, profileFlag(config, profileName));
    }
  const baseUrl = chooseBaseUrl(opts, env, profile, profileName);
  // A key to send (to a remote API) that no Authorization header can carry as a bearer token: said
  // now, not as the server's 401. The local engine uses its own keys in its place (README).
  if (baseUrl !== null && apiKey !== undefined && !BEARER_TOKEN.test(keyShape(apiKey)?.rest ?? '')) {
    const from = keyFrom({ apiKeySource, mode, profileName });
    const rest = keyShape(apiKey)?.rest;
    throw usage(
      rest === ''
        ? `The API key from ${from} has nothing after ${apiKey}: its secret, the letters and digits that follow, is missing; nothing was sent.`
        : `The API key from ${from} holds a character no bearer token has (a space, or a letter outside ASCII); nothing was sent.`,
    );
  }
  return {
    paths,
    config,
    profileName,
    profile: profile ?? {},
    mode,
    ...(opts.live ? { modeFlag: 'live' as const } : opts.test ? { modeFlag: 'test' as const } : {}),
    engine: baseUrl === null ? 'local' : 'remote',
    baseUrl,
    apiKey,
    apiKeySource,
    maxRetries: wholeSetting(opts.maxRetries, '--max-retries', env, 'CARBON_MAX_RETRIES', { min: 0, max: 10 }) ?? 2,
    timeoutSeconds: wholeSetting(opts.timeout, '--timeout', env, 'CARBON_TIMEOUT', { min: 1, max: 86_400 }),
    allowInsecureHttp: Boolean(opts.allowInsecureHttp) || env.CARBON_ALLOW_INSECURE_HTTP === '1',
    // Read only where the ledger is opened: not by `carbon config` (ledger: false), nor by a command
    // on the remote engine unless it opens this machine's ledger whatever the engine (localLedger:
    // carbon serve). Elsewhere a malformed one stops nothing (README, "Keys, profiles and modes").
    ...(options.ledger !== false && (baseUrl === null || options.localLedger === true)
      ? { store: storeTarget(opts, env, paths.dataDir), journal: journalSettings(env) }
      : { store: { kind: 'sqlite' as const, dir: paths.dataDir }, journal: JOURNAL_DEFAULTS }),
  };
}

/**
 * A whole number from its flag, else its variable (an empty one is unset): the error names where
 * the bad value was typed, the flag or the variable, as CARBON_JOURNAL_KEEP's does.
 */
function wholeSetting(
  flagValue: string | undefined,
  flag: string,
  env: NodeJS.ProcessEnv,
  variable: string,
  bounds: { min: number; max: number },
): number | undefined {
  if (flagValue !== undefined) return wholeNumberOption(flagValue, flag, bounds);
  const text = env[variable] || undefined;
  return text === undefined ? undefined : wholeNumberOption(text, variable, bounds);
}

/** CARBON_JOURNAL, CARBON_JOURNAL_KEEP and CARBON_JOURNAL_MAX_AGE_DAYS: a value they do not take is a usage error, as every setting's is. */
function journalSettings(env: NodeJS.ProcessEnv): JournalSettings {
  try {
    return journalSettingsFrom(env);
  } catch (err) {
    throw usage((err as Error).message);
  }
}

/** The profile: --profile, CARBON_PROFILE, the current one, else the default; one named but missing is refused. */
function chooseProfile(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv,
  config: ConfigData,
  options: { allowMissingProfile?: boolean },
): { profileName: string; profile: Profile | undefined } {
  const profileName = opts.profile ?? (env.CARBON_PROFILE || undefined) ?? config.current_profile ?? DEFAULT_PROFILE;
  const profile = profileNamed(config, profileName);
  if (profile === undefined && !options.allowMissingProfile && profileName !== DEFAULT_PROFILE) {
    // The current profile of a hand-edited file (or one deleted by hand) too: the command would run on another engine, unsaid.
    const chosen = opts.profile !== undefined || env.CARBON_PROFILE ? '' : ' (the current profile, in config.json)';
    throw usage(
      `No profile named "${profileName}"${chosen}.`,
      chosen === ''
        ? 'List profiles with `carbon config list`; create one with `carbon config set --profile NAME ...`.'
        : 'Choose one with `carbon config use NAME` (`carbon config list` shows them), or create it with `carbon config set --profile NAME ...`.',
    );
  }
  return { profileName, profile };
}

/** A key with white space at an end or a control character: most often one pasted with its line's end. */
const PASTED = /^\s|\s$|[\u0000-\u001f\u007f]/;
/** What follows a key's PREFIX_MODE_ as a bearer token may hold it (RFC 6750 §2.1, b64token); length and alphabet are the service's to judge. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Test or live: --live/--test, else the mode of the key given, else the profile's, else test. A key
 * of the other mode is refused, unless the flags only filter what is read (`modeFilters`): then the
 * key given keeps its own mode.
 */
function chooseMode(opts: GlobalOptions, env: NodeJS.ProcessEnv, profile: Profile | undefined, modeFilters: boolean): Mode {
  if (opts.live && opts.test) throw usage('Give --live or --test, not both.');
  const flagMode: Mode | null = opts.live ? 'live' : opts.test ? 'test' : null;
  const explicitKey = opts.apiKey ?? (env.CARBON_API_KEY || undefined);
  const explicitKeyMode = explicitKey === undefined ? null : modeOfKey(explicitKey);
  // A secret pasted into CI with its line's end: said as such, not as a header that cannot be sent.
  if (explicitKey !== undefined && PASTED.test(explicitKey)) {
    throw usage(
      `The API key from ${opts.apiKey !== undefined ? '--api-key' : 'CARBON_API_KEY'} has white space at an end, or a control character (a newline pasted with it?); give the key alone.`,
    );
  }
  if (explicitKey !== undefined && explicitKeyMode === null) {
    throw usage(
      `The API key from ${opts.apiKey !== undefined ? '--api-key' : 'CARBON_API_KEY'} is not a test or live key (expected a prefix, then _test_… or _live_…, as in the sandbox's ck_test_…).`,
    );
  }
  if (flagMode !== null && explicitKeyMode !== null && flagMode !== explicitKeyMode && !modeFilters) {
    const source = opts.apiKey !== undefined ? '--api-key' : 'CARBON_API_KEY';
    throw usage(
      `--${flagMode} was given, but the API key from ${source} is a ${explicitKeyMode} key.`,
      `Give a ${flagMode} key there, or ${source === '--api-key' ? 'leave out --api-key' : 'unset CARBON_API_KEY'} to use the profile's ${flagMode} key.`,
    );
  }
  return (modeFilters ? explicitKeyMode : null) ?? flagMode ?? explicitKeyMode ?? profile?.mode ?? 'test';
}

/** The API key and where it came from: --api-key, CARBON_API_KEY, the profile's for the mode, else the sandbox's own. */
function chooseKey(opts: GlobalOptions, env: NodeJS.ProcessEnv, profile: Profile | undefined, mode: Mode): [string | undefined, KeySource] {
  const envKey = env.CARBON_API_KEY || undefined;
  if (opts.apiKey !== undefined) return [opts.apiKey, 'flag'];
  if (envKey !== undefined) return [envKey, 'env'];
  const profileKey = profile?.[mode === 'live' ? 'live_key' : 'test_key'];
  if (profileKey !== undefined) return [profileKey, 'profile'];
  return [undefined, 'sandbox'];
}

/**
 * A profile's test-key that is a live key (or the other way round) would make a call of the other
 * mode than the one chosen: a purchase believed to be a test would spend real money, unasked.
 * `config set` refuses such a key, and one that is no key, so it was written by hand; refused here, naming the fix.
 */
function refuseKeyOfOtherMode(key: string, mode: Mode, inUse: boolean, profileName: string, flag: string): void {
  const keyMode = modeOfKey(key);
  // The other slot's key is not sent: only its mode is judged (a malformed one stops the commands that use it).
  if (!inUse && (keyMode === null || keyMode === mode)) return;
  // Nor is one that is no key at all (edited by hand) sent, as CARBON_API_KEY's is not.
  if (PASTED.test(key)) {
    throw usage(
      `The ${mode}-key of profile ${profileName} has white space at an end, or a control character (a newline pasted with it?): nothing was sent.`,
      `Set it again: \`carbon config set${flag} ${mode}-key -\`.`,
    );
  }
  if (keyMode === null) {
    throw usage(
      `The ${mode}-key of profile ${profileName} is not a test or live key (expected a prefix, then _test_… or _live_…, as in the sandbox's ck_test_…); nothing was sent.`,
      `Set it again: \`carbon config set${flag} ${mode}-key -\`.`,
    );
  }
  if (keyMode === mode) return;
  throw usage(
    `The ${mode}-key of profile ${profileName} is a ${keyMode} key: nothing was sent, as ${inUse ? 'this' : 'a'} ${mode}-mode call would ${inUse ? 'have been' : 'be'} made in ${keyMode} mode.`,
    `Put each key in its place: \`carbon config set${flag} ${keyMode}-key -\` for this one, and \`carbon config set${flag} ${mode}-key -\` for a ${mode} key.`,
  );
}

/**
 * The remote API's base URL, or null for the local engine (--local, or none given). One that is
 * no http(s) URL is refused here, naming where it came from, before any key is looked for: a
 * "no key" or an unexpected error would send the user to the wrong fix.
 */
function chooseBaseUrl(opts: GlobalOptions, env: NodeJS.ProcessEnv, profile: Profile | undefined, profileName: string): string | null {
  if (opts.local) return null;
  const envUrl = env.CARBON_BASE_URL || undefined;
  const baseUrl = opts.baseUrl ?? envUrl ?? profile?.base_url ?? null;
  if (baseUrl === null) return null;
  // A key (or any credential) in the URL would travel in every message that names the URL: refused, never echoed.
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(baseUrl)) {
    throw usage(
      'The base URL must not carry a user name or password (a key there would show wherever the URL is printed); give the key with CARBON_API_KEY or `carbon config set test-key -`.',
    );
  }
  const source =
    opts.baseUrl !== undefined ? '--base-url' : envUrl !== undefined ? 'CARBON_BASE_URL' : `the base-url of profile ${profileName}`;
  const parsed = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  // Not echoed, as the transport does not: what was typed may hold a key.
  if (parsed === undefined) throw usage(`The base URL from ${source} is not a URL; expected one such as https://api.example.com/api/v1.`);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw usage(
      `The base URL from ${source} must use https:// (or http:// to a loopback address), not ${parsed.protocol}; expected one such as https://api.example.com/api/v1.`,
    );
  }
  // Each request's path is put after the base URL's: a query or a fragment would end up before it.
  if (/[?#]/.test(baseUrl)) {
    throw usage(
      `The base URL from ${source} must not have a query (?) or a fragment (#): every request's path follows it; expected one such as https://api.example.com/api/v1.`,
    );
  }
  return baseUrl;
}

/**
 * Settings for `carbon config`: where the config lives and which profile is meant, nothing more.
 * Keys, the engine, retries and the ledger are left out on purpose, so a bad CARBON_API_KEY, a
 * malformed CARBON_BUSY_TIMEOUT_MS or a profile that does not exist yet (`config set --profile
 * staging …` creates it) cannot stop the command that is there to inspect and fix them.
 */
export function resolveConfigSettings(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Settings {
  const { CARBON_API_KEY: _key, CARBON_BASE_URL: _url, CARBON_MAX_RETRIES: _retries, CARBON_TIMEOUT: _timeout, ...rest } = env;
  return resolveSettings(opts.profile === undefined ? { local: true } : { profile: opts.profile, local: true }, rest, {
    allowMissingProfile: true,
    ledger: false,
  });
}
