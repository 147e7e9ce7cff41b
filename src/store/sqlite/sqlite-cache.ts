import type { AccountRecord, KeyRecord } from '../port.js';

/**
 * Commits made by every SqliteStore of this process. PRAGMA data_version tells a connection about
 * other connections' commits, but the once-a-turn check below would miss one made by another
 * connection of this same process within the same turn (the library opened twice, the tests).
 */
let processCommits = 0;

/** At most this many keys and named values are kept: unknown ones sprayed at a server cost memory. */
const MAX_KEPT = 1000;

interface Kept {
  version: number;
  /** processCommits less this store's own, when the cache was checked. */
  othersCommits: number;
  accountWrites: number;
  account: AccountRecord | undefined;
  /** By the key's full text: a request that names a key seen before neither hashes nor reads. */
  keys: Map<string, KeyRecord>;
  balanceWrites: number;
  balances: [number | undefined, number | undefined];
  metaWrites: number;
  /** Named values read since the ledger last changed (absent ones too). */
  metas: Map<string, string | undefined>;
}

/** What a transaction wrote of what the cache keeps. */
export interface Touched {
  touchedAccount: boolean;
  touchedBalance: boolean;
  touchedMeta: boolean;
}

/**
 * Every request reads the account and its key, and most its balance; all change rarely, as do
 * the named values (the fault setting is read on every request). They are kept between
 * requests and dropped when anything may have changed them: a commit by another connection
 * (another process: PRAGMA data_version moves) or a write through this one. The check runs
 * once per turn of the event loop: `carbon serve` answers the requests read in one turn
 * together, after reading them all, so an answer never misses a commit that finished before its
 * request arrived (BENCHMARKS.md: GET /balance, the freshness check once a batch).
 */
export class SqliteReadCache {
  private kept: Kept | undefined;
  /** Its keys are kept by their text: an inspect of what holds it (a Sandbox at depth 4) shows how many, never which. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `SqliteReadCache { ${this.kept?.keys.size ?? 0} keys kept }`;
  }
  private accountWrites = 0;
  private balanceWrites = 0;
  private metaWrites = 0;
  private checkedThisTurn = false;
  /** Commits by this store. */
  ownCommits = 0;
  private readonly nextTurn = (): void => {
    this.checkedThisTurn = false;
  };

  constructor(private readonly dataVersion: () => number) {}

  private fresh(): Kept {
    let kept = this.kept;
    const others = processCommits - this.ownCommits;
    if (kept === undefined || kept.accountWrites !== this.accountWrites || !this.checkedThisTurn || kept.othersCommits !== others) {
      const version = this.dataVersion();
      if (!this.checkedThisTurn) {
        this.checkedThisTurn = true;
        setImmediate(this.nextTurn);
      }
      if (kept === undefined || kept.version !== version || kept.accountWrites !== this.accountWrites) {
        kept = {
          version,
          othersCommits: others,
          accountWrites: this.accountWrites,
          account: undefined,
          keys: new Map(),
          balanceWrites: this.balanceWrites,
          balances: [undefined, undefined],
          metaWrites: this.metaWrites,
          metas: new Map(),
        };
        this.kept = kept;
      }
      kept.othersCommits = others;
    }
    return kept;
  }

  account(read: () => AccountRecord | undefined): AccountRecord | undefined {
    const kept = this.fresh();
    if (kept.account !== undefined) return kept.account;
    const row = read();
    if (row !== undefined) kept.account = Object.freeze(row);
    return row;
  }

  key(secret: string, read: () => KeyRecord | undefined): KeyRecord | undefined {
    const kept = this.fresh();
    let row = kept.keys.get(secret);
    if (row === undefined) {
      row = read();
      // Only keys that exist are kept.
      if (row !== undefined && kept.keys.size < MAX_KEPT) kept.keys.set(secret, Object.freeze(row));
    }
    return row;
  }

  balance(livemode: 0 | 1, read: () => number): number {
    const kept = this.fresh();
    if (kept.balanceWrites !== this.balanceWrites) {
      kept.balanceWrites = this.balanceWrites;
      kept.balances = [undefined, undefined];
    }
    let cents = kept.balances[livemode];
    if (cents === undefined) {
      cents = read();
      kept.balances[livemode] = cents;
    }
    return cents;
  }

  meta(name: string, read: () => string | undefined): string | undefined {
    const kept = this.fresh();
    if (kept.metaWrites !== this.metaWrites) {
      kept.metaWrites = this.metaWrites;
      kept.metas.clear();
    }
    if (kept.metas.has(name)) return kept.metas.get(name);
    const value = read();
    if (kept.metas.size < MAX_KEPT) kept.metas.set(name, value);
    return value;
  }

  /** A transaction of this store committed. */
  committed(): void {
    processCommits++;
    this.ownCommits++;
  }

  /** After a transaction, committed or not: what it wrote is read again. */
  wrote(tx: Touched): void {
    if (tx.touchedAccount) this.accountWrites++;
    if (tx.touchedBalance) this.balanceWrites++;
    if (tx.touchedMeta) this.metaWrites++;
  }
}
