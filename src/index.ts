/**
 * carbon as a library: the same typed client the CLI uses, over the in-process model or HTTP.
 *
 *   import { CarbonClient, openLocal } from 'carbon-offsets-cli';
 *   const { client } = await openLocal('/tmp/carbon');          // the local model, zero config
 *   const { offset } = await client.buy({ kg: 500 });
 */
export * from './api/types.js';
export { CarbonClient, type ClientOptions, type Purchase, type WaitOptions } from './client/client.js';
export {
  CarbonAnswerError,
  CarbonApiError,
  CarbonConfigError,
  CarbonConnectionError,
  CarbonError,
  WaitTimeoutError,
} from './client/errors.js';
export { HttpTransport, type HttpTransportOptions } from './client/http-transport.js';
export { CarbonPagingError } from './client/paging.js';
export { DEFAULT_RETRY, type RetryOptions, type RetryPolicy } from './client/retry.js';
export { LocalTransport, type Transport } from './client/transport.js';
export { openLocal } from './engine/local.js';
export { type Engine, type EngineOptions, type LedgerDescription, openEngine } from './engine/open.js';
export { ApiError } from './service/errors.js';
export { type DefaultKey, Sandbox, type SandboxKey, type SandboxOptions, type SandboxStatus } from './service/sandbox.js';
export { OffsetsService, type ServiceOptions } from './service/service.js';
export { LedgerError } from './store/ledger-error.js';
export { openStore, type StoreTarget } from './store/open.js';
export type { LedgerStore, LedgerTx } from './store/port.js';
