/**
 * What the CLI and the server may know of the ledger below the service, through the composition
 * root (the layer rule: src/cli and src/server import src/store only through src/engine): the
 * target it names, the storage error it reports, a database URL as it may be shown, the
 * SQLite ledger's file name (the shell completion looks for it), the timeouts it reads, and how it
 * is closed.
 */
export { malformedTimeout } from '../store/env-timeouts.js';
export { LedgerError } from '../store/ledger-error.js';
export type { StoreTarget } from '../store/open.js';
export type { CloseOptions } from '../store/port.js';
export { databaseSettingProblem, hasPassword, maskUrl } from '../store/postgres/url.js';
export { LEDGER_FILE } from '../store/sqlite/files.js';
