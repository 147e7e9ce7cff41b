import { isoTime } from '../platform/iso-time.js';
import { LedgerRowError } from '../store/ledger-error.js';
import type { DefaultKey, LedgerStore, LedgerTx, SnapshotRow, SnapshotTable } from '../store/port.js';
import { SNAPSHOT_TABLES } from '../store/port.js';
import { FAULTS_META, markedAgain, parseFaults } from './faults.js';
import { maskedColumn } from './journal-note.js';
import { mustHaveAccount } from './lifecycle.js';
import { endPageAccess } from './page-access.js';
import { fitsRole, markJournalEmptied } from './sandbox-model.js';
import { checkFaults, checkRate, checkRateLimit, checkReviewLimit } from './settings.js';
import {
  type OpenedSnapshot,
  openSnapshot,
  SNAPSHOT_FORMAT,
  SnapshotError,
  type SnapshotHeader,
  SnapshotWriter,
  snapshotTables,
} from './snapshot-format.js';
import { checkIdempotencyKey, isReference } from './validation.js';

/**
 * Snapshots of the sandbox (docs/snapshots.md): the whole model saved to one file, and a file
 * loaded in place of the ledger, all or nothing, in one transaction under the writer lock. The
 * format is the model's (snapshot-format.ts), each store only reads and writes rows
 * (`exportLedger`, `importLedger`), so a SQLite snapshot loads into PostgreSQL and back.
 */

/** The named values a snapshot holds: the fault setting, never the developer page's signing secret or sessions. */
const SNAPSHOT_META = [FAULTS_META] as const;
const CLOCK_OFFSET = Object.keys(SNAPSHOT_TABLES[0].columns).indexOf('clock_offset_ms');
const ACCOUNT = Object.fromEntries(Object.keys(SNAPSHOT_TABLES[0].columns).map((name, i) => [name, i]));
/** The journal's columns of text a caller sent or was answered, with their positions: masked again as they are loaded. */
const JOURNAL_COLUMNS = Object.keys(SNAPSHOT_TABLES.find((t) => t.name === 'journal')!.columns);
const JOURNAL_TEXTS = ['path', 'query', 'error_param', 'error_message', 'idempotency_key', 'request_body', 'response_body'].map(
  (name) => [name, JOURNAL_COLUMNS.indexOf(name)] as const,
);
const KEY_COLUMNS = Object.keys(SNAPSHOT_TABLES.find((t) => t.name === 'api_keys')!.columns);
const ROLES: readonly string[] = ['test', 'live', 'read_only'] satisfies DefaultKey[];

/** One setting of a file, checked as the command that sets it checks it; refused as damage. */
function checkSetting(what: string, check: () => unknown): void {
  try {
    check();
  } catch (err) {
    const why = err instanceof SyntaxError ? 'it is not JSON' : (err as Error).message.replace(/\.$/, '');
    throw new SnapshotError('snapshot_damaged', `${what} is not one carbon sandbox could set (${why})`);
  }
}

/**
 * A key's starting-key role (`default_for`) as the sandbox gives them: one test, one live and one
 * read-only key, each of that mode and access. Loaded, any other was kept (the vault keeps roles
 * without texts) and `sandbox keys` showed it, or the local engine used a live key for test calls.
 */
function checkRole(row: SnapshotRow, seen: Set<string>): void {
  const at = (name: string) => row[KEY_COLUMNS.indexOf(name)];
  const role = at('default_for') as string | null;
  if (role === null) return;
  const key = {
    mode: at('livemode') === 1 ? ('live' as const) : ('test' as const),
    permission: at('permission') as 'purchase' | 'read_only',
  };
  const id = String(at('id'));
  if (!ROLES.includes(role) || !fitsRole(role as DefaultKey, key))
    throw new SnapshotError(
      'snapshot_damaged',
      `key ${id} is marked the starting ${JSON.stringify(role)} key, a role carbon sandbox never gives it`,
    );
  if (seen.has(role)) throw new SnapshotError('snapshot_damaged', `key ${id} is a second starting ${role} key`);
  seen.add(role);
}

/**
 * The text columns the API answers with, or matches a request against, in the shapes the model
 * makes them: an offset's id the API serves as `off_` + letters and digits (the spec's), a
 * certificate's as `cert_` + 24 hex digits, a reference as a purchase takes one (1 to 200
 * characters), an Idempotency-Key as the header takes one, and its request's fingerprint as
 * purchase.ts writes it. Loaded otherwise, the API answered outside its
 * own contract.
 */
const SHAPES: Partial<Record<SnapshotTable, Record<string, (v: string) => boolean>>> = {
  offsets: { id: (v) => /^off_[A-Za-z0-9]+$/.test(v), certificate_id: (v) => /^cert_[0-9a-f]{24}$/.test(v), reference: isReference },
  api_keys: { id: (v) => /^key_[A-Za-z0-9]+$/.test(v) },
  idempotency: { key: isIdempotencyKey, fingerprint: isFingerprint },
};
const SHAPE_COLUMNS = Object.fromEntries(
  Object.entries(SHAPES).map(([table, checks]) => {
    const names = Object.keys(SNAPSHOT_TABLES.find((t) => t.name === table)!.columns);
    return [table, Object.entries(checks).map(([name, ok]) => [name, names.indexOf(name), ok] as const)];
  }),
);

function isIdempotencyKey(v: string): boolean {
  try {
    return checkIdempotencyKey(v, true) === v;
  } catch {
    return false;
  }
}

/** `[kg, amount_cents, reference]`, each as a request may give it (purchase.ts, fingerprint). */
function isFingerprint(v: string): boolean {
  try {
    const f: unknown = JSON.parse(v);
    const whole = (x: unknown) => x === null || Number.isSafeInteger(x);
    return Array.isArray(f) && f.length === 3 && whole(f[0]) && whole(f[1]) && (f[2] === null || typeof f[2] === 'string');
  } catch {
    return false;
  }
}

function checkShapes(batch: { table: SnapshotTable; rows: SnapshotRow[] }): void {
  for (const [name, i, ok] of SHAPE_COLUMNS[batch.table] ?? [])
    for (const row of batch.rows) {
      const v = row[i];
      if (typeof v === 'string' && !ok(v))
        throw new SnapshotError('snapshot_damaged', `${batch.table}.${name} ${JSON.stringify(v)} is not one the model makes`);
    }
}

/**
 * The rows, with the settings a command makes (the account's rate, review limit and rate limit,
 * the fault setting) checked as those commands check them (settings.ts): a file cannot give the
 * model what `carbon sandbox` refuses, which broke every later request (a window of 0 ms, a fault
 * setting that is no JSON) after a load that had said it was done.
 */
async function* checked(batches: OpenedSnapshot['batches']): OpenedSnapshot['batches'] {
  const roles = new Set<string>();
  for await (const batch of batches) {
    checkShapes(batch);
    if (batch.table === 'api_keys') for (const row of batch.rows) checkRole(row, roles);
    if (batch.table === 'account')
      for (const row of batch.rows) {
        const n = (name: string) => row[ACCOUNT[name]!] as number;
        checkSetting("the account's rate", () => checkRate(n('rate')));
        checkSetting("the account's review limit", () => checkReviewLimit(n('review_limit_cents')));
        checkSetting("the account's rate limit", () =>
          checkRateLimit(row[ACCOUNT.rate_limit_requests!] as number | null, n('rate_limit_window_ms')),
        );
      }
    if (batch.table === 'meta')
      for (const row of batch.rows)
        if (row[0] === FAULTS_META) checkSetting('the fault setting', () => checkFaults(parseFaults(row[1] as string)!));
    // The journal as the file has it, a key or a password written into it by hand masked all the same.
    if (batch.table === 'journal')
      for (const row of batch.rows)
        for (const [name, i] of JOURNAL_TEXTS) if (typeof row[i] === 'string') row[i] = maskedColumn(name, row[i] as string);
    yield batch;
  }
}

/** What a snapshot holds, as `save`, `load` and `--dry-run` print it. */
export interface SnapshotSummary {
  object: 'snapshot';
  format: number;
  /** The carbon that saved it. */
  carbon: string;
  /** When it was saved (wall clock). */
  created: string;
  /** The model's clock in it: a load starts the clock again from here. */
  clock: { now: string };
  journal: boolean;
  /** Rows per table. */
  counts: Record<string, number>;
}

function summary(header: SnapshotHeader): SnapshotSummary {
  return {
    object: 'snapshot',
    format: header.carbon_snapshot,
    carbon: header.carbon,
    created: header.created,
    // From now_ms, the time a load sets (the text beside it is for people reading the file).
    clock: { now: isoTime(header.clock.now_ms) },
    journal: header.journal,
    counts: Object.fromEntries(Object.entries(header.tables).map(([name, t]) => [name, t.rows])),
  };
}

export class Snapshots {
  constructor(
    private readonly ledger: LedgerStore,
    private readonly clock: () => number,
  ) {}

  /**
   * Writes the whole model through `write` (which should wait while its reader is behind), from
   * one consistent read that holds no lock: purchases go on while a large ledger is saved.
   */
  async save(write: (text: string) => Promise<void>, options: { carbon: string; journal?: boolean }): Promise<SnapshotSummary> {
    const journal = options.journal === true;
    const view = await this.ledger.exportLedger(SNAPSHOT_META);
    try {
      const accountRows: SnapshotRow[] = [];
      for await (const batch of view.rows('account')) accountRows.push(...batch);
      const account = accountRows[0];
      if (account === undefined) mustHaveAccount(undefined, this.ledger.label);
      const offsetMs = account![CLOCK_OFFSET] as number;
      const nowMs = this.clock() + offsetMs;
      const tables = snapshotTables(journal);
      const header: SnapshotHeader = {
        carbon_snapshot: SNAPSHOT_FORMAT,
        created: isoTime(this.clock()),
        carbon: options.carbon,
        clock: { now: isoTime(nowMs), now_ms: nowMs, offset_ms: offsetMs },
        journal,
        tables: Object.fromEntries(tables.map((t) => [t.name, { columns: Object.keys(t.columns), rows: view.counts[t.name] }])),
      };
      const writer = new SnapshotWriter(write);
      await writer.header(header);
      await writer.rows('account', accountRows);
      for (const t of tables.slice(1)) for await (const batch of view.rows(t.name)) await writer.rows(t.name, batch);
      await writer.end();
      return summary(header);
    } finally {
      await view.close();
    }
  }

  /**
   * Replaces the ledger with the snapshot `open()` reads, in one transaction under the writer
   * lock: a file refused anywhere (its header, a row, the checksum at its end) leaves the ledger
   * as it was. The model's clock starts again from the snapshot's, so what was processing then is
   * processing now. Developer page sessions end, as on reset. `open` is called again only if the
   * store runs the transaction again (a serialization failure).
   */
  async load(open: () => AsyncIterable<string>): Promise<SnapshotSummary> {
    // The header is checked before the lock is taken: a file that is no snapshot waits for nobody.
    let first: OpenedSnapshot | undefined = await openSnapshot(open());
    const header = first.header;
    await this.ledger.transaction(async (tx) => {
      const snapshot = first ?? (await openSnapshot(open()));
      first = undefined;
      await this.replace(tx, snapshot);
    });
    return summary(header);
  }

  private async replace(tx: LedgerTx, snapshot: OpenedSnapshot): Promise<void> {
    const now = this.clock();
    const savedNow = snapshot.header.clock.now_ms;
    async function* rows(): AsyncGenerator<{ table: SnapshotTable; rows: SnapshotRow[] }> {
      for await (const batch of checked(snapshot.batches)) {
        // Model time = wall clock + offset: the offset that makes it the snapshot's time now.
        if (batch.table === 'account') for (const row of batch.rows) row[CLOCK_OFFSET] = savedNow - now;
        yield batch;
      }
    }
    try {
      await tx.importLedger(rows(), SNAPSHOT_META);
    } catch (err) {
      if (err instanceof LedgerRowError) throw new SnapshotError('snapshot_damaged', `a row breaks the ledger's rules (${err.message})`);
      throw err;
    }
    // Rows each fine alone that together are no ledger the model makes (an amount not its kg at its
    // rate, a balance not its entries' sum): refused before the commit, as the rows are.
    const problem = await tx.ledgerProblem();
    if (problem !== null) throw new SnapshotError('snapshot_damaged', `the ledger it holds does not add up: ${problem}`);
    await endPageAccess(tx);
    // The fault setting loaded is set anew: every instance starts its seeded sequence again.
    const faults = await tx.meta(FAULTS_META);
    if (faults !== undefined) await tx.putMeta(FAULTS_META, markedAgain(faults));
    await markJournalEmptied(tx, this.clock);
  }
}

/** Reads a whole snapshot and checks it (the header, every row, the checksum), touching no ledger: `--dry-run`. */
export async function inspectSnapshot(lines: AsyncIterable<string>): Promise<SnapshotSummary> {
  const { header, batches } = await openSnapshot(lines);
  for await (const _ of checked(batches));
  return summary(header);
}
