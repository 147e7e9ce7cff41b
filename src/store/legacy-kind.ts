/**
 * TRANSITIONAL (issue 24): src/server still asks a store which kind it is (the /healthz body and
 * the fault setting's 250 ms throttle) until it reads the engine's description (`Engine.store`)
 * and `Sandbox.faultsText()` instead. The port itself names no implementation: delete this file,
 * and the `kind` field of each store marked with it, once nothing in src/server reads `kind`.
 */
declare module './port.js' {
  interface LedgerStore {
    /** @deprecated Read `Engine.store.kind` (src/engine/open.ts); the port names no implementation. */
    readonly kind: 'sqlite' | 'postgres';
  }
}

export {};
