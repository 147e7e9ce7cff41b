/**
 * A PostgreSQL URL as carbon takes it: `postgres://user:password@host:port/db?schema=team_a`.
 * The schema (default `carbon`) is carbon's own parameter, taken out before the driver sees the
 * URL. The password is never shown: `maskUrl` is what errors, logs and `config list` print.
 */
const DEFAULT_SCHEMA = 'carbon';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function parseDatabaseUrl(url: string, schema?: string): { connectionString: string; schema: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${maskUrl(url)}`);
  }
  const fromUrl = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  const chosen = schema ?? fromUrl ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(chosen))
    throw new Error(`the schema name "${chosen}" must be lowercase letters, digits and _ (at most 63), starting with a letter or _`);
  return { connectionString: parsed.toString(), schema: chosen };
}

/** Whether the URL carries a password (or a parameter that looks like one). */
export function hasPassword(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || [...u.searchParams.keys()].some((name) => SECRET_PARAM.test(name));
  } catch {
    return false;
  }
}
const SECRET_PARAM = /pass|secret|token|key/i;

/** The URL with its password (and anything that looks like one) replaced by `***`. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    for (const name of [...u.searchParams.keys()]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    // Not parseable: show no more than its scheme.
    return url.replace(/^([a-z]+:\/\/)?.*$/i, (_, scheme: string | undefined) => `${scheme ?? ''}…`);
  }
}
