import { join } from 'node:path';
import { maskKey, redactSecrets } from '../../../service/keys.js';
import {
  CONFIG_FILE,
  CONFIG_KEYS,
  type ConfigData,
  type ConfigKey,
  checkConfigValue,
  checkProfileName,
  DEFAULT_PROFILE,
  isConfigKey,
  type Profile,
  profileFlag,
  profileNamed,
  writeConfig,
} from '../../config-store.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { inCi } from '../../output.js';
import { maskSecret } from '../../watch/forward.js';

/**
 * `carbon config`: the profiles in config.json. Every subcommand acts on the profile the global
 * --profile / CARBON_PROFILE names, else the current one. Keys are masked in everything printed
 * (`get --reveal` is the one deliberate exception), so `config list` can be pasted into a ticket.
 */

const KEY_NAMES = Object.keys(CONFIG_KEYS) as ConfigKey[];
const isSecret = (key: ConfigKey) => key === 'test-key' || key === 'live-key';

function configKey(name: string): ConfigKey {
  if (name === WEBHOOK_SECRET)
    throw usage(
      'webhook-secret is made by `carbon watch --forward-to`, not set by hand; `carbon config unset webhook-secret` has the next run make a new one.',
    );
  if (!isConfigKey(name)) {
    const meant = meantKey(name);
    throw usage(
      `Unknown config key "${name}"${meant === undefined ? '' : ` (did you mean ${meant}?)`}; the keys are ${KEY_NAMES.join(', ')}, and webhook-secret to get or unset.`,
    );
  }
  return name;
}

/** The key a mistyped name most likely meant: another spelling of one (`base_url`, `testKey`), or any key (`api-key`) or URL named. */
function meantKey(name: string): string | undefined {
  const spelt = name
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[_\s]+/g, '-');
  if (isConfigKey(spelt)) return spelt;
  if (/key|token|secret/.test(spelt)) return 'test-key or live-key';
  if (/url|host|endpoint/.test(spelt)) return 'base-url';
  return undefined;
}

/**
 * carbon's own field, made by `carbon watch --forward-to`: read (masked, unless --reveal) and
 * removed, so the next run makes a new one (a secret rotated), but never set by hand.
 */
const WEBHOOK_SECRET = 'webhook-secret';
type ReadKey = ConfigKey | typeof WEBHOOK_SECRET;
const readKey = (name: string): ReadKey => (name === WEBHOOK_SECRET ? name : configKey(name));
const field = (key: ReadKey): keyof Profile => (key === WEBHOOK_SECRET ? 'webhook_secret' : CONFIG_KEYS[key]);

/** A value as it may be printed: API keys and the signing secret masked, and a key inside another value (a base URL's path or query). */
function shown(key: ReadKey, value: string): string {
  if (key === WEBHOOK_SECRET) return maskSecret(value);
  return isSecret(key) ? maskKey(value) : redactSecrets(value);
}

/** A profile with its keys masked, using the API's snake_case field names (as in config.json). */
function maskedProfile(profile: Profile): Profile {
  const out: Profile = { ...profile };
  if (out.test_key !== undefined) out.test_key = maskKey(out.test_key);
  if (out.live_key !== undefined) out.live_key = maskKey(out.live_key);
  if (out.webhook_secret !== undefined) out.webhook_secret = maskSecret(out.webhook_secret);
  if (out.base_url !== undefined) out.base_url = redactSecrets(out.base_url);
  // A hand-edited mode is any text (settings.ts refuses it where it is used): a key left there is masked too.
  if (out.mode !== undefined) out.mode = redactSecrets(out.mode) as Profile['mode'];
  return out;
}

function currentProfile(config: ConfigData): string {
  return config.current_profile ?? DEFAULT_PROFILE;
}

/** A profile's name as a note says it: a hand-edited file's name with a key's shape masked (errors and warnings are masked as they are printed; notes are not). */
function profileLabel(ctx: Context): string {
  return ctx.settings.profileName === DEFAULT_PROFILE ? 'profile default' : `profile ${redactSecrets(ctx.settings.profileName)}`;
}

/**
 * `-` reads the value from stdin (`pass show carbon/test | carbon config set test-key -`): no key
 * in shell history. On a terminal it asks, and what is typed or pasted is not shown.
 */
async function readValue(ctx: Context, key: ConfigKey, value: string): Promise<string> {
  if (value !== '-') return value;
  let text: string;
  if (process.stdin.isTTY) {
    // A CI job given a terminal has nobody to type into it: the question would wait for its timeout.
    if (inCi(ctx.env))
      throw usage(
        `Nobody can type the ${key} here: stdin is a terminal, and CI=${ctx.env.CI} says this is a CI job; nothing was set.`,
        `Give it on stdin: printf %s "$KEY" | carbon config set ${key} -`,
      );
    const { askHidden } = await import('../../prompt.js');
    const what = isSecret(key) ? `the ${key} (it will not be shown)` : `the ${key}`;
    text = await askHidden(ctx.out, `Paste or type ${what}, then press Enter: `, 'Cancelled; nothing was set.');
  } else {
    // Read as a stream, which waits for the value: process.stdin, looked at above, makes a pipe
    // non-blocking, and a plain read of it threw EAGAIN when the value came after carbon started
    // (`pass show carbon/test |`, asking for a passphrase first; a script writing it a moment later).
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    text = Buffer.concat(chunks).toString('utf8').trim();
  }
  if (text === '') throw usage(process.stdin.isTTY ? 'No value was typed; nothing was set.' : 'No value on stdin.');
  return text;
}

export async function set(ctx: Context, name: string, rawValue: string): Promise<void> {
  const key = configKey(name);
  const profileName = ctx.settings.profileName;
  if (profileNamed(ctx.settings.config, profileName) === undefined) checkProfileName(profileName);
  const value = checkConfigValue(key, await readValue(ctx, key, rawValue));
  // Once the key is taken: a refusal is its one line.
  if (isSecret(key) && rawValue !== '-') {
    ctx.out.warn(
      `an API key typed on the command line can be read by other users (ps) and stays in shell history; prefer \`carbon config set ${key} -\` with the key on stdin.`,
    );
  }
  await writeConfig(ctx.settings.paths.configDir, (data) => {
    const profiles = data.profiles ?? {};
    profiles[profileName] = { ...profileNamed(data, profileName), [CONFIG_KEYS[key]]: value };
    return { ...data, profiles };
  });
  ctx.out.info(`Set ${key} of ${profileLabel(ctx)} to ${shown(key, value)}.`);
}

/**
 * `config get` and `config unset` read a profile that exists (or the default): a misspelt
 * `--profile` is said as every other command says it, not read as a key that is not set.
 */
function mustExist(ctx: Context): void {
  const profileName = ctx.settings.profileName;
  if (profileName === DEFAULT_PROFILE || profileNamed(ctx.settings.config, profileName) !== undefined) return;
  checkProfileName(profileName);
  throw usage(
    `No profile named "${profileName}".`,
    'List profiles with `carbon config list`; create one with `carbon config set --profile NAME ...`.',
  );
}

export async function get(ctx: Context, name: string, flags: { reveal?: boolean }): Promise<void> {
  const key = readKey(name);
  mustExist(ctx);
  const value = profileNamed(ctx.settings.config, ctx.settings.profileName)?.[field(key)];
  if (value === undefined) {
    // Exit 5, "not found", so a script can test for it: `carbon config get base-url || …`.
    throw new CliError(
      `${key} is not set in ${profileLabel(ctx)}.`,
      EXIT.notFound,
      'config_key_unset',
      key === WEBHOOK_SECRET
        ? '`carbon watch --forward-to URL` makes one.'
        : `Set it with \`carbon config set${profileFlag(ctx.settings.config, ctx.settings.profileName)} ${key} ${isSecret(key) ? '-' : 'VALUE'}\`${isSecret(key) ? ' (it asks for the key, or reads it from stdin)' : ''}.`,
    );
  }
  const printed = flags.reveal ? value : shown(key, value);
  if (ctx.out.json) return ctx.out.jsonDocument({ profile: redactSecrets(ctx.settings.profileName), key, value: printed });
  ctx.out.data(printed);
}

export async function unset(ctx: Context, name: string): Promise<void> {
  const key = readKey(name);
  mustExist(ctx);
  const profileName = ctx.settings.profileName;
  let had = false;
  await writeConfig(ctx.settings.paths.configDir, (data) => {
    const profile = profileNamed(data, profileName);
    // Set on each run of this change: the last, under the config's lock, is what was done.
    had = profile?.[field(key)] !== undefined;
    if (profile !== undefined) delete profile[field(key)];
    return data;
  });
  ctx.out.info(had ? `Removed ${key} from ${profileLabel(ctx)}.` : `${key} was not set in ${profileLabel(ctx)}; nothing to remove.`);
}

export async function use(ctx: Context, profileName: string): Promise<void> {
  const exists = profileNamed(ctx.settings.config, profileName) !== undefined;
  // A typo here would silently switch every later command to an empty profile (the local
  // engine, no keys); so only a profile that exists, or the default, can be made current.
  if (!exists && profileName !== DEFAULT_PROFILE) {
    // A name no profile can have is said as `config set` says it, not sent to a command that would refuse it too.
    checkProfileName(profileName);
    throw usage(
      `No profile named "${profileName}".`,
      `Create it with \`carbon config set --profile ${profileName} test-key -\` (it asks for the key, or reads it from stdin; or base-url, mode, live-key).`,
    );
  }
  await writeConfig(ctx.settings.paths.configDir, (data) => ({ ...data, current_profile: profileName }));
  ctx.out.info(`Now using profile ${redactSecrets(profileName)}.`);
  if (ctx.env.CARBON_PROFILE)
    ctx.out.warn(`CARBON_PROFILE=${ctx.env.CARBON_PROFILE} is set in this environment and still wins over the current profile.`);
}

/** `carbon config delete PROFILE`: the profile and its keys gone; the current one again `default` if it was. */
export async function remove(ctx: Context, profileName: string): Promise<void> {
  if (profileNamed(ctx.settings.config, profileName) === undefined)
    throw usage(`No profile named "${redactSecrets(profileName)}".`, 'List profiles with `carbon config list`.');
  let wasCurrent = false;
  await writeConfig(ctx.settings.paths.configDir, (data) => {
    const { [profileName]: _deleted, ...profiles } = data.profiles ?? {};
    const next: ConfigData = { ...data, profiles };
    wasCurrent = currentProfile(data) === profileName;
    if (wasCurrent) delete next.current_profile;
    return next;
  });
  const again = wasCurrent && profileName !== DEFAULT_PROFILE ? `; the current profile is ${DEFAULT_PROFILE} again` : '';
  ctx.out.info(`Deleted profile ${redactSecrets(profileName)} and its keys${again}.`);
}

/** What `config list --json` prints: every profile, keys masked. */
interface ConfigListing {
  config_file: string;
  current_profile: string;
  /** The profile this command resolved to (--profile / CARBON_PROFILE / current). */
  selected_profile: string;
  profiles: Record<string, Profile>;
}

function listing(ctx: Context): ConfigListing {
  const { config } = ctx.settings;
  // Names too: a hand-edited file may name a profile by a key.
  const profiles = Object.fromEntries(Object.entries(config.profiles ?? {}).map(([name, p]) => [redactSecrets(name), maskedProfile(p)]));
  return {
    config_file: join(ctx.settings.paths.configDir, CONFIG_FILE),
    current_profile: redactSecrets(currentProfile(config)),
    selected_profile: redactSecrets(ctx.settings.profileName),
    profiles,
  };
}

export async function list(ctx: Context): Promise<void> {
  const listed = listing(ctx);
  if (ctx.out.json) return ctx.out.jsonDocument(listed);
  const entries = Object.entries(listed.profiles);
  // The settable keys, then the signing secret `watch` made (masked): a profile with only that is not empty.
  const fields = (p: Profile): Array<readonly [string, string]> => [
    ...KEY_NAMES.filter((k) => p[CONFIG_KEYS[k]] !== undefined).map((k) => [k, p[CONFIG_KEYS[k]]!] as const),
    ...(p.webhook_secret === undefined ? [] : [['webhook-secret', p.webhook_secret] as const]),
  ];
  // Plain rows for scripts: profile, key, value; masked like everything else.
  const rows = entries.flatMap(([name, p]) => fields(p).map(([k, v]) => `${name}\t${k}\t${v}\n`));
  if (entries.length === 0 || (rows.length === 0 && !ctx.out.interactive)) {
    // As gh does: nothing on stdout, for a script, and one line on stderr for a person at a terminal.
    if (ctx.out.stderrInteractive)
      ctx.out.info(
        `Nothing is set in ${listed.config_file}: carbon uses the local engine, in test mode. Set a key with \`carbon config set test-key -\` (it asks for the key, or reads it from stdin; or base-url, mode, live-key).`,
      );
  } else if (!ctx.out.interactive) {
    ctx.out.stdout.write(rows.join(''));
  } else {
    const paint = await ctx.paint();
    const lines: string[] = [];
    for (const [name, p] of entries) {
      const current = name === listed.current_profile;
      const marks = [current && 'current', name === listed.selected_profile && !current && 'selected'].filter(Boolean);
      lines.push(`${paint.bold(name)}${marks.length > 0 ? paint.dim(` (${marks.join(', ')})`) : ''}`);
      const set = fields(p);
      if (set.length === 0) lines.push(paint.dim('  (empty)'));
      const width = Math.max(8, ...set.map(([k]) => k.length));
      for (const [k, v] of set) lines.push(`  ${paint.dim(k.padEnd(width))}  ${v}`);
    }
    ctx.out.data(lines.join('\n'));
    ctx.out.info((await ctx.paint('stderr')).dim(listed.config_file));
  }
  // A profile named (the current one in config.json, CARBON_PROFILE, --profile) that the file does not
  // hold stops every other command: said here, where it is looked at to be fixed.
  if (ctx.settings.profileName !== DEFAULT_PROFILE && profileNamed(ctx.settings.config, ctx.settings.profileName) === undefined) {
    // Named by --profile or CARBON_PROFILE, which outrank the current one: `config use` would change nothing.
    const byFile = ctx.settings.config.current_profile === ctx.settings.profileName && !ctx.env.CARBON_PROFILE;
    const way = byFile
      ? 'Choose one with `carbon config use NAME`'
      : 'It is named by --profile or CARBON_PROFILE, which come before `carbon config use`: name one the file holds (or unset CARBON_PROFILE)';
    ctx.out.warn(
      `profile "${listed.selected_profile}" is selected, but ${listed.config_file} does not hold it: every command but \`carbon config\` stops on it (exit 2). ${way}, or create it with \`carbon config set --profile NAME ...\`.`,
    );
  }
  for (const name of ['CARBON_API_KEY', 'CARBON_BASE_URL'] as const) {
    if (ctx.env[name]) ctx.out.info(`note: ${name} is set in this environment and overrides the profile.`);
  }
}
