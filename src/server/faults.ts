import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ApiRequest, ApiResponse } from '../api/types.js';
import { FAULTS_META, type FaultConfig, FaultDice, faultResponse, sleep } from '../service/faults.js';
import type { LedgerStore } from '../store/port.js';

/** How long a PostgreSQL-backed instance keeps the fault setting it read. */
export const REREAD_MS = 250;

/**
 * `carbon sandbox faults` in the server: each batch of requests reads the setting once from the
 * store (so every instance on a shared ledger follows a change from its next request), and each
 * API request is answered through `withFaults`: delayed, answered 429/500/503 instead of by the
 * service, or its connection cut before the service sees it or after it has acted (the purchase
 * committed, the answer lost: the "outcome unknown" case a client's retries must survive).
 */
export class ServerFaults {
  private readonly dice = new FaultDice();
  private current: FaultConfig | null = null;
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly store: LedgerStore) {}

  /**
   * The setting for the next batch: one small read of the store. On SQLite that is a prepared
   * statement, read every batch; on PostgreSQL it is a round trip, so it is read at most every
   * REREAD_MS (a change reaches every instance within that).
   */
  async load(): Promise<FaultConfig | null> {
    const now = performance.now();
    if (this.store.kind === 'postgres' && now - this.readAt < REREAD_MS) return this.current;
    this.current = this.dice.use(await this.store.meta(FAULTS_META));
    this.readAt = now;
    return this.current;
  }

  /**
   * Answers `request` through `handle` unless its drawn fault says otherwise. Resolves to the
   * response to send, or null when the connection was cut (nothing is to be sent).
   */
  async withFaults(config: FaultConfig | null, request: ApiRequest, res: ServerResponse, handle: () => Promise<ApiResponse>): Promise<ApiResponse | null> {
    const fault = config === null ? null : this.dice.draw(request);
    if (fault === null) return handle();
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    switch (fault.kind) {
      case null:
        return handle();
      case 'drop-before':
        res.destroy();
        return null;
      case 'drop-after':
        await handle();
        res.destroy();
        return null;
      default:
        return faultResponse(fault.kind, config!);
    }
  }
}
