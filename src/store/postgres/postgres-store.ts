import { LedgerError } from '../ledger-error.js';
import type { LedgerStore } from '../port.js';

/** Placeholder until the PostgreSQL store lands: says so plainly. */
export const PostgresStore = {
  async open(url: string, _options: { schema?: string }): Promise<LedgerStore> {
    throw new LedgerError('The PostgreSQL store is not available in this build.', url.replace(/:[^:@/]*@/, ':***@'), 'Use the SQLite store (leave --database unset).');
  },
};
