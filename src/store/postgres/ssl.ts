import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

/**
 * `sslmode` read as libpq (psql) documents it, by carbon rather than by node-postgres: pg 8 takes
 * `prefer`, `require` and `verify-ca` for `verify-full` and prints an 8-line SECURITY WARNING on
 * stderr saying that this will change in pg 9. The URL's SSL parameters are taken out of it and
 * said to the driver as its `ssl` option, so a URL means what it means to psql, now and after pg 9,
 * and nothing is printed. https://www.postgresql.org/docs/current/libpq-ssl.html
 *
 * - disable: no SSL. allow: no SSL, SSL if the server refuses a connection without it.
 * - prefer: SSL if the server has it, else none; require: SSL, the certificate not checked (but
 *   against `sslrootcert` where one is named, as libpq does). Both are encrypted, not authenticated.
 * - verify-ca: SSL, the certificate signed by `sslrootcert` (required); verify-full: that, and the
 *   host name the certificate's (`sslrootcert`, or Node's trusted roots where none is named or it is `system`).
 * - no-verify, node-postgres's own: require.
 * `sslcert` and `sslkey` are a client certificate; the environment's PGSSLMODE, PGSSLROOTCERT,
 * PGSSLCERT and PGSSLKEY stand in for parameters the URL lacks, as for psql. Without sslmode (in
 * the URL or PGSSLMODE) nothing is taken out and the driver reads the URL as before.
 */

const MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'] as const;
type Mode = (typeof MODES)[number];
/** Every parameter node-postgres reads as SSL's: left in the URL, it would override the `ssl` option. */
const SSL_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslnegotiation', 'uselibpqcompat', 'ssl'];

type Ssl = false | ConnectionOptions;

export interface SslChoice {
  /** The driver's `ssl` and `sslnegotiation` options. */
  options: { ssl: Ssl; sslnegotiation?: 'postgres' | 'direct' };
  /** allow and prefer: what to connect with when the first connection is refused for its SSL (or its lack). */
  otherwise?: { ssl: Ssl; when(err: unknown): boolean };
}

const NOT_VERIFIED: ConnectionOptions = { rejectUnauthorized: false };

/** The server answered the SSL request with no (ssl = off); pg's words. */
const noSslServer = (err: unknown) => err instanceof Error && /^The server does not support SSL connections/.test(err.message);
/** pg_hba.conf has only `hostssl` lines for this connection: "no pg_hba.conf entry for host …, no encryption". */
const sslOnlyServer = (err: unknown) =>
  (err as { code?: unknown }).code === '28000' && err instanceof Error && /no encryption/.test(err.message);

function readPem(name: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${name} ${path} cannot be read (${(err as { code?: string }).code ?? (err as Error).message})`);
  }
}

/** The SSL parameters, each from the URL or else the environment (PGSSLMODE …), with where each was found. */
function sslParams(params: URLSearchParams, env: NodeJS.ProcessEnv): Record<string, { value: string; from: string } | undefined> {
  const value = (name: string) => {
    const given = params.get(name);
    if (given !== null) return { value: given, from: name };
    const set = env[`PG${name.toUpperCase()}`];
    return set === undefined ? undefined : { value: set, from: `PG${name.toUpperCase()}` };
  };
  return Object.fromEntries(['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslnegotiation'].map((name) => [name, value(name)]));
}

/**
 * What is wrong in the SSL parameters as written (an unknown sslmode or sslnegotiation, a pair that
 * does not go together, verify-ca without its root certificate), naming where each was found; no
 * file is read. Undefined when nothing is: the CLI says such a setting before anything is opened
 * (exit 2), as any setting mistyped; a file that cannot be read, or a certificate that fails its
 * check, is found when connecting (exit 1).
 */
export function sslProblem(params: URLSearchParams, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const found = sslParams(params, env);
  const named = (p: { value: string; from: string }) => `${p.from} "${p.value}"`;
  // Said with or without an sslmode: the driver refused it later, as an unexpected error (exit 1).
  const negotiation = found.sslnegotiation;
  if (negotiation !== undefined && negotiation.value !== 'postgres' && negotiation.value !== 'direct')
    return `${named(negotiation)} is not postgres or direct`;
  const mode = found.sslmode;
  if (mode === undefined) return undefined;
  if (!(MODES as readonly string[]).includes(mode.value)) return `${named(mode)} is not one of ${MODES.join(', ')}`;
  if (negotiation?.value === 'direct' && ['disable', 'allow', 'prefer'].includes(mode.value))
    return `${named(mode)} may not be used with sslnegotiation=direct (use require, verify-ca or verify-full)`;
  if (mode.value === 'verify-ca' && (found.sslrootcert === undefined || found.sslrootcert.value === 'system'))
    return `${named(mode)} needs sslrootcert=<file>, the certificate of the authority that signed the server's (or use verify-full)`;
  return undefined;
}

/** The URL's SSL parameters (taken out of `params`), or undefined where neither it nor PGSSLMODE names an sslmode. */
export function takeSsl(params: URLSearchParams, env: NodeJS.ProcessEnv = process.env): SslChoice | undefined {
  const problem = sslProblem(params, env);
  if (problem !== undefined) throw new Error(problem);
  const given = sslParams(params, env);
  const mode = given.sslmode?.value;
  if (mode === undefined) return undefined;
  const found = Object.fromEntries(Object.entries(given).map(([name, p]) => [name, p?.value]));
  for (const name of SSL_PARAMS) params.delete(name);
  const negotiation = found.sslnegotiation;
  const client: ConnectionOptions = {
    ...(found.sslcert !== undefined ? { cert: readPem('sslcert', found.sslcert) } : {}),
    ...(found.sslkey !== undefined ? { key: readPem('sslkey', found.sslkey) } : {}),
  };
  const root = found.sslrootcert === 'system' ? undefined : found.sslrootcert;
  const verified: ConnectionOptions = { ...client, ...(root !== undefined ? { ca: readPem('sslrootcert', root) } : {}) };
  const { ssl, otherwise } = choose(mode as Mode, { ...client, ...NOT_VERIFIED }, verified, root !== undefined);
  return {
    options: { ssl, ...(negotiation !== undefined ? { sslnegotiation: negotiation as 'postgres' | 'direct' } : {}) },
    ...(otherwise !== undefined ? { otherwise } : {}),
  };
}

/** The `ssl` option of each mode; `verified` checks against the root certificate where `rooted` (else Node's trusted roots). */
function choose(
  mode: Mode,
  unverified: ConnectionOptions,
  verified: ConnectionOptions,
  rooted: boolean,
): Pick<SslChoice, 'otherwise'> & { ssl: Ssl } {
  // The chain checked, the host name not (verify-ca; require with a root certificate, as in libpq).
  const chainOnly: ConnectionOptions = { ...verified, checkServerIdentity: () => undefined };
  switch (mode) {
    case 'disable':
      return { ssl: false };
    case 'allow':
      return { ssl: false, otherwise: { ssl: unverified, when: sslOnlyServer } };
    case 'prefer':
      return { ssl: unverified, otherwise: { ssl: false, when: noSslServer } };
    case 'require':
      return { ssl: rooted ? chainOnly : unverified };
    case 'no-verify':
      return { ssl: unverified };
    case 'verify-ca':
      if (!rooted)
        throw new Error(
          'sslmode "verify-ca" needs sslrootcert=<file>, the certificate of the authority that signed the server\'s (or use verify-full)',
        );
      return { ssl: chainOnly };
    case 'verify-full':
      return { ssl: verified };
  }
}
