import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError } from '../ledger-error.js';
import type { DefaultKey, KeyVault } from '../port.js';

/** The ledger's file in the data directory. */
export const LEDGER_FILE = 'ledger.db';

/**
 * The SQLite store keeps the full text of the keys the sandbox hands out beside the ledger, in
 * `sandbox-keys.json` (0600): the local stand-in for the developer page. The ledger itself holds
 * only their SHA-256.
 */
export const KEYS_FILE = 'sandbox-keys.json';

export function readVault(dir: string): KeyVault {
  const path = join(dir, KEYS_FILE);
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<KeyVault>;
    const vault = { defaults: parsed.defaults ?? {}, secrets: parsed.secrets ?? {} };
    // Hand-edited (a key that is no text, a list for the map): said as a file that cannot be read, not met later as a missing key.
    if (!textMap(vault.defaults) || !textMap(vault.secrets)) throw new Error('not a keys file');
    return vault;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { defaults: {}, secrets: {} };
    throw new LedgerError(
      `The sandbox keys file ${path} cannot be read.`,
      path,
      'Fix or delete it, then run `carbon sandbox keys create` for a new key.',
    );
  }
}

const textMap = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');

/** Written whole to a temporary file and renamed into place, so a reader never sees half of it. */
export function writeVault(dir: string, vault: KeyVault): void {
  const path = join(dir, KEYS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(vault, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The vault with one more key (the first of a role becomes that role's default). */
export function withKey(vault: KeyVault, id: string, secret: string, defaultFor: DefaultKey | null): KeyVault {
  const next: KeyVault = { defaults: { ...vault.defaults }, secrets: { ...vault.secrets, [id]: secret } };
  if (defaultFor !== null) next.defaults[defaultFor] ??= id;
  return next;
}
