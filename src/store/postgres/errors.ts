import { LedgerError } from '../ledger-error.js';
import { deadlines, WHOLE_LEDGER_DEADLINES } from './deadlines.js';

/** The code of the error a connection fails with when the password file is there but not read (client.ts). */
export const PASSWORD_FILE_REFUSED = 'carbon.password_file_refused';

/** Node's socket errors: the server's host or the network between. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
]);

/**
 * The server's codes for a connection it ended or would not open: class 08 (connection
 * exception) is matched whole. 57P01 admin shutdown (a restart, pg_terminate_backend), 57P02
 * crash shutdown (another backend died: the postmaster resets), 57P03 cannot connect now
 * (starting, recovering), 57P05 idle session timeout, 25P03 idle in transaction session timeout.
 */
const SERVER_CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '57P05', '25P03']);

/**
 * What node-postgres and its pool say, with no code, about a connection that failed or did not
 * answer in time: the socket ended; a client that already met a connection error (a postmaster
 * killed with kill -9: "not queryable"); its own deadlines (connecting, a statement's answer);
 * the pool ended (an instance closing).
 */
const DRIVER_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Query read timeout|timeout expired|timeout exceeded when trying to connect|Cannot use a pool after calling end on the pool)/;

/** Trouble that passes, on a connection that may still be good: the server is busy, or a writer got in first. */
const BUSY_CODES = new Set(['53000', '53200', '53300', '53400', '40001', '40P01']);

/**
 * Whether the connection the error came from can no longer be trusted: it was cut, the server
 * ended it, or it did not answer in time (its statement may still be running, or its answer still
 * on the way). Such a connection is thrown away, never sent a ROLLBACK (which would wait as long).
 */
export function connectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  // A Unix socket's file is gone while its server is stopped (?host=/run/postgresql): refused, as a port would be.
  if (code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'connect') return true;
  return err instanceof Error && DRIVER_MESSAGES.test(err.message);
}

/** A statement that gave up waiting for a lock: transient, and its transaction wrote nothing. */
const lockRefused = (label: string) =>
  new LedgerError(`The ledger at ${label} is locked by another writer.`, label, 'Try again shortly.', true, true);

/** What the driver and the server say, as a LedgerError a person can act on (never the password). */
export function pgError(err: unknown, label: string): Error {
  if (err instanceof LedgerError) return err;
  const code = (err as { code?: string }).code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  const refused = credentialsError(code, message, label) ?? changedUnder(code, message, label) ?? settingRefused(code, message, label);
  if (refused !== undefined) return refused;
  if (code === '3D000') return new LedgerError(`The database in ${label} does not exist.`, label, 'Create it (createdb), or fix the URL.');
  // Passing, as far as a client can tell: EAI_AGAIN is the resolver's "try again", and ENOTFOUND
  // also what a database container restarting gives (its name gone from the network's DNS meanwhile).
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new LedgerError(
      `The database host of ${label} cannot be found (${code}).`,
      label,
      'Check the host name in the database URL; requests can be retried.',
      true,
    );
  if (code === '55P03') return lockRefused(label);
  // A standby, or a failover's old primary: reads go on, writes wait for a primary.
  if (code === '25006')
    return new LedgerError(
      `PostgreSQL at ${label} takes no writes (25006: ${message}).`,
      label,
      'It is a standby or read-only (default_transaction_read_only): point the URL at the primary; requests can be retried.',
      true,
      true,
    );
  const busy = serverBusy(code, message, label, (err as { wholeLedger?: boolean }).wholeLedger === true);
  if (busy !== undefined) return busy;
  if (connectionLost(err) || BUSY_CODES.has(code)) {
    return new LedgerError(
      `PostgreSQL at ${label} cannot be reached right now (${code || message}).`,
      label,
      'Check that the server is running and reachable; requests can be retried.',
      true,
    );
  }
  if (/^The server does not support SSL connections/.test(message))
    return new LedgerError(
      `PostgreSQL at ${label} does not accept SSL connections, and the URL asks for them (sslmode).`,
      label,
      'Turn ssl on in the server, or take sslmode out of the database URL where the network is trusted.',
    );
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /CERT|UNABLE_TO_VERIFY/.test(code))
    return new LedgerError(
      `PostgreSQL at ${label} presented a certificate that could not be verified (${message.replace(/; if the root CA .*/, '')}).`,
      label,
      'Name the authority that signed it with sslrootcert=<file> in the URL (verify-full also checks the host name against it), or use sslmode=require to encrypt without verifying.',
    );
  if (code === '53100')
    return new LedgerError(`The disk of the PostgreSQL server at ${label} is full.`, label, 'Free some space; nothing was written.');
  if (/^not a URL|schema name|^ssl/.test(message))
    return new LedgerError(
      `The database URL is not usable: ${message}.`,
      label,
      message.startsWith('ssl')
        ? 'carbon reads sslmode as psql does (docs/deploy.md lists the values).'
        : 'Use postgres://user:password@host:5432/db (optionally ?schema=name).',
    );
  return err instanceof Error ? err : new Error(message);
}

/**
 * The schema changed under a running carbon: its tables dropped (42P01), its schema dropped or not
 * the user's to use (3F000), or the user's rights on them taken away (42501). Not passing: a person mends it (503 with no Retry-After).
 * The server refused a statement, so its transaction wrote nothing: a purchase is said not made.
 */
function changedUnder(code: string, message: string, label: string): LedgerError | undefined {
  // No schema to use: dropped, or carbon's user may not use it (a schema of another role's): either way, said so.
  if (code === '3F000')
    return new LedgerError(
      `The ledger's schema in ${label} cannot be used (3F000: ${message}).`,
      label,
      `It was dropped, or carbon's user has no rights on it: grant them (docs/deploy.md, "The rights carbon's user needs"), or restore it (carbon sandbox snapshot load), or restart carbon to make a fresh one.`,
      false,
      true,
    );
  if (code === '42P01')
    return new LedgerError(
      `The ledger's tables in ${label} are gone (${code}: ${message}).`,
      label,
      'Its schema was dropped or changed by hand: restore it (carbon sandbox snapshot load), or restart carbon to make a fresh one.',
      false,
      true,
    );
  if (code === '42501')
    return new LedgerError(
      `PostgreSQL at ${label} refused carbon's user (42501: ${message}).`,
      label,
      `Grant the user the rights on the schema's tables (docs/deploy.md, "The rights carbon's user needs").`,
      false,
      true,
    );
  return undefined;
}

/** A setting the URL gives (`?options=-c statement_timeout=bogus`, an unknown name) that the server refuses as it opens the session. */
function settingRefused(code: string, message: string, label: string): LedgerError | undefined {
  if ((code !== '22023' && code !== '42704') || !/parameter/.test(message)) return undefined;
  return new LedgerError(
    `PostgreSQL at ${label} refused a setting the database URL gives (${code}: ${message}).`,
    label,
    "Fix it in the URL's options (-c name=value) or parameters, as psql would take them.",
  );
}

/** The server refused the user or password, or asked for a password none was given for. */
function credentialsError(code: string, message: string, label: string): LedgerError | undefined {
  if (code === '28P01' || code === '28000')
    return new LedgerError(
      `PostgreSQL at ${label} refused the credentials (${code}).`,
      label,
      // The URL as shown masks a password it holds (url.ts, maskUrl); without one, it came from elsewhere.
      label.includes(':***@')
        ? 'Check the user and password in the database URL.'
        : 'Check the user in the database URL, and its password in PGPASSWORD or the password file (PGPASSFILE, or ~/.pgpass).',
    );
  if (code === PASSWORD_FILE_REFUSED)
    return new LedgerError(
      `PostgreSQL at ${label} asks for a password, and ${message}.`,
      label,
      "Make it its owner's alone (chmod 600), as libpq requires, or put the password in the database URL.",
    );
  // Not in the URL, nor in PGPASSFILE or ~/.pgpass for this host: node-postgres fails in its own words.
  if (/^SASL: .*password must be a string|^The server requested password-based authentication, but no password was provided/.test(message))
    return new LedgerError(
      `PostgreSQL at ${label} asks for a password, and none was found.`,
      label,
      'Put it in a password file (PGPASSFILE, or ~/.pgpass: host:port:database:user:password, mode 0600), or in the database URL.',
    );
  return undefined;
}

/**
 * The server answered, and is up: a statement ran or waited past its deadline, was cancelled, or
 * every connection it allows is taken. "Cannot be reached" would send the reader to the network.
 * Transient: requests can be retried. A statement the server cancelled (57014) failed its
 * transaction, whose COMMIT had not been made (an error from COMMIT itself is a rollback): nothing
 * was written, so a purchase is said not made, not "may or may not" (unknown-outcome.ts).
 */
function serverBusy(code: string, message: string, label: string, wholeLedger: boolean): LedgerError | undefined {
  if (code === '57014' && /statement timeout/.test(message) && wholeLedger)
    return new LedgerError(
      `PostgreSQL at ${label} did not finish a statement over the whole ledger within ${deadlines().statementMs * WHOLE_LEDGER_DEADLINES} ms (${WHOLE_LEDGER_DEADLINES} times CARBON_PG_STATEMENT_TIMEOUT_MS).`,
      label,
      'A larger ledger, or a slower server, needs more time: raise CARBON_PG_STATEMENT_TIMEOUT_MS for this command (60000 gives such a statement 10 minutes). Or another session holds a lock on its tables (pg_locks and pg_stat_activity show which).',
      true,
      true,
    );
  if (code === '57014' && /statement timeout/.test(message))
    return new LedgerError(
      `PostgreSQL at ${label} did not finish a statement within ${deadlines().statementMs} ms (CARBON_PG_STATEMENT_TIMEOUT_MS).`,
      label,
      'Another session may hold a lock on its tables (pg_locks and pg_stat_activity show which), or the server is overloaded; requests can be retried.',
      true,
      true,
    );
  if (code === '57014')
    return new LedgerError(
      `PostgreSQL at ${label} cancelled a statement (${message}).`,
      label,
      'Another session cancelled it (pg_cancel_backend), or the server is shutting down; requests can be retried.',
      true,
      true,
    );
  // node-postgres's pool: every connection of this instance's stayed busy for the connect deadline (a new connection
  // that takes too long to open says "Connection terminated due to connection timeout"): the server answers, its sessions wait.
  if (message.startsWith('timeout exceeded when trying to connect'))
    return new LedgerError(
      `Every connection of this instance's to PostgreSQL at ${label} stayed busy for ${deadlines().connectMs} ms (CARBON_PG_CONNECT_TIMEOUT_MS).`,
      label,
      'Their statements wait: another session may hold a lock on the tables (pg_locks and pg_stat_activity show which), or the load is more than CARBON_PG_POOL connections (10 unless set) can take; requests can be retried.',
      true,
    );
  if (code === '53300')
    return new LedgerError(
      `PostgreSQL at ${label} has no connection free (53300: ${message}).`,
      label,
      "Each carbon serve opens up to CARBON_PG_POOL connections (10 unless set) and two more, each other command one: lower CARBON_PG_POOL, or raise the server's max_connections (or the role's CONNECTION LIMIT); requests can be retried.",
      true,
    );
  return undefined;
}
