import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODES, type Mode } from '../api/types.js';
import { makeDirs } from '../platform/dirs.js';
import { keyShape, redactSecrets } from '../service/keys.js';
import { CliError, usage } from './errors.js';
import { EXIT } from './exit-codes.js';
import { shellWord } from './follow-up.js';
import { tighten } from './private-file.js';

export const isMode = (value: string): value is Mode => (MODES as readonly string[]).includes(value);

/** One profile: the keys and the endpoint a team or an environment uses. */
export interface Profile {
  test_key?: string;
  live_key?: string;
  /** The mode used when neither --live nor --test is given; test unless set. */
  mode?: Mode;
  /** The remote API; absent means the local engine. */
  base_url?: string;
  /** `carbon watch --forward-to`'s signing secret (whsec_…): made by carbon watch, not set by hand. */
  webhook_secret?: string;
}

/** Profile fields carbon writes itself, beside the settable ones of CONFIG_KEYS. */
const OWN_FIELDS: ReadonlyArray<keyof Profile> = ['webhook_secret'];

export interface ConfigData {
  /** The profile used when neither --profile nor CARBON_PROFILE names one. */
  current_profile?: string;
  profiles?: Record<string, Profile>;
}

export const CONFIG_FILE = 'config.json';
export const DEFAULT_PROFILE = 'default';

/** The settable keys, as typed on the command line, and the profile field each sets. */
export const CONFIG_KEYS = {
  'test-key': 'test_key',
  'live-key': 'live_key',
  mode: 'mode',
  'base-url': 'base_url',
} as const satisfies Record<string, keyof Profile>;

export type ConfigKey = keyof typeof CONFIG_KEYS;

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, name);
}

/** A profile by its name: the file's own entries only, so `toString` or `__proto__` names none. */
export function profileNamed(config: ConfigData, name: string): Profile | undefined {
  return config.profiles !== undefined && Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined;
}

/**
 * ` --profile NAME` for a command printed to fix profile `name` (`carbon config set…`), or '' when
 * it is the current profile, where `config set` goes without one: a command without it would act
 * on another profile than the one meant (chosen by --profile or CARBON_PROFILE).
 */
export function profileFlag(config: ConfigData, name: string): string {
  return name === (config.current_profile ?? DEFAULT_PROFILE) ? '' : ` --profile ${shellWord(name)}`;
}

/**
 * A new profile's name: one word that `config list`'s tab-separated rows, shell completion and
 * a command line carry as it is (no space, tab or line break), and that no JavaScript object
 * already has (`__proto__`). Profiles a hand-edited file already holds are read whatever they are called.
 */
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkProfileName(name: string): void {
  if (!PROFILE_NAME.test(name)) {
    throw usage(
      `${JSON.stringify(name)} cannot name a profile: use letters, digits, '.', '-' and '_', starting with a letter or digit (at most 64).`,
    );
  }
  // A name is printed whole wherever the profile is named: one that holds a key (pasted in the wrong place) would show it.
  if (redactSecrets(name) !== name)
    throw usage(
      `${JSON.stringify(redactSecrets(name))} cannot name a profile: it has the shape of a key, and a profile's name is shown in full.`,
    );
}

/**
 * Reads config.json directly: the read path runs on every command, and a plain JSON read costs
 * nothing next to loading conf's schema validator. Writes go through conf (see writeConfig).
 * `tighten: false` (shell completion, whose stderr nobody sees) leaves a file readable by others
 * as it is, for the next command to tighten and say so.
 */
export function readConfig(configDir: string, { tighten: tightenIt = true } = {}): ConfigData {
  const path = join(configDir, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    // CARBON_HOME names a file (or a path through one), or is longer than the system takes: no config file to fix or move aside.
    if (code === 'ENOTDIR' || code === 'ENAMETOOLONG')
      throw new CliError(
        code === 'ENOTDIR'
          ? `${configDir} is not a directory: carbon keeps its config and its ledger in one.`
          : `The path to carbon's config is longer than this system takes (${path.length} characters).`,
        EXIT.failure,
        'config_error',
        code === 'ENOTDIR' ? 'Set CARBON_HOME to a directory (carbon makes it if it is missing).' : 'Set CARBON_HOME to a shorter path.',
      );
    throw brokenConfig(path, (err as Error).message);
  }
  let data: unknown;
  try {
    // A byte-order mark (Notepad saves one) is no part of the JSON: read past, as a CSV's is.
    data = JSON.parse(withoutBom(text));
  } catch (err) {
    throw brokenConfig(path, `it is not valid JSON (${jsonProblem(err as Error)})`);
  }
  const problem = checkConfig(data);
  if (problem) throw brokenConfig(path, problem);
  // It holds API keys: readable by its owner only, whatever a copy or a restore left.
  if (tightenIt) {
    tighten(configDir, 0o700);
    tighten(path, 0o600);
  }
  return data as ConfigData;
}

const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** JSON.parse's complaint without the text V8 quotes around it (a short config.json whole, its keys too); a character not seen (U+200B) by its code. */
function jsonProblem({ message }: Error): string {
  if (!message.startsWith("Unexpected token '")) return message.replace(/, ".*" is not valid JSON$/s, '');
  const c = message.charAt(18);
  return /[\p{L}\p{N}\p{P}\p{S}]/u.test(c)
    ? `unexpected '${c}'`
    : `unexpected U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function brokenConfig(path: string, reason: string): CliError {
  return new CliError(
    `The config file ${path} cannot be used: ${reason}.`,
    EXIT.failure,
    'config_error',
    `Fix it by hand, or move it aside and set your keys again with \`carbon config set\`.`,
  );
}

/** A shape check for hand-edited files; returns what is wrong, or null. */
function checkConfig(data: unknown): string | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'it is not a JSON object';
  const { current_profile, profiles, ...unknown } = data as Record<string, unknown>;
  // A misspelt `curent_profile` would otherwise run every command on the default profile, unsaid.
  const [stray] = Object.keys(unknown);
  if (stray !== undefined) return `it has an unknown field "${stray}" (carbon reads current_profile and profiles)`;
  if (current_profile !== undefined && typeof current_profile !== 'string') return '"current_profile" is not a string';
  if (profiles === undefined) return null;
  if (profiles === null || typeof profiles !== 'object' || Array.isArray(profiles)) return '"profiles" is not an object';
  for (const [name, profile] of Object.entries(profiles)) {
    if (profile === null || typeof profile !== 'object' || Array.isArray(profile)) return `profile "${name}" is not an object`;
    for (const [field, value] of Object.entries(profile)) {
      if (![...Object.values(CONFIG_KEYS), ...OWN_FIELDS].includes(field as keyof Profile))
        return `profile "${name}" has an unknown field "${field}"`;
      if (typeof value !== 'string') return `profile "${name}" field "${field}" is not a string`;
    }
  }
  return null;
}

/** Checks a value before it is stored, so a typo fails now rather than at the next purchase. */
export function checkConfigValue(key: ConfigKey, value: string): string {
  switch (key) {
    case 'mode':
      if (!isMode(value)) throw usage(`mode must be test or live, not "${value}".`);
      return value;
    case 'test-key':
    case 'live-key': {
      const problem = keyProblem(value, key === 'test-key' ? 'test' : 'live');
      if (problem !== undefined) throw usage(`${key} ${problem}.`);
      return value;
    }
    case 'base-url': {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        throw usage(`base-url must be a URL such as https://api.example.com/api/v1, not "${value}".`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw usage('base-url must be an http(s) URL.');
      // As every command refuses it (settings.ts): a key there would be printed by `config list`
      // and every message naming the URL. Refused now, and not echoed.
      if (url.username !== '' || url.password !== '') {
        throw usage(
          'base-url must not carry a user name or password (a key there would show wherever the URL is printed); nothing was set. Give the key with `carbon config set test-key -` (or live-key).',
        );
      }
      if (/[?#]/.test(value))
        throw usage("base-url must not have a query (?) or a fragment (#): every request's path follows it; nothing was set.");
      return value.replace(/\/+$/, '');
    }
  }
}

/**
 * What is wrong with a key given for `mode`, or undefined: its shape is PREFIX_MODE_ and at least
 * 12 letters or digits. Said part by part, so the message names what to fix; the key itself is
 * never echoed (its prefix and mode are public, the rest is the secret).
 */
function keyProblem(value: string, mode: Mode): string | undefined {
  const shape = keyShape(value);
  if (shape === null) return `must be a ${mode} key: your service prefix, _${mode}_, then at least 12 letters or digits`;
  const { prefix, mode: keyMode, rest } = shape;
  if (keyMode !== mode) return `must be a ${mode} key, and this is a ${keyMode} key (set it as ${keyMode}-key)`;
  const start = `${prefix}_${mode}_`;
  if (/[^A-Za-z0-9]/.test(rest)) {
    return `may hold only letters and digits after ${start}, and this one holds ${/\s/.test(rest) ? 'a space or line break' : 'other characters'}`;
  }
  if (rest.length < 12) return `is too short: ${rest.length} letters or digits after ${start}, where a key has at least 12`;
  return undefined;
}

/**
 * Changes the config through conf: its atomic writes and schema validation are its real job.
 * Loaded only here, so commands that only read never pay for it. The directory is 0700 and
 * the file 0600: it holds API keys.
 */
export async function writeConfig(configDir: string, change: (data: ConfigData) => ConfigData): Promise<ConfigData> {
  try {
    return await writeConfigFile(configDir, change);
  } catch (err) {
    // A full disk, a read-only or foreign directory: say which file, and that it was left as it was
    // (conf writes a temporary file and renames it into place, so a failed write changes nothing).
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw err;
    throw new CliError(
      `The config file ${join(configDir, CONFIG_FILE)} could not be written (${(err as Error).message}).`,
      EXIT.failure,
      'config_error',
      code === 'ENOSPC'
        ? 'Free some space and try again; the file was not changed.'
        : `Check the permissions of ${configDir}, or set CARBON_HOME to a writable directory; the file was not changed.`,
    );
  }
}

/**
 * Reads, changes and writes the file holding its lock (config-lock.ts), so that writers running at
 * once (`config set` of two profiles in one CI job, `carbon watch` making a secret beside it) each
 * change the file as the one before left it. `change` only computes: it runs on the file as read
 * (to see whether it changes anything) and again, under the lock, on the file as it is then.
 */
async function writeConfigFile(configDir: string, change: (data: ConfigData) => ConfigData): Promise<ConfigData> {
  const path = join(configDir, CONFIG_FILE);
  // A change that changes nothing (unsetting what is not set) writes nothing: no file or directory
  // is made, no lock taken, and a file a person keeps as they wrote it stays so. A broken file stops here.
  const unchanged = (current: ConfigData, next: ConfigData) => JSON.stringify(next) === JSON.stringify(current);
  const seen = readConfig(configDir);
  if (unchanged(seen, change(structuredClone(seen)))) return seen;
  makeDirs(configDir, 0o700);
  const [{ withConfigLock }, { default: Conf }] = await Promise.all([import('./config-lock.js'), import('conf')]);
  return withConfigLock(`${path}.lock`, path, async () => {
    const current = readConfig(configDir);
    const next = change(structuredClone(current));
    if (unchanged(current, next)) return current;
    storeConfig(Conf, configDir, next);
    // A directory made before carbon wrote its keys there (`mkdir $RUNNER_TEMP/carbon`): 0700 now, not at the next command.
    tighten(configDir, 0o700);
    return next;
  });
}

function storeConfig(Conf: typeof import('conf').default, configDir: string, next: ConfigData): void {
  const profileSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      test_key: { type: 'string' },
      live_key: { type: 'string' },
      // Any text, as a base URL is: one that is no mode is refused where it is used (settings.ts), not by every write.
      mode: { type: 'string' },
      base_url: { type: 'string' },
      webhook_secret: { type: 'string' },
    },
  };
  const store = new Conf<ConfigData>({
    cwd: configDir,
    configName: 'config',
    projectName: 'carbon',
    configFileMode: 0o600,
    serialize: (value) => `${JSON.stringify(value, null, 2)}\n`,
    // Read as readConfig reads it: a byte-order mark is read past (and not written back).
    deserialize: (text) => JSON.parse(withoutBom(text)),
    schema: {
      current_profile: { type: 'string' },
      profiles: { type: 'object', additionalProperties: profileSchema },
    },
  });
  store.store = next;
  chmodSync(store.path, 0o600);
}
