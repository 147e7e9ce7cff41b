/**
 * The tables a snapshot holds (docs/snapshots.md), in the order they are written and loaded, with
 * their columns as every store holds them (src/store/tables.ts). The format is the model's, not a
 * store's: a SQLite ledger's snapshot loads into PostgreSQL and back. A column's kind is how the
 * file spells it: `int` (a whole number), `text`, `bytes` (base64), each `?` when it may be null.
 * `api_keys.default_for` is not a column of the ledger: it is which starting key (test, live,
 * read_only) the key is, from the store's key vault (its ids only, never a key's text).
 * A table marked `journal` is written only when asked for (`--with-journal`): adding the request
 * journal to snapshots is one entry here, and each store's export and import of it.
 */
export const SNAPSHOT_TABLES = [
  {
    name: 'account',
    columns: {
      status: 'text',
      rate: 'int',
      review_limit_cents: 'int',
      clock_offset_ms: 'int',
      rate_limit_requests: 'int?',
      rate_limit_window_ms: 'int',
      created_ms: 'int',
    },
  },
  { name: 'balances', columns: { livemode: 'int', available_cents: 'int' } },
  { name: 'impact', columns: { livemode: 'int', placed_kg: 'int', processing_kg: 'int', offsets: 'int' } },
  { name: 'impact_daily', columns: { livemode: 'int', day: 'int', kg: 'int', offsets: 'int' } },
  {
    name: 'api_keys',
    columns: {
      id: 'text',
      hash: 'bytes',
      livemode: 'int',
      permission: 'text',
      last4: 'text',
      created_ms: 'int',
      revoked_ms: 'int?',
      default_for: 'text?',
    },
  },
  {
    name: 'offsets',
    columns: {
      seq: 'int',
      id: 'text',
      livemode: 'int',
      status: 'text',
      kg: 'int',
      amount_cents: 'int',
      rate: 'int',
      req_kg: 'int?',
      req_amount_cents: 'int?',
      reference: 'text?',
      created_ms: 'int',
      settle_at_ms: 'int?',
      review: 'text?',
      placed_ms: 'int?',
      certificate_id: 'text?',
    },
  },
  {
    name: 'entries',
    columns: { seq: 'int', livemode: 'int', kind: 'text', amount_cents: 'int', offset_id: 'text?', created_ms: 'int' },
  },
  { name: 'idempotency', columns: { livemode: 'int', key: 'text', fingerprint: 'text', offset_id: 'text', created_ms: 'int' } },
  /** The request journal (`--with-journal` only): as masked as it was recorded. */
  {
    name: 'journal',
    journal: true,
    columns: {
      seq: 'int',
      request_id: 'text',
      model_ms: 'int',
      real_ms: 'int',
      method: 'text',
      path: 'text',
      query: 'text',
      status: 'int',
      error_type: 'text?',
      error_code: 'text?',
      error_param: 'text?',
      error_message: 'text?',
      duration_us: 'int',
      key_id: 'text?',
      livemode: 'int?',
      idempotency_key: 'text?',
      replayed: 'int',
      offset_id: 'text?',
      instance: 'text',
      request_body: 'text',
      response_body: 'text',
    },
  },
  /** Only the named values the model lists for snapshots (the fault setting): never the developer page's signing secret. */
  { name: 'meta', columns: { name: 'text', value: 'text' } },
] as const satisfies ReadonlyArray<{ name: string; columns: Record<string, ColumnKind>; journal?: boolean }>;

export type ColumnKind = 'int' | 'int?' | 'text' | 'text?' | 'bytes';
export type SnapshotTable = (typeof SNAPSHOT_TABLES)[number]['name'];

/** The order a table's rows are read in for a snapshot: stable, and the order they are written back. */
const ROW_ORDER: Partial<Record<SnapshotTable, string>> = {
  account: 'id',
  offsets: 'seq',
  entries: 'seq',
  journal: 'seq',
  impact_daily: 'livemode, day',
  idempotency: 'livemode, key',
  meta: 'name',
};

/** A table's SELECT for a snapshot, its columns in SNAPSHOT_TABLES' order (`where`: the store's own filter, for meta). */
export function snapshotSelect(table: (typeof SNAPSHOT_TABLES)[number], where = ''): string {
  return `SELECT ${Object.keys(table.columns).join(', ')} FROM ${table.name}${where} ORDER BY ${ROW_ORDER[table.name] ?? 'livemode'}`;
}
