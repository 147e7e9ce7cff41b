import type { ApiRequest, Mode } from '../api/types.js';
import type { AccountRecord, KeyRecord, LedgerStore } from '../store/port.js';
import { ApiError } from './errors.js';
import type { Trace } from './journal-note.js';
import { keyMode } from './keys.js';

/**
 * Who may call (spec part 5), as plain functions: the header's form, the key's state, the
 * account's standing, the operation's permission. The service looks the key up; these decide.
 */

/** The key named by an Authorization header, or the 401 a malformed or missing header gets. */
export function parseBearer(header: string | undefined): { secret: string; mode: Mode } {
  if (header === undefined || header.trim() === '') {
    throw new ApiError('api_key_missing', 'No API key provided. Send it as `Authorization: Bearer <API_KEY>`.');
  }
  const secret = bearerToken(header);
  const mode = secret === undefined ? null : keyMode(secret);
  if (secret === undefined || mode === null) {
    throw new ApiError('api_key_invalid', 'Invalid API key: expected `Authorization: Bearer ck_test_…` or `ck_live_…`.');
  }
  return { secret, mode };
}

/** The token of a `Bearer` Authorization header (the scheme in any case), or undefined. */
export function bearerToken(header: string): string | undefined {
  return /^Bearer +(\S+) *$/i.exec(header)?.[1];
}

/** 401 for a revoked key, 403 for an account that is not active. */
export function checkStanding(key: KeyRecord, account: AccountRecord): void {
  if (key.revoked_ms !== null) throw new ApiError('api_key_revoked', 'This API key has been revoked.');
  if (account.status !== 'active') {
    throw new ApiError(
      'api_access_inactive',
      account.status === 'suspended'
        ? 'API access is inactive: the account is suspended.'
        : 'API access is inactive: the account is not yet approved.',
    );
  }
}

/** 403 when a read-only key asks for an operation that needs purchase access. */
export function checkPermission(key: KeyRecord, needed: 'read' | 'purchase'): void {
  if (needed === 'purchase' && key.permission !== 'purchase') {
    throw new ApiError('insufficient_permissions', 'This API key is read-only; buying offsets needs a key with purchase access.');
  }
}

/** 429 with Retry-After in whole seconds. */
export function rateLimited(wait: number): ApiError {
  return new ApiError(
    'rate_limited',
    `Too many requests. Retry after ${wait} second${wait === 1 ? '' : 's'}.`,
    {},
    { 'retry-after': String(wait) },
  );
}

/**
 * The caller of a request answered before its key was read (a path the API does not have, a
 * method it does not take, a fault's answer), noted for the journal: the mode its key names and,
 * with `askLedger`, the key's id. Never throws: the ledger not answering leaves the id out.
 */
export async function traceCaller(store: LedgerStore, request: ApiRequest, trace: Trace, askLedger = true): Promise<void> {
  try {
    const token = request.headers.authorization === undefined ? undefined : bearerToken(request.headers.authorization);
    trace.mode = token === undefined ? null : keyMode(token);
    const key = !askLedger || token === undefined || trace.mode === null ? undefined : await store.keyBySecret(token);
    trace.keyId = key?.id ?? null;
  } catch {
    // The ledger did not answer: the entry is noted without the key.
  }
}
