import { LedgerError } from '../ledger-error.js';

/** Connection and server errors that pass: the server restarting, a connection cut. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  '53300',
  '55P03',
  '40001',
  '40P01',
]);

/** What the driver and the server say, as a LedgerError a person can act on (never the password). */
export function pgError(err: unknown, label: string): Error {
  if (err instanceof LedgerError) return err;
  const code = (err as { code?: string }).code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (code === '28P01' || code === '28000') {
    return new LedgerError(
      `PostgreSQL at ${label} refused the credentials (${code}).`,
      label,
      'Check the user and password in the database URL.',
    );
  }
  if (code === '3D000') return new LedgerError(`The database in ${label} does not exist.`, label, 'Create it (createdb), or fix the URL.');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new LedgerError(`The database host of ${label} cannot be found (${code}).`, label, 'Check the host name in the database URL.');
  if (code === '55P03') return new LedgerError(`The ledger at ${label} is locked by another writer.`, label, 'Try again shortly.', true);
  if (TRANSIENT_CODES.has(code) || /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(message)) {
    return new LedgerError(
      `PostgreSQL at ${label} cannot be reached right now (${code || message}).`,
      label,
      'Check that the server is running and reachable; requests can be retried.',
      true,
    );
  }
  if (code === '53100')
    return new LedgerError(`The disk of the PostgreSQL server at ${label} is full.`, label, 'Free some space; nothing was written.');
  if (/^not a URL|schema name/.test(message))
    return new LedgerError(
      `The database URL is not usable: ${message}.`,
      label,
      'Use postgres://user:password@host:5432/db (optionally ?schema=name).',
    );
  return err instanceof Error ? err : new Error(message);
}
