import pg from 'pg';
import type { AccountRecord, KeyRecord } from '../port.js';
import type { Queryable } from './pg-reads.js';

export interface ReadCache {
  /** The ledger's version row's table (its tableoid): another when the ledger is made anew. */
  ledger: number;
  version: number;
  keysVersion: number;
  account: AccountRecord | undefined;
  /** test, live */
  balances: [number, number];
  /** Keys looked up since keys_version last moved, by their full text. */
  keys: Map<string, KeyRecord>;
  /** Named values read since the version last moved (absent ones too). */
  metas: Map<string, string | undefined>;
}

/** At most this many keys and named values are kept: unknown ones sprayed at a server cost memory. */
export const MAX_KEPT = 1000;

/**
 * Commits made by every PostgreSQL store of this process, as sqlite-cache.ts counts them: a check
 * begun while another store of this process (a second engine on the ledger, as `carbon sandbox`
 * beside a served engine in the tests) was committing may have read the ledger before that commit,
 * and must not answer a read that follows it in the same turn.
 */
let processCommits = 0;

/**
 * At most this many names are read again with a moved version: the fault setting and a few page
 * sessions, not whatever login tokens a client sprays at HEAD /login (each is a read of its own).
 */
const MAX_REFRESHED = 64;

/** The version check, which brings back the account and both balances with it. */
const CHECK = `SELECT l.tableoid AS ledger, l.version, l.keys_version, a.id, a.status, a.rate, a.review_limit_cents, a.clock_offset_ms,
       a.rate_limit_requests, a.rate_limit_window_ms, b0.available_cents AS test, b1.available_cents AS live`;
const CHECKED = `FROM ledger_version l LEFT JOIN account a ON a.id = 1
  LEFT JOIN balances b0 ON b0.livemode = 0 LEFT JOIN balances b1 ON b1.livemode = 1`;

/**
 * `names` with their values, as one JSON object. Inlined, not parameters: a statement without them
 * goes in one round trip of the simple protocol, where parameters take the extended one (parse,
 * bind, execute), which cost GET /balance a sixth of its rate (BENCHMARKS.md).
 */
const namedValues = (names: string[]): string =>
  `coalesce((SELECT json_object_agg(name, value) FROM meta WHERE name IN (${names.map(pg.escapeLiteral).join(', ')})), '{}')`;

interface CheckRow extends AccountRecord {
  ledger: number;
  version: number;
  keys_version: number;
  test: number | null;
  live: number | null;
  id: number | null;
  metas?: Record<string, string>;
}

/**
 * Every request reads the account, its key and the fault setting, and most its balance; all
 * change rarely. They are kept between requests, checked once a turn of the event loop against
 * the ledger's version row in one round trip that also brings back the account and both balances
 * (and the named values read lately, when the version has moved): `carbon serve` answers the
 * requests read in one turn together, after reading them all, so an answer never misses a commit
 * (a revoked key included) that finished before its request arrived. Every transaction that
 * writes what is kept moves the version in its COMMIT's round trip.
 */
export class PgReadCache {
  constructor(private readonly pool: Queryable) {}

  /** Its keys are kept by their text: an inspect of what holds it (a Sandbox at depth 4) shows how many, never which. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PgReadCache { ${this.cache?.keys.size ?? 0} keys kept }`;
  }

  private cache: ReadCache | undefined;
  private check: Promise<ReadCache> | null = null;
  /**
   * The check that has just come back, while the code waiting on it runs (the microtasks of the
   * turn its answer arrived in). That code belongs to requests that arrived before the check began,
   * so its next read needs no check of its own: `carbon serve` reads the fault setting, then the
   * service reads the key and the account, one check for both.
   */
  private answered: ReadCache | null = null;
  /**
   * The named values read in this check's time and the one before (every request reads the fault
   * setting): when the version moves they are read again with it, not each on its next miss.
   */
  private hot = new Set<string>();
  private warm = new Set<string>();
  /**
   * The version is likely to have moved by the next check: this process has committed since the
   * last one, or the last one found it moved (other instances are writing).
   */
  private moving = false;
  /** processCommits when this cache last looked: moved since, nothing checked before answers again. */
  private seen = 0;
  /** Checks begun, and which of them `cache` is from: one begun earlier that comes back later leaves it. */
  private begun = 0;
  private kept = 0;

  /** The kept reads, checked in this turn (or just now, for the code waiting on the check). */
  fresh(): Promise<ReadCache> {
    if (this.seen !== processCommits) {
      // This process committed (through this store or another) since the check kept here began.
      this.seen = processCommits;
      this.check = null;
      this.answered = null;
      this.moving = true;
    }
    if (this.answered !== null) return Promise.resolve(this.answered);
    if (this.check === null) {
      const commits = processCommits;
      const check = this.load().then((cache) => {
        // A check that began before a commit of this process read the ledger as it was before it:
        // its answer is for the code that waited on it, never handed to a read that follows the commit.
        if (processCommits !== commits) return cache;
        this.answered = cache;
        // After the microtasks now queued, the ones waiting on this check among them.
        process.nextTick(() => {
          if (this.answered === cache) this.answered = null;
        });
        return cache;
      });
      this.check = check;
      setImmediate(() => {
        if (this.check === check) this.check = null;
      });
    }
    return this.check;
  }

  /** What this process's own transaction wrote is read back at once, not at the next turn. */
  committed(touchedKeys: boolean): void {
    this.seen = ++processCommits;
    this.check = null;
    this.answered = null;
    this.moving = true;
    if (touchedKeys) this.cache = undefined;
  }

  /** A named value was read: it is read again with the version when that moves. */
  read(name: string): void {
    if (this.hot.size < MAX_REFRESHED) this.hot.add(name);
  }

  private async load(): Promise<ReadCache> {
    const seq = ++this.begun;
    const names = [...new Set([...this.hot, ...this.warm])];
    this.warm = this.hot;
    this.hot = new Set();
    // When the version is likely to have moved, the named values come in the check's round trip;
    // when it moved unforeseen, in a second one. While nothing moves, the check stays a plain one.
    const withValues = this.moving && names.length > 0;
    const row = (await this.pool.query<CheckRow>(`${CHECK}${withValues ? `, ${namedValues(names)} AS metas` : ''} ${CHECKED}`)).rows[0]!;
    const { ledger, version, keys_version, test, live, id, metas, ...account } = row;
    const before = this.cache;
    // A check begun after this one has come back first: what it read is the newer (never told by
    // the version, which goes back when the ledger is made anew).
    if (before !== undefined && seq < this.kept) return before;
    this.moving = before?.version !== version;
    // The same ledger as the one kept, or one made anew under this process (its schema dropped and
    // made again, or an older copy restored: another table, or a version gone back), of which
    // nothing kept stands: its keys_version may well be the one kept, with other keys behind it.
    const same = before !== undefined && before.ledger === ledger && before.version <= version;
    const cache: ReadCache = {
      ledger,
      version,
      keysVersion: keys_version,
      account: id === null ? undefined : Object.freeze(account),
      balances: [test ?? 0, live ?? 0],
      keys: same && before.keysVersion === keys_version ? before.keys : new Map(),
      metas: same && before.version === version ? before.metas : new Map(),
    };
    if (cache.metas !== before?.metas && names.length > 0) {
      const values =
        metas ?? (await this.pool.query<{ metas: Record<string, string> }>(`SELECT ${namedValues(names)} AS metas`)).rows[0]!.metas;
      for (const name of names) cache.metas.set(name, values[name]);
    }
    if (seq > this.kept) [this.cache, this.kept] = [cache, seq];
    return cache;
  }
}
