import type { StoreTarget } from '../../src/engine/open.js';
import { freshSchema, postgresAvailable } from './database.js';
import { defaultLauncher } from './server-process.js';

/**
 * The engine × store matrix, built once: every suite that runs on "every engine on every store"
 * (the contract, fidelity) takes its rows from `engineMatrix()`. Adding a store is one row of
 * STORES; adding an engine, one row of ENGINES.
 */

/** In this process (`local`), or a `carbon serve` child process over HTTP (`http`). */
export type EngineKind = 'local' | 'http';
/** Where the engine's ledger lives. */
export type StoreKind = StoreTarget['kind'];

/** A throw-away ledger of one store for one engine. */
export interface TestLedger {
  /** What `carbon serve --database` is given, or undefined for the data directory's SQLite. */
  database: string | undefined;
  /** The store target, once the engine's data directory is known. */
  target(dataDir: string): StoreTarget;
  drop(): Promise<void>;
}

interface StoreRow {
  kind: StoreKind;
  label: string;
  available: () => boolean;
  ledger: (prefix: string) => TestLedger;
}

const STORES: readonly StoreRow[] = [
  { kind: 'sqlite', label: 'SQLite', available: () => true, ledger: sqliteLedger },
  { kind: 'postgres', label: 'PostgreSQL', available: postgresAvailable, ledger: postgresLedger },
];

const ENGINES: ReadonlyArray<{ kind: EngineKind; label: () => string }> = [
  { kind: 'local', label: () => 'local' },
  // The HTTP side's title says which `carbon serve` runs: the built binary, or the current source bundled.
  { kind: 'http', label: () => `http (carbon serve ${defaultLauncher()})` },
];

function sqliteLedger(): TestLedger {
  return { database: undefined, target: (dir) => ({ kind: 'sqlite', dir }), drop: async () => {} };
}

function postgresLedger(prefix: string): TestLedger {
  const schema = freshSchema(prefix);
  return { database: schema.url, target: () => ({ kind: 'postgres', url: schema.url }), drop: () => schema.drop() };
}

/** A fresh ledger of `store` (a new PostgreSQL schema, named from `prefix`; SQLite lives in the engine's data directory). */
export function testLedger(store: StoreKind, prefix: string): TestLedger {
  return STORES.find((s) => s.kind === store)!.ledger(prefix);
}

/** Every store this run can reach (PostgreSQL only with CARBON_TEST_DATABASE_URL): for suites of the stores alone. */
export function storeMatrix(): Array<{ kind: StoreKind; label: string }> {
  return STORES.filter((s) => s.available()).map((s) => ({ kind: s.kind, label: s.label }));
}

/** Every engine on every store this run can reach (PostgreSQL only with CARBON_TEST_DATABASE_URL), stores outermost. */
export function engineMatrix(): Array<{ kind: EngineKind; store: StoreKind; label: string }> {
  return STORES.filter((s) => s.available()).flatMap((s) =>
    ENGINES.map((e) => ({ kind: e.kind, store: s.kind, label: `${e.label()}, ${s.label}` })),
  );
}
