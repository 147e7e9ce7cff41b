/**
 * What the reliability tests share: running the built binary with what a kill test needs (a
 * uid, the child at spawn, a timeout that kills), and reading the ledger straight from the SQLite
 * file to check that the money adds up. `carbon serve` children are test/support/cli.ts's
 * serve(). Everything stays on loopback and in temporary directories.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pluck } from '../../src/store/sqlite/driver.js';
import { binary, ROOT } from './binary.js';
import { type LedgerRows, sqliteRows } from './ledger-check.js';
import { limit } from './load.js';
import { type Db, openSqlite, scalar } from './sqlite.js';
import { tempDirs } from './temp.js';

/** The repository root, as test/support/binary.ts finds it. */
export { ROOT };

/** The built binary under test: this test process's checked copy (test/support/binary.ts). */
export let BIN = join(ROOT, 'bin', 'carbon.cjs');

/** Fails early, and clearly, when the binary has not been built (`npm run build`); takes the copy. */
export function requireBuilt(): void {
  BIN = binary();
}

const homes = tempDirs('carbon-rel-');

/** A fresh, empty temporary directory to use as CARBON_HOME (removed by cleanupHomes). */
export function tempHome(prefix = 'carbon-rel-'): string {
  return homes.make(prefix);
}

/** Removes the temporary homes (the copy of the binary goes when the test process exits). */
export function cleanupHomes(): void {
  homes.removeAll();
}

/** The environment a child gets: this one without any CARBON_* setting, colour off, plus `extra`. */
export function childEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CARBON_') && k !== 'FORCE_COLOR' && k !== 'NO_COLOR') env[k] = v;
  env.CARBON_HOME = home;
  env.NO_COLOR = '1';
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  pid: number;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Killed (and reported as timedOut) after this long; default 20 s. Never a hang. */
  timeoutMs?: number;
  /** Called once the process exists, e.g. to kill it at a chosen moment. */
  onSpawn?: (child: ChildProcess) => void;
  /** Run as this uid/gid (root only). */
  uid?: number;
  gid?: number;
  input?: string;
}

/** Runs `node bin/carbon.cjs ...args` with CARBON_HOME=home; resolves when it has exited. */
export function runCli(home: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return runNode([BIN, ...args], childEnv(home, options.env), options);
}

function runNode(argv: string[], env: NodeJS.ProcessEnv, options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, argv, {
      env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    if (options.input !== undefined) child.stdin!.end(options.input);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? limit(20_000));
    options.onSpawn?.(child);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, timedOut, pid: child.pid ?? -1 });
    });
  });
}

/** Runs `fn` over `items` with at most `limit` at a time; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A small seeded PRNG: runs are random but repeatable from the seed (test/support/seed.ts). */
export { random as rng } from './seed.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The data directory
// ---------------------------------------------------------------------------------------------

export const dataDir = (home: string) => join(home, 'data');
export const ledgerPath = (home: string) => join(dataDir(home), 'ledger.db');

export interface SandboxKeys {
  test: string;
  live: string;
  readOnly: string;
  all: string[];
}

/** The full keys the sandbox handed out (sandbox-keys.json, the developer page's stand-in). */
export function sandboxKeys(home: string): SandboxKeys {
  const file = JSON.parse(readFileSync(join(dataDir(home), 'sandbox-keys.json'), 'utf8')) as {
    defaults: Record<string, string>;
    secrets: Record<string, string>;
  };
  const secret = (which: string) => file.secrets[file.defaults[which]!]!;
  return { test: secret('test'), live: secret('live'), readOnly: secret('read_only'), all: Object.values(file.secrets) };
}

/** Creates the sandbox (ledger and keys) the way the CLI does on first use, and returns its keys. */
export async function provision(home: string): Promise<SandboxKeys> {
  const r = await runCli(home, ['balance', '--json']);
  if (r.code !== 0) throw new Error(`carbon balance failed (${r.code}): ${r.stderr}`);
  return sandboxKeys(home);
}

/** Opens the ledger file directly (not through carbon); the caller closes it. */
export function openLedger(home: string, options: { readonly?: boolean } = {}): Db {
  return openSqlite(ledgerPath(home), options);
}

/** Balances and row counts: what a failed request must leave exactly as it was. */
export function ledgerState(db: Db): { test: number; live: number; offsets: number; entries: number } {
  const one = (sql: string) => scalar(db, sql)!;
  return {
    test: one('SELECT available_cents AS n FROM balances WHERE livemode = 0'),
    live: one('SELECT available_cents AS n FROM balances WHERE livemode = 1'),
    offsets: one('SELECT count(*) AS n FROM offsets'),
    entries: one('SELECT count(*) AS n FROM entries'),
  };
}

/** An offset as the checks read it: its row, less the creation time. */
type OffsetFact = Omit<LedgerRows['offsets'][number], 'created_ms'>;

export interface LedgerFacts {
  integrity: string;
  balances: Record<number, number>;
  offsets: OffsetFact[];
  byId: Map<string, OffsetFact>;
  topups: Record<number, number>;
  charges: Record<number, number>;
  refunds: Record<number, number>;
  /** Every way in which the ledger does not add up; empty when it is exact. */
  problems: string[];
}

/**
 * Reads the whole ledger and checks it: `PRAGMA integrity_check`, `created` in the list's order,
 * and every invariant of test/support/ledger-check.ts (balance = top-ups − charges + refunds, each
 * offset charged once and refunded once exactly when refunded, impact matching the offsets, no
 * balance below zero, one offset per Idempotency-Key).
 */
export function readLedger(home: string): LedgerFacts {
  const db = openLedger(home);
  let integrity: string;
  try {
    integrity = pluck<[], string>(db, 'PRAGMA integrity_check').all().join('; ');
  } finally {
    db.close();
  }
  const rows = sqliteRows(ledgerPath(home));
  const problems = [...rows.problems];
  if (integrity !== 'ok') problems.push(`integrity_check: ${integrity}`);
  const balances: Record<number, number> = {};
  for (const r of rows.balances) balances[r.livemode] = r.available_cents;
  const sum = (kind: 'topup' | 'charge' | 'refund'): Record<number, number> => {
    const total: Record<number, number> = { 0: 0, 1: 0 };
    // Charges are kept negative in the ledger and reported as positive totals.
    for (const e of rows.entries)
      if (e.kind === kind) total[e.livemode] = (total[e.livemode] ?? 0) + (kind === 'charge' ? -e.amount_cents : e.amount_cents);
    return total;
  };
  for (const mode of [0, 1]) {
    // The list's order (insertion) and `created` agree, however many processes bought.
    const created = rows.offsets.filter((o) => o.livemode === mode).map((o) => o.created_ms);
    const backwards = created.findIndex((c, i) => i > 0 && c < created[i - 1]!);
    if (backwards !== -1) problems.push(`mode ${mode}: offset ${backwards} in list order was created before the one listed after it`);
  }
  const offsets: OffsetFact[] = rows.offsets.map(({ created_ms: _created, ...o }) => o);
  return {
    integrity,
    balances,
    offsets,
    byId: new Map(offsets.map((o) => [o.id, o])),
    topups: sum('topup'),
    charges: sum('charge'),
    refunds: sum('refund'),
    problems,
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

interface HttpOptions {
  method?: string;
  key?: string;
  idem?: string;
  body?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

const methodOf = (options: HttpOptions): string => options.method ?? (options.body === undefined ? 'GET' : 'POST');

/**
 * One request with fetch; a network failure resolves as status 0 with the error's text. A request
 * that may be sent twice (a GET, or one with an Idempotency-Key) is sent once more when the kept
 * connection it went out on turns out to have been closed by the server (its keep-alive timeout
 * passed while this process was too busy to notice), as stripe-node retries a connection error:
 * that says nothing about the server. Any other failure, and a second one, is the answer.
 */
export async function http(url: string, options: HttpOptions = {}): Promise<HttpResult> {
  const once = await httpOnce(url, options);
  const repeatable = options.idem !== undefined || methodOf(options) === 'GET';
  return repeatable && once.status === 0 && /other side closed/.test(once.text) ? httpOnce(url, options) : once;
}

async function httpOnce(url: string, options: HttpOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.idem !== undefined) headers['idempotency-key'] = options.idem;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  try {
    const res = await fetch(url, {
      method: methodOf(options),
      headers,
      ...(options.body === undefined ? {} : { body: options.body }),
      signal: AbortSignal.timeout(options.timeoutMs ?? limit(15_000)),
    });
    const text = await res.text();
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      out[k] = v;
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: out, text, json };
  } catch (err) {
    return { status: 0, headers: {}, text: String((err as Error).cause ?? err), json: undefined };
  }
}

/** Matches a JavaScript stack frame, the sign of a stack trace shown to a caller. */
export const STACK_FRAME = /\n\s+at .+(:\d+:\d+\)?|\(native\)|\(node:)/;

/** The id a `carbon buy --json` printed on stdout, or undefined. */
export function printedOffsetId(stdout: string): string | undefined {
  try {
    const o = JSON.parse(stdout) as { object?: string; id?: string };
    return o.object === 'offset' && typeof o.id === 'string' ? o.id : undefined;
  } catch {
    return undefined;
  }
}

/** The error envelope a `--json` command printed on stderr (its last JSON line), or undefined. */
export function printedError(stderr: string): { type: string; code: string; message: string; [k: string]: unknown } | undefined {
  for (const line of stderr.trim().split('\n').reverse()) {
    try {
      const e = (JSON.parse(line) as { error?: { type: string; code: string; message: string } }).error;
      if (e) return e;
    } catch {
      // a warning line
    }
  }
  return undefined;
}
