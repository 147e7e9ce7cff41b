import { type JournalSettings, journalSettingsFrom } from '../service/journal-settings.js';
import { Sandbox } from '../service/sandbox.js';
import type { OffsetsService } from '../service/service.js';
import type { Health } from '../store/health.js';
import { openStore, type StoreTarget } from '../store/open.js';
import type { CloseOptions } from '../store/port.js';

/**
 * The composition root: the one place the local engine is put together (the ledger's store, the
 * sandbox over it, the service), for a command, `carbon serve` and the tests alike. With
 * snapshot-check.ts (a scratch ledger), the only modules above src/service that import src/store:
 * it knows the target, so it can say where the ledger is, while the port itself names no implementation.
 */

export type { Health, StoreTarget };

export interface EngineOptions {
  /** Wall-clock milliseconds (the model adds the account's clock offset); Date.now by default. */
  clock?: () => number;
  /** The origin certificate URLs point at, in what the service and the sandbox return. */
  publicBaseUrl?: string;
  /** The request journal's settings; by default those of the environment (CARBON_JOURNAL…). */
  journal?: JournalSettings;
}

/** Where the ledger is, as a person reads it: the /healthz body, the serve banner. */
export interface LedgerDescription {
  kind: StoreTarget['kind'];
  /** The data directory (SQLite), or the database URL with its password masked (PostgreSQL). */
  label: string;
}

/** The local engine over one ledger. */
export interface Engine {
  /** The API: takes the API's request, returns its response (auth, validation, idempotency, rate limits). */
  readonly service: OffsetsService;
  /** What the developer page and `carbon sandbox` do: top-ups, keys, review, faults, the clock. */
  readonly sandbox: Sandbox;
  /** Where the ledger is, taken from the target. */
  readonly store: LedgerDescription;
  /** Whether the ledger can serve, and if not, why (the health check). */
  health(): Promise<Health>;
  /** Closes the ledger; the service and the sandbox are not to be used after. */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * Opens the ledger at `target` (a data directory's path is SQLite), provisions a fresh account on
 * first use, and builds the service over it. Each store's code loads only when it is opened.
 */
export async function openEngine(target: StoreTarget | string, options: EngineOptions = {}): Promise<Engine> {
  const where: StoreTarget = typeof target === 'string' ? { kind: 'sqlite', dir: target } : target;
  const journal = options.journal ?? journalSettingsFrom(process.env);
  const ledger = await openStore(where);
  const sandbox = await withCertificateOrigin(await Sandbox.over(ledger, { ...options, journal }), options);
  return {
    service: sandbox.service(),
    sandbox,
    store: { kind: where.kind, label: where.kind === 'sqlite' ? where.dir : ledger.label },
    health: () => ledger.health(),
    close: (options) => sandbox.close(options),
  };
}

/**
 * Certificate URLs point at `publicBaseUrl` when given (`carbon serve` gives its own address);
 * otherwise at the address the newest `carbon serve` on this ledger recorded, as the developer
 * page's login links do, so `carbon show --live` names a page a running server answers. Before any
 * server has run, the default (http://127.0.0.1:4010, `carbon serve`'s default port).
 */
async function withCertificateOrigin(sandbox: Sandbox, options: EngineOptions): Promise<Sandbox> {
  if (options.publicBaseUrl !== undefined) return sandbox;
  try {
    const recorded = await sandbox.pages.recordedUrl();
    return recorded === undefined ? sandbox : sandbox.withPublicBaseUrl(recorded);
  } catch (err) {
    await sandbox.close().catch(() => {});
    throw err;
  }
}
