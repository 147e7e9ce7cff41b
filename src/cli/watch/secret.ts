import type { Context } from '../context.js';

/**
 * The profile's signing secret, made the first time it is needed. A new one is shown once, and
 * only to a person (stderr a terminal): a CI log keeps what it is given, so there one line says
 * how to print it (`--print-secret`, to stdout, asked for by name).
 */
export async function signingSecret(ctx: Context, show: boolean): Promise<string> {
  const [{ readConfig, writeConfig }, { resolvePaths }] = await Promise.all([import('../config-store.js'), import('../paths.js')]);
  const { configDir } = resolvePaths(ctx.env);
  const name = ctx.settings.profileName;
  const existing = readConfig(configDir).profiles?.[name]?.webhook_secret;
  if (existing !== undefined) return existing;
  const { newSecret, maskSecret } = await import('./forward.js');
  const made = await newSecret();
  // Another carbon watch may have made one since the read above: inside the config's lock, the
  // secret the file holds is kept, so the first one made is the one every racer signs with.
  const kept = await writeConfig(configDir, (data) => ({
    ...data,
    profiles: { ...data.profiles, [name]: { ...data.profiles?.[name], webhook_secret: data.profiles?.[name]?.webhook_secret ?? made } },
  }));
  const secret = kept.profiles?.[name]?.webhook_secret ?? made;
  if (secret !== made) return secret;
  const { followUp } = await import('../follow-up.js');
  const again = `\`${followUp(['watch', '--print-secret'])}\``;
  // The secret is shown here on purpose; a profile's name with a key's shape is not.
  const shownName = (await import('../../service/keys.js')).redactSecrets(name);
  if (show && ctx.out.stderrInteractive)
    ctx.out.info(`Your signing secret is ${secret} (kept in profile ${shownName}; shown this once: ${again} prints it again).`);
  else if (show)
    ctx.out.info(`A signing secret ${maskSecret(secret)} was made and kept in profile ${shownName}; ${again} writes it to stdout.`);
  return secret;
}
