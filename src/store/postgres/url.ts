import { type SslChoice, sslProblem, takeSsl } from './ssl.js';

/**
 * A PostgreSQL URL as carbon takes it: `postgres://user:password@host:port/db?schema=team_a`.
 * The schema (default `carbon`) is carbon's own parameter, taken out before the driver sees the
 * URL, and so are its SSL parameters (ssl.ts: sslmode as psql reads it). The password is never shown: `maskUrl` is what errors, logs and `config list` print.
 */
const DEFAULT_SCHEMA = 'carbon';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The parameters a URL may carry: carbon's (`schema`, ssl.ts's) and libpq's, as psql takes them
 * (some the driver does not act on, as psql would not on carbon's; the driver's own deadlines are
 * carbon's, CARBON_PG_…_TIMEOUT_MS, and not taken here). Any other is a typo carbon
 * would otherwise pass over (`?shema=team_a` landing on the default schema, another team's
 * sandbox): refused, as psql refuses it.
 */
const PARAMETERS =
  'schema uselibpqcompat ssl database host hostaddr port dbname user password passfile require_auth channel_binding ' +
  'connect_timeout client_encoding options application_name fallback_application_name keepalives keepalives_idle ' +
  'keepalives_interval keepalives_count tcp_user_timeout replication gssencmode sslmode requiressl sslnegotiation ' +
  'sslcompression sslcert sslkey sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer ' +
  'ssl_min_protocol_version ssl_max_protocol_version min_protocol_version max_protocol_version krbsrvname gsslib ' +
  'gssdelegation service target_session_attrs load_balance_hosts';

/** Why the URL's parameters name no one setting: one neither carbon nor PostgreSQL reads, or one given twice. */
function parameterProblem(params: URLSearchParams): string | undefined {
  // Made when a URL is read (not at every start: the SQLite commands read this file too).
  const known = new Set(PARAMETERS.split(' '));
  for (const name of new Set(params.keys())) {
    // A name is shown only where it is a word (a pasted secret is not).
    const what = /^[A-Za-z_]{1,40}$/.test(name) ? `the parameter "${name}"` : 'one of its parameters';
    if (!known.has(name)) {
      const hint = /sch|hem/i.test(name) ? ' (a schema is ?schema=NAME)' : '';
      return `${what} is not one carbon or PostgreSQL reads${hint}`;
    }
    if (params.getAll(name).length > 1) return `${what} is given more than once; give it once`;
    // PostgreSQL's protocol ends each setting at a NUL: the server refused it as a broken message (08P01), said as an outage.
    if (params.get(name)!.includes('\0')) return `${what} holds a NUL character (%00), which PostgreSQL cannot take`;
  }
  return undefined;
}

/**
 * The URL as psql (libpq) reads it: the user and password run to the last `@` before the first
 * `/`, so a `#` or `?` in them is theirs. A URL reader would end the host there instead, taking
 * `carbon:2024` of `carbon:2024#pw@db` for a host and port and the password for a fragment (then
 * shown whole, as no password), or, with an `@` in the password too (`carbon:pw@x#y@db`), `x` for
 * the host while the label names `db`. So a `#` or `?` in them is percent-encoded first.
 */
function read(url: string): URL {
  const encoded = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/]*)@/i, (_, scheme: string, userinfo: string) => {
    return `${scheme}${userinfo.replace(/#/g, '%23').replace(/\?/g, '%3F')}@`;
  });
  // libpq has no fragment: a `#` anywhere is the text's (`?password=2024#Winter` is that password,
  // which a URL reader cut at the `#`, sending `2024` and showing `#Winter` as a fragment).
  return new URL(encoded.replace(/#/g, '%23'));
}

/**
 * Whether a `/` in the user or password cut the URL's address short (psql reads it so too): the
 * rest of the password, with the real host, is in `after` (the path; or the query and fragment too,
 * where the password also held a `?` or `#`). Nothing is left for the user (`carbon:80/pw@db`), or,
 * with an `@` in the password before its `/` (`carbon:pw@x/y@db`), a part of the password is the
 * host and the rest, with an `@`, is in the path.
 */
const cutShort = (u: URL, after: string): boolean =>
  u.pathname.includes('@') || (u.username === '' && u.password === '' && after.includes('@'));
const beyondHost = (u: URL): string => `${u.pathname}${u.search}${u.hash}`;

/**
 * The URL for the driver, the schema, the SSL choice, and the server options every connection starts
 * with: the URL's own `options` (`-c statement_timeout=30000`), then the ledger's schema as the
 * search_path. Taken out of the URL: the driver let the URL's `options` replace carbon's, and the
 * schema with it (a sandbox made in `public`, or another team's schema).
 */
export function parseDatabaseUrl(
  url: string,
  schema?: string,
): { connectionString: string; schema: string; options: string; ssl?: SslChoice } {
  const { parsed, chosen } = urlAndSchema(url, schema);
  const ssl = takeSsl(parsed.searchParams);
  const options = [...parsed.searchParams.getAll('options'), `-c search_path=${chosen}`].join(' ');
  parsed.searchParams.delete('options');
  return { connectionString: parsed.toString(), schema: chosen, options, ...(ssl !== undefined ? { ssl } : {}) };
}

/** The URL read (its `schema` parameter taken out) and the schema chosen; throws what makes them no ledger's. */
function urlAndSchema(url: string, schema: string | undefined): { parsed: URL; chosen: string } {
  let parsed: URL;
  try {
    parsed = read(url);
  } catch {
    // A "/" before the "@" ends the host: the password (or user name) holding one is what broke it.
    const slash = /^[a-z][a-z0-9+.-]*:\/\/[^/@]*\/[^@]*@/i.test(url);
    throw new Error(`not a URL: ${maskUrl(url)}${slash ? ' (a "/" in the user name or password must be written %2F)' : ''}`);
  }
  if (cutShort(parsed, parsed.pathname))
    throw new Error(`not a URL: ${maskUrl(url)} (a "/" in the user name or password must be written %2F)`);
  if ([parsed.username, parsed.password, parsed.pathname].some((part) => part.toLowerCase().includes('%00')))
    throw new Error('the user name, password or database name holds a NUL character (%00), which PostgreSQL cannot take');
  const mistyped = parameterProblem(parsed.searchParams);
  if (mistyped !== undefined) throw new Error(mistyped);
  const fromUrl = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  if (schema !== undefined && fromUrl !== null && schema !== fromUrl)
    throw new Error(
      `the schema is ${JSON.stringify(schema.slice(0, 63))} (--database-schema or CARBON_DATABASE_SCHEMA) and ${JSON.stringify(fromUrl.slice(0, 63))} in the URL; give one`,
    );
  const chosen = schema ?? fromUrl ?? DEFAULT_SCHEMA;
  // The schema is carbon's to set (parseDatabaseUrl): a search_path of the URL's own names another, or none of carbon's.
  if (parsed.searchParams.getAll('options').some((o) => /search_path/i.test(o)))
    throw new Error(
      `the URL's options set search_path, which carbon sets to the ledger's schema ("${chosen}"); name the schema with ?schema=NAME instead`,
    );
  if (!SCHEMA_NAME.test(chosen))
    throw new Error(`the schema name "${chosen}" must be lowercase letters, digits and _ (at most 63), starting with a letter or _`);
  if (chosen.startsWith('pg_') || chosen === 'information_schema')
    throw new Error(`the schema name "${chosen}" is PostgreSQL's own (pg_… and information_schema are reserved); choose another`);
  return { parsed, chosen };
}

/**
 * What makes a database URL and schema, as typed, name no ledger (not a URL, a bad schema name, an
 * SSL parameter that is none of its values: ssl.ts, sslProblem), or undefined: a setting mistyped,
 * said before anything is opened (the CLI's exit 2).
 */
export function databaseSettingProblem(url: string, schema?: string): string | undefined {
  try {
    return sslProblem(urlAndSchema(url, schema).parsed.searchParams);
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether the URL carries a password (or a parameter that looks like one). */
export function hasPassword(url: string): boolean {
  try {
    const u = read(url);
    return u.password !== '' || cutShort(u, beyondHost(u)) || [...u.searchParams.keys()].some((name) => SECRET_PARAM.test(name));
  } catch {
    return false;
  }
}
const SECRET_PARAM = /pass|secret|token|key/i;
/** A query's `name=value` whose name is SECRET_PARAM's, in text that is no URL. */
const SECRET_PAIR = /([?&][^=&#]*(?:pass|secret|token|key)[^=&#]*=)[^&#]*/gi;

/** The URL with its password (and anything that looks like one) replaced by `***`. */
export function maskUrl(url: string): string {
  try {
    const u = read(url);
    if (cutShort(u, beyondHost(u))) {
      // `postgres://carbon:80/pw@db:5432/x`: the "host" is the user, and all up to the last `@` the
      // password; `postgres://carbon:p@w/d@db/x`: the user is the user, the password the same.
      const rest = url.slice(url.lastIndexOf('@') + 1).replace(SECRET_PAIR, '$1***');
      return `${u.protocol}//${u.username || u.hostname}:***@${rest}`;
    }
    if (u.password !== '') u.password = '***';
    for (const name of [...u.searchParams.keys()]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    // Not parseable: show no more than its scheme.
    return url.replace(/^([a-z]+:\/\/)?.*$/i, (_, scheme: string | undefined) => `${scheme ?? ''}…`);
  }
}
