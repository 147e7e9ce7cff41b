import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServeOptions } from '../../src/server/server.js';
import { binary, ROOT as REPO_ROOT } from './binary.js';
import { limit } from './load.js';

/**
 * A `carbon serve` in a child process, for tests that need a real server across a process
 * boundary (the contract suite's HTTP side, SIGTERM). Two ways to start it:
 *
 * - `binary`: `node bin/carbon.cjs serve --host 127.0.0.1 --port 0` with CARBON_HOME set, exactly
 *   as a user runs it (needs `npm run build`; it prints one JSON line with the URL on stdout).
 *   It runs from a copy of bin/ and dist/ (see test/support/binary.ts).
 * - `bundle`: src/server/server.ts bundled with esbuild into a temporary directory and started
 *   by a tiny script. Always the current source, no build step; it also takes ServeOptions
 *   the CLI has no flags for (small timeouts, a small body limit).
 *
 * Both use the same layout: CARBON_HOME=<home>, data directory <home>/data (as the CLI does).
 */

export type ServerLauncher = 'binary' | 'bundle';

export interface ServerProcess {
  url: string;
  origin: string;
  home: string;
  dataDir: string;
  child: ChildProcess;
  launcher: ServerLauncher;
  /** Everything the server wrote to stderr so far (the access log). */
  stderr(): string;
  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** A home to reuse; a fresh temporary one otherwise (removed by stop()). */
  home?: string;
  launcher?: ServerLauncher;
  /** Only for the bundle launcher: extra ServeOptions. */
  serve?: Partial<Omit<ServeOptions, 'log' | 'dataDir' | 'host' | 'port'>>;
  /** How long to wait for the server to say it is listening. */
  startTimeoutMs?: number;
  /** A PostgreSQL URL: the server's ledger (CARBON_DATABASE_URL), instead of SQLite in its home. */
  database?: string;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Which launcher tests use unless told: CARBON_TEST_SERVER=binary|bundle; else the binary when
 * the built CLI is at least as new as every source file (as after `npm test`'s build), else the
 * bundle: a stale dist/ would test yesterday's server.
 */
export function defaultLauncher(): ServerLauncher {
  const chosen = process.env.CARBON_TEST_SERVER;
  if (chosen === 'binary' || chosen === 'bundle') return chosen;
  const cli = join(REPO_ROOT, 'dist', 'cli.cjs');
  if (!existsSync(cli) || !existsSync(join(REPO_ROOT, 'src', 'cli', 'commands', 'serve', 'run.ts'))) return 'bundle';
  return statSync(cli).mtimeMs >= newestMtime(join(REPO_ROOT, 'src')) ? 'binary' : 'bundle';
}

let bundle: Promise<string> | null = null;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Builds src/server/server.ts and its runner script once per test process; returns the runner's path. */
function serverBundle(): Promise<string> {
  bundle ??= (async () => {
    const { build } = await import('esbuild');
    // Inside the repository, as dist/ is: pg resolves from the bundle's own place. Named by this process's pid: one a worker that was stopped before its exit handler ran left
    // behind is removed by the next.
    const cache = join(REPO_ROOT, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    for (const name of readdirSync(cache)) {
      const pid = /^carbon-serve-bundle-(\d+)$/.exec(name)?.[1];
      if (pid !== undefined && !alive(Number(pid))) rmSync(join(cache, name), { recursive: true, force: true });
    }
    const dir = join(cache, `carbon-serve-bundle-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    // pg loads lazily: kept external, by absolute path.
    const pgPath = createRequire(join(REPO_ROOT, 'package.json')).resolve('pg');
    await build({
      entryPoints: [join(REPO_ROOT, 'src/server/server.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      outfile: join(dir, 'server.mjs'),
      logLevel: 'warning',
      plugins: [
        {
          name: 'pg-external',
          setup: (b) => {
            b.onResolve({ filter: /^pg$/ }, () => ({ path: pgPath, external: true }));
          },
        },
      ],
    });
    const runner = join(dir, 'run.mjs');
    writeFileSync(
      runner,
      `import { closeOnSignals, startServer } from './server.mjs';
const log = (line) => process.stderr.write(line + '\\n');
const extra = JSON.parse(process.env.CARBON_TEST_SERVE_OPTIONS || '{}');
const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: process.env.CARBON_TEST_DATA_DIR, log, ...extra });
// Before the line that tells the test to go on: a signal sent on reading it must find the handlers.
closeOnSignals(server, { log });
process.stdout.write(JSON.stringify({ url: server.url, origin: server.origin, data_dir: server.dataDir, pid: process.pid }) + '\\n');
`,
    );
    return runner;
  })();
  return bundle;
}

/** Starts a server child process and resolves once it prints its URL. */
export async function startServerProcess(options: StartOptions = {}): Promise<ServerProcess> {
  const launcher = options.launcher ?? defaultLauncher();
  const ownHome = options.home === undefined;
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'carbon-serve-'));
  const dataDir = join(home, 'data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  const env: NodeJS.ProcessEnv = { ...process.env, CARBON_HOME: home, NO_COLOR: '1', FORCE_COLOR: '0' };
  delete env.CARBON_DATABASE_URL;
  if (options.database !== undefined) env.CARBON_DATABASE_URL = options.database;
  let args: string[];
  if (launcher === 'binary') {
    if (options.serve && Object.keys(options.serve).length > 0) throw new Error('serve options need the bundle launcher');
    args = [binary(), 'serve', '--host', '127.0.0.1', '--port', '0'];
  } else {
    args = [await serverBundle()];
    env.CARBON_TEST_DATA_DIR = dataDir;
    env.CARBON_TEST_SERVE_OPTIONS = JSON.stringify({
      ...options.serve,
      ...(options.database === undefined ? {} : { store: { kind: 'postgres', url: options.database } }),
    });
  }
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
  live.add(child);
  let err = '';
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );

  const startLimit = options.startTimeoutMs ?? limit(20_000);
  const started = await new Promise<{ url: string; origin?: string; data_dir?: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server (${launcher}) did not start within ${startLimit} ms; stderr:\n${err}`));
    }, startLimit);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of out.split('\n').slice(0, -1)) {
        try {
          const parsed = JSON.parse(line) as { url?: unknown };
          if (typeof parsed.url === 'string') {
            clearTimeout(timer);
            resolve(parsed as { url: string });
            return;
          }
        } catch {
          // Not the JSON line; keep reading.
        }
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the server (${launcher}) exited (${code ?? signal}) before listening; stderr:\n${err}`));
    });
  });

  const origin = started.origin ?? new URL(started.url).origin;
  return {
    url: started.url,
    origin,
    home,
    dataDir: started.data_dir ?? dataDir,
    child,
    launcher,
    stderr: () => err,
    async stop(signal = 'SIGTERM', timeoutMs = limit(10_000)) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      if (ownHome) rmSync(home, { recursive: true, force: true });
      return result;
    },
  };
}
