import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { API_PREFIX, type ApiRequest, type ApiResponse } from '../../src/api/types.js';
import { CarbonClient } from '../../src/client/client.js';
import { HttpTransport } from '../../src/client/http-transport.js';
import type { RetryPolicy } from '../../src/client/retry.js';
import { LocalTransport, type Transport } from '../../src/client/transport.js';
import { openEngine, type StoreTarget } from '../../src/engine/open.js';
import type { Sandbox } from '../../src/service/sandbox.js';
import { type EngineKind, type StoreKind, testLedger } from './matrix.js';
import type { Exchange } from './openapi.js';
import { type ServerProcess, startServerProcess } from './server-process.js';

/**
 * The two engines the contract suite runs on. Each is a data directory with the service behind
 * a Transport: in this process (`local`), or a `carbon serve` child process over HTTP (`http`).
 * Sandbox operations (top-ups, the clock, failures, the rate limit) go through a second engine
 * opened on the same ledger, as `carbon sandbox …` in another shell would: the service re-reads
 * the account on every request, so this works across processes. The engine × store matrix the
 * suites run on is test/support/matrix.ts.
 */

export type { EngineKind, StoreKind };

interface RawRequest {
  method: string;
  /** Relative to /api/v1 (`/offsets`), or absolute from the origin when it does not start with `/`… use `fullPath`. */
  path: string;
  /** Use this path as is, without the /api/v1 prefix. */
  fullPath?: boolean;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** `undefined` sends the default key; `null` sends no Authorization header. */
  key?: string | null;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
}

interface Keys {
  test: string;
  live: string;
  readOnly: string;
}

interface ClientSettings {
  retry?: Partial<RetryPolicy>;
  sleep?: (ms: number) => Promise<void>;
}

export interface Engine {
  kind: EngineKind;
  dataDir: string;
  /** The origin certificate URLs point at. */
  origin: string;
  /** A handle on the same data directory, for sandbox operations. */
  sandbox: Sandbox;
  /** The account's starting keys (they change on reset). */
  keys(): Keys;
  /** A typed client with the given key; no retries unless asked for, so errors show at once. */
  client(key: string, settings?: ClientSettings): CarbonClient;
  /** One request as given, through the same transport; the default key is the test key. */
  raw<T = unknown>(request: RawRequest): Promise<ApiResponse<T>>;
  /** Every response the engine gave, for the OpenAPI check. */
  exchanges: Exchange[];
  /** Back to a fresh account (new keys, a fresh balance, no offsets, the clock at zero offset). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Wraps a transport to keep a copy of every exchange. */
class RecordingTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly log: Exchange[],
  ) {}

  async request(request: ApiRequest): Promise<ApiResponse> {
    const response = await this.inner.request(request);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) headers[name.toLowerCase()] = value;
    this.log.push({
      method: request.method,
      path: request.path,
      status: response.status,
      headers,
      body: response.body,
      request: { headers: request.headers, body: request.body },
    });
    return response;
  }
}

function toApiRequest(r: RawRequest, defaultKey: string): ApiRequest {
  const headers: Record<string, string> = {};
  const key = r.key === undefined ? defaultKey : r.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body = '';
  if (r.body !== undefined) {
    body = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    headers['content-type'] = 'application/json';
  }
  for (const [name, value] of Object.entries(r.headers ?? {})) headers[name.toLowerCase()] = value;
  return { method: r.method, path: r.fullPath ? r.path : `${API_PREFIX}${r.path}`, query: r.query ?? {}, headers, body };
}

async function readKeys(sandbox: Sandbox): Promise<Keys> {
  const test = await sandbox.defaultKey('test');
  const live = await sandbox.defaultKey('live');
  const readOnly = await sandbox.defaultKey('read_only');
  if (!test || !live || !readOnly) throw new Error('the sandbox is missing a starting key');
  return { test, live, readOnly };
}

async function makeEngine(
  kind: EngineKind,
  dataDir: string,
  target: StoreTarget,
  origin: string,
  transport: Transport,
  stop: () => Promise<void>,
): Promise<Engine> {
  const handle = await openEngine(target);
  const { sandbox } = handle;
  const exchanges: Exchange[] = [];
  const recording = new RecordingTransport(transport, exchanges);
  let keys = await readKeys(sandbox);
  return {
    kind,
    dataDir,
    origin,
    sandbox,
    exchanges,
    keys: () => keys,
    client: (key, settings = {}) =>
      new CarbonClient({
        apiKey: key,
        transport: recording,
        retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 5, ...settings.retry },
        ...(settings.sleep ? { sleep: settings.sleep } : {}),
      }),
    raw: async <T>(request: RawRequest) => (await recording.request(toApiRequest(request, keys.test))) as ApiResponse<T>,
    async reset() {
      await sandbox.reset();
      keys = await readKeys(sandbox);
    },
    async close() {
      await handle.close();
      await stop();
    },
  };
}

/** The in-process engine: the service over its own handle on the store. */
async function startLocalEngine(store: StoreKind = 'sqlite'): Promise<Engine> {
  const home = mkdtempSync(join(tmpdir(), 'carbon-contract-local-'));
  const dataDir = join(home, 'data');
  const ledger = testLedger(store, 'contract');
  const target = ledger.target(dataDir);
  const origin = 'http://127.0.0.1:4010';
  const serving = await openEngine(target, { publicBaseUrl: origin });
  const transport = new LocalTransport(serving.service);
  return makeEngine('local', dataDir, target, origin, transport, async () => {
    await serving.close();
    await ledger.drop();
    rmSync(home, { recursive: true, force: true });
  });
}

/** The served engine: a `carbon serve` child process, reached over HTTP. */
async function startHttpEngine(store: StoreKind = 'sqlite'): Promise<Engine & { server: ServerProcess }> {
  const ledger = testLedger(store, 'contract');
  const server = await startServerProcess(ledger.database === undefined ? {} : { database: ledger.database });
  const target = ledger.target(server.dataDir);
  const transport = new HttpTransport({ baseUrl: server.url, timeoutMs: 10_000 });
  const engine = await makeEngine('http', server.dataDir, target, server.origin, transport, async () => {
    const { code, signal } = await server.stop('SIGTERM');
    await ledger.drop();
    if (code !== 0) throw new Error(`the server exited with ${code ?? signal}; stderr:\n${server.stderr()}`);
  });
  return Object.assign(engine, { server });
}

/**
 * The engines a test project runs the contract on: `unit` the in-process ones, `integration` the
 * HTTP ones (CARBON_CONTRACT_ENGINES, set in vitest.config.ts); both when run without a project.
 */
export function forThisProject(kind: EngineKind): boolean {
  const only = process.env.CARBON_CONTRACT_ENGINES;
  return only === undefined || only === kind;
}

/**
 * An engine for the tests of one describe block: started before them, reset to a fresh account
 * before each (so every test sets up what it reads), closed after them.
 */
export function useEngine(kind: EngineKind, store: StoreKind): Engine {
  let current: Engine | undefined;
  beforeAll(async () => {
    current = await startEngine(kind, store);
  });
  afterAll(async () => {
    await current?.close();
  });
  beforeEach(async () => {
    await current!.reset();
  });
  return new Proxy({} as Engine, {
    get(_target, name) {
      const value = (current as unknown as Record<PropertyKey, unknown>)[name];
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

function startEngine(kind: EngineKind, store: StoreKind = 'sqlite'): Promise<Engine> {
  return kind === 'local' ? startLocalEngine(store) : startHttpEngine(store);
}
