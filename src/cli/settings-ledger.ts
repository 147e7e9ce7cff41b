import { databaseSettingProblem, hasPassword, malformedTimeout, maskUrl, type StoreTarget } from '../engine/ledger.js';
import { usage } from './errors.js';
import { wholeNumberOption } from './options.js';
import type { GlobalOptions } from './settings.js';

/** The ledger a command opens, from --database (or CARBON_DATABASE_URL) and the data directory: settings.ts's part for the store. */

/**
 * The warning for a database password typed on the command line (`--database
 * postgres://user:PASSWORD@…`), as `--api-key` draws one: the URL shown masked.
 */
export function databasePasswordWarning(opts: GlobalOptions): string | undefined {
  if (opts.database === undefined || !hasPassword(opts.database)) return undefined;
  return `the database password in --database ${maskUrl(opts.database)} can be read by other users (ps) and stays in shell history; prefer CARBON_DATABASE_URL, or a password file (PGPASSFILE, ~/.pgpass) and a URL without the password.`;
}

export function storeTarget(opts: GlobalOptions, env: NodeJS.ProcessEnv, dataDir: string): StoreTarget {
  const url = opts.database ?? (env.CARBON_DATABASE_URL || undefined);
  const schema = opts.databaseSchema ?? (env.CARBON_DATABASE_SCHEMA || undefined);
  if (url === undefined) {
    if (opts.databaseSchema !== undefined) throw usage('--database-schema goes with --database (or CARBON_DATABASE_URL).');
    refuseMalformedTimeout(env, 'sqlite');
    return { kind: 'sqlite', dir: dataDir };
  }
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    // Never echo the value: it may carry a password.
    throw usage(
      `The database URL from ${opts.database !== undefined ? '--database' : 'CARBON_DATABASE_URL'} must start with postgres:// or postgresql://.`,
    );
  }
  const problem = databaseSettingProblem(url, schema);
  if (problem !== undefined) {
    const what = problem.startsWith('the schema name') && schema !== undefined ? 'schema' : 'URL';
    throw usage(`The database ${what} is not usable: ${problem}.`, 'Use postgres://user:password@host:5432/db (optionally ?schema=name).');
  }
  refuseMalformedTimeout(env, 'postgres');
  const poolText = env.CARBON_PG_POOL || undefined;
  const pool = poolText === undefined ? undefined : wholeNumberOption(poolText, 'CARBON_PG_POOL', { min: 1, max: 1000 });
  return { kind: 'postgres', url, ...(schema === undefined ? {} : { schema }), ...(pool === undefined ? {} : { pool }) };
}

/** A ledger's timeout set to anything but whole milliseconds is a usage error, not its default. */
function refuseMalformedTimeout(env: NodeJS.ProcessEnv, kind: StoreTarget['kind']): void {
  const name = malformedTimeout(env, kind);
  if (name !== undefined) throw usage(`${name} must be whole milliseconds from 0 to 9999999, not "${env[name]}".`);
}
