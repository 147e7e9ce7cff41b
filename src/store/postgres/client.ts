import { statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import pgpass from 'pgpass';
import { hostName } from '../../platform/host.js';
import { PASSWORD_FILE_REFUSED } from './errors.js';

/**
 * node-postgres's client, which reads a password that neither the URL nor PGPASSWORD gives from the
 * password file, as libpq does (PGPASSFILE, or ~/.pgpass; docs/security.md), with the pgpass module.
 * node-postgres 8 reads the file itself too, but then prints a DeprecationWarning on stderr at
 * every connection (its 9 will not read it at all); a password function is its way instead.
 */
export class PasswordFileClient extends pg.Client {
  // pg-pool constructs it with the pool's settings (its types say no argument).
  constructor(config?: pg.ClientConfig) {
    super(config);
    // The URL's password, or PGPASSWORD's, as node-postgres took it; none: null.
    const self = this as unknown as { password: string | null | ((params: unknown) => Promise<string | undefined>) };
    if (self.password === null || self.password === undefined)
      self.password = (params) => {
        const refused = passwordFileRefused();
        if (refused !== undefined) return Promise.reject(Object.assign(new Error(refused), { code: PASSWORD_FILE_REFUSED }));
        return new Promise((resolve) => pgpass(params as Record<string, unknown>, resolve));
      };
  }
}

/**
 * Why the password file is there and not read, or undefined: libpq (and the pgpass module) pass
 * over one that is no plain file or that others may read, and the module said so on stderr in a
 * line of its own, after which the connection failed as if there were no file. Said instead in the
 * connection's one error, with what to do. Windows keeps no such modes.
 */
export function passwordFileRefused(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'win32' || Object.hasOwn(env, 'PGPASSWORD')) return undefined;
  const file = env.PGPASSFILE || join(env.HOME || './', '.pgpass');
  let mode: number;
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    if (!st.isFile()) return `the password file ${file} is not a plain file, so it is not read`;
    mode = st.mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `the password file ${file} can be read or written by others (mode ${mode.toString(8).padStart(4, '0')}), so it is not read`;
}

/**
 * node-postgres's client as every pool of carbon's makes it: the password file read (above), int8
 * and numeric as numbers, and named in pg_stat_activity as the journal names the instance.
 */
export const CLIENT = {
  Client: PasswordFileClient,
  // `carbon host:pid`, so an operator tells carbon's sessions, and one instance's, from the others'; a URL's ?application_name= wins.
  fallback_application_name: `carbon ${hostName()}:${process.pid}`,
  // Every amount in the model is a safe integer.
  types: {
    getTypeParser(oid: number, format?: string) {
      if (oid === 20 || oid === 1700) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format as 'text');
    },
  },
};
