/**
 * A storage failure a person can act on: which file, and what to do. Kept apart from ledger.ts
 * so the CLI can recognise it without loading SQLite.
 */
export class LedgerError extends Error {
  override name = 'LedgerError';
  constructor(
    message: string,
    readonly path: string,
    readonly hint: string,
  ) {
    super(message);
  }
}
