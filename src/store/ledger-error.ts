/**
 * A store could not do its work (locked, full, unreachable, damaged): what happened, where, and
 * what to do. Kept apart from the stores so the CLI recognises it without loading a driver.
 */
export class LedgerError extends Error {
  override name = 'LedgerError';
  constructor(
    message: string,
    /** The ledger, as its store shows it: a path, or a URL with the password masked. */
    readonly path: string,
    readonly hint: string,
    /** True when trying again shortly may succeed (a lock, a restart): the server answers 503. */
    readonly transient = false,
    /** True when the ledger refused before anything was written (a database that takes no writes): no outcome to doubt. */
    readonly unwritten = false,
  ) {
    super(message);
  }
}

/**
 * A row an import was given breaks the ledger's rules (a key used twice, a balance below zero):
 * the data is wrong, not the store. The transaction that met it rolls back and is not tried again.
 */
export class LedgerRowError extends Error {
  override name = 'LedgerRowError';
}
