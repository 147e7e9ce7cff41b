import { rmSync } from 'node:fs';
import { expect } from 'vitest';
import type { ApiErrorBody, ApiRequest, ApiResponse, Mode, Offset } from '../../src/api/types.js';
import { openEngine, type StoreTarget } from '../../src/engine/open.js';
import { ApiError } from '../../src/service/errors.js';
import { Sandbox } from '../../src/service/sandbox.js';
import type { OffsetsService } from '../../src/service/service.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { livemodeOf } from '../../src/store/tables.js';
import { tempDir as makeTempDir } from './temp.js';

/** A fixed starting instant, so timestamps in assertions are predictable. */
export const T0 = Date.UTC(2030, 0, 15, 12, 0, 0, 0);

interface CallOptions {
  /** The API key; `null` sends no Authorization header. Defaults to the world's test key. */
  key?: string | null;
  /** An object is sent as JSON; a string is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | string[]>;
  /** Shorthand for the Idempotency-Key header. */
  idem?: string;
  /** Send the path as given; otherwise `/api/v1` is put in front of paths not starting with `/api/`. */
  raw?: boolean;
}

/**
 * The sandbox of an engine opened on `target` (a data directory is SQLite), as another process
 * would open it; closing the sandbox closes its ledger.
 */
export async function openSandbox(target: StoreTarget | string, clock?: () => number): Promise<Sandbox> {
  return (await openEngine(target, clock === undefined ? {} : { clock })).sandbox;
}

/** One sandbox on a temporary data directory, its service, and a clock the test controls. */
export interface World {
  dir: string;
  sandbox: Sandbox;
  /** The world's SQLite store, for checks below the port's users (its connection, its rows). */
  store: SqliteStore;
  service: OffsetsService;
  keys: { test: string; live: string; readOnly: string };
  /** The injected wall clock, in milliseconds; assign to move or freeze time. */
  clock: { now: number };
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<ApiResponse<T>>;
  /** A purchase that must succeed (fresh Idempotency-Key unless one is given). */
  buy(body: Record<string, unknown>, options?: CallOptions): Promise<ApiResponse<OffsetBody>>;
  /** The SQLite ledger's raw rows, for checks the API cannot make. */
  rows<T>(sql: string, ...params: Array<number | string | null>): T[];
  close(): Promise<void>;
}

/** The Offset as the tests read it: the API's own type. */
export type OffsetBody = Offset;

let counter = 0;

/** A fresh temporary directory (test/support/temp.ts), `carbon-svc-…` unless named otherwise. */
export function tempDir(prefix = 'carbon-svc-'): string {
  return makeTempDir(prefix);
}

/**
 * Opens a sandbox in a fresh temporary directory. `memory: true` keeps the ledger in memory
 * (same code paths, no WAL file), which the property tests use to stay fast.
 */
export async function openWorld(options: { memory?: boolean; start?: number; dir?: string; publicBaseUrl?: string } = {}): Promise<World> {
  const dir = options.dir ?? tempDir();
  const ownDir = options.dir === undefined;
  const clock = { now: options.start ?? T0 };
  const store = options.memory ? SqliteStore.memory(dir) : SqliteStore.open(dir);
  const publicBaseUrl = options.publicBaseUrl === undefined ? {} : { publicBaseUrl: options.publicBaseUrl };
  const sandbox = await Sandbox.over(store, { clock: () => clock.now, ...publicBaseUrl });
  const service = sandbox.service();
  const keys = {
    test: (await sandbox.defaultKey('test'))!,
    live: (await sandbox.defaultKey('live'))!,
    readOnly: (await sandbox.defaultKey('read_only'))!,
  };
  const call = async <T>(method: string, path: string, o: CallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = {};
    const key = o.key === undefined ? keys.test : o.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (o.idem !== undefined) headers['idempotency-key'] = o.idem;
    Object.assign(headers, o.headers);
    const body = o.body === undefined ? '' : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    if (body !== '') headers['content-type'] ??= 'application/json';
    const request: ApiRequest = {
      method,
      path: o.raw || path.startsWith('/api/') ? path : `/api/v1${path}`,
      query: o.query ?? {},
      headers,
      body,
    };
    return (await service.handle(request)) as ApiResponse<T>;
  };
  const world: World = {
    dir,
    sandbox,
    store,
    service,
    keys,
    clock,
    call,
    async buy(body, o = {}) {
      const res = await call<OffsetBody>('POST', '/offsets', { idem: `idem-${process.pid}-${++counter}`, ...o, body });
      if (res.status !== 201) throw new Error(`purchase failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res;
    },
    rows<T>(sql: string, ...params: Array<number | string | null>): T[] {
      return store.db.prepare(sql).all(...params) as T[];
    },
    async close() {
      await sandbox.close();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The error object of an error response, after checking that the envelope has the spec's shape. */
export function errorOf(res: ApiResponse): ApiErrorBody {
  const body = res.body as { error?: ApiErrorBody };
  if (!body || typeof body !== 'object' || !body.error) throw new Error(`not an error envelope: ${JSON.stringify(res.body)}`);
  return body.error;
}

/** Asserts status, code and (when given) param of an error response; returns the error object. */
export function expectError(res: ApiResponse, status: number, code: string, param?: string): ApiErrorBody {
  const err = errorOf(res);
  expect({ status: res.status, code: err.code, param: err.param }, err.message).toEqual({ status, code, param });
  expect(typeof err.message === 'string' && err.message.length > 0).toBe(true);
  return err;
}

/** Sum of a mode's ledger entries by kind. */
export function entrySums(world: World, mode: Mode): { topup: number; charge: number; refund: number; total: number } {
  const rows = world.rows<{ kind: string; s: number }>(
    'SELECT kind, SUM(amount_cents) AS s FROM entries WHERE livemode = ? GROUP BY kind',
    livemodeOf(mode),
  );
  const by = Object.fromEntries(rows.map((r) => [r.kind, r.s]));
  const topup = by.topup ?? 0;
  const charge = by.charge ?? 0;
  const refund = by.refund ?? 0;
  return { topup, charge, refund, total: topup + charge + refund };
}

/** The ApiError a rule throws for `fn`; fails when it throws none. */
export const refused = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};
