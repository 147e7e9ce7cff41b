import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll } from 'vitest';
import type { ServeReady } from '../../src/cli/commands/serve/run.js';
import { maskKey } from '../../src/service/keys.js';
import { binary } from './binary.js';
import { limit } from './load.js';
import { tempDir, tempDirs } from './temp.js';

/**
 * Runs the built binary as a user or a script would: a fresh CARBON_HOME, an environment with
 * nothing of the developer's (no CARBON_*, no colour variables unless a test sets them), stdout
 * and stderr as pipes (so: not a terminal), and the outcome as {stdout, stderr, exitCode}.
 */

export interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface RunOptions {
  /** CARBON_HOME; required so that no test can touch the developer's real config. */
  home: string;
  /** Added to the base environment; undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once. */
  input?: string;
  /** Milliseconds before the command is killed (and the test fails on its output). */
  timeout?: number;
}

/** The run's copy of the built binary (test/support/binary.ts). */
export const BIN = binary;

/** The environment every run starts from: enough to run node, and nothing that changes carbon. */
export function baseEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    CARBON_HOME: home,
    FORCE_COLOR: '0',
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

export async function carbon(args: string[], options: RunOptions): Promise<Run> {
  const r = await execa(process.execPath, [BIN(), ...args], {
    env: baseEnv(options.home, options.env),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    timeout: options.timeout ?? limit(20_000),
    forceKillAfterDelay: 1_000,
  });
  if (r.timedOut) throw new Error(`carbon ${args.join(' ')} timed out\nstdout: ${String(r.stdout)}\nstderr: ${String(r.stderr)}`);
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
}

/** The base env sets FORCE_COLOR=0 for pipes; a terminal test starts from no colour variable at all. */
export const TTY = { FORCE_COLOR: undefined };

/** Quotes one word for sh -c. */
export const sh = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the binary on a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are all a
 * TTY, as for a person at a terminal. The two streams arrive merged, with \r\n line ends.
 */
export async function carbonTty(
  args: string[],
  options: RunOptions & {
    /** The terminal's width; 0 leaves the pty unsized, as `script` makes it without a terminal. */ columns?: number;
    /** A file stderr is redirected to (`2>FILE`), stdin and stdout staying the terminal. */ stderrTo?: string;
  },
): Promise<{ output: string; exitCode: number }> {
  const columns = options.columns ?? 120;
  const binary =
    [process.execPath, BIN(), ...args].map(sh).join(' ') + (options.stderrTo === undefined ? '' : ` 2>${sh(options.stderrTo)}`);
  const command = columns === 0 ? binary : `stty cols ${columns} rows 40; exec ${binary}`;
  const r = await execa('script', ['-qec', command, '/dev/null'], {
    env: baseEnv(options.home, { TERM: 'xterm-256color', ...options.env }),
    extendEnv: false,
    reject: false,
    input: options.input ?? '',
    timeout: options.timeout ?? limit(20_000),
    forceKillAfterDelay: 1_000,
  });
  if (r.timedOut) throw new Error(`carbon ${args.join(' ')} (terminal) timed out\noutput: ${String(r.stdout)}`);
  return { output: String(r.stdout).replace(/\r\n/g, '\n'), exitCode: r.exitCode ?? -1 };
}

/** A run that must succeed; its failure shows what the command said. */
export async function ok(args: string[], options: RunOptions): Promise<Run> {
  const r = await carbon(args, options);
  if (r.exitCode !== 0) throw new Error(`carbon ${args.join(' ')} exited ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** A run that must succeed with --json; returns the parsed document. */
export async function json<T = Record<string, unknown>>(args: string[], options: RunOptions): Promise<T> {
  const r = await ok([...args, '--json'], options);
  return JSON.parse(r.stdout) as T;
}

/** Fresh CARBON_HOME directories, removed after the file's tests. */
export function homes(): () => string {
  const made = tempDirs('carbon-e2e-');
  afterAll(() => made.removeAll());
  return () => made.make();
}

/** The sandbox's full keys in `home`, as the CLI reveals them. */
export async function sandboxKeys(
  home: string,
): Promise<{ test: string; live: string; readOnly: string; all: Array<Record<string, unknown>> }> {
  const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
  const find = (role: string) => keys.find((k) => k.default === role)!.secret;
  return { test: find('test'), live: find('live'), readOnly: find('read_only'), all: keys };
}

/** Makes homes with `newHome` (from homes()), each with $250 of live balance. */
export function liveHomes(newHome: () => string): () => Promise<string> {
  return async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    return home;
  };
}

/** Every full key the sandbox of `home` holds, for "no full key in this output" checks. */
export async function fullKeys(home: string): Promise<string[]> {
  const keys = await json<Array<{ secret?: string }>>(['sandbox', 'keys', '--reveal'], { home });
  return keys.map((k) => k.secret).filter((k): k is string => k !== undefined);
}

/** Asserts no full key appears in `text` (each may appear only masked). */
export function leakedKeys(text: string, keys: string[]): string[] {
  return keys.filter((k) => text.includes(k) || text.includes(k.slice(8, 28)));
}

export { maskKey };

/** A minimal RFC 4180 reader: quoted fields, doubled quotes, commas and line breaks inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
    else field += c;
    i++;
  }
  if (quoted) throw new Error('unterminated quoted field');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Strips ANSI escape sequences (colour, cursor moves). */
export const plain = (text: string): string => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

/** Has ANSI colour sequences. */
export const coloured = (text: string): boolean => /\u001b\[\d+(;\d+)*m/.test(text);

/**
 * Runs a shell pipeline as a user types it (`carbon list --json | jq …`): `carbon` on PATH is a
 * wrapper around the built binary. Returns the pipeline's outcome (bash with pipefail).
 */
export async function pipeline(script: string, options: RunOptions): Promise<Run> {
  const dir = tempDir('carbon-e2e-bin-');
  try {
    writeFileSync(join(dir, 'carbon'), `#!/bin/sh\nexec ${sh(process.execPath)} ${sh(BIN())} "$@"\n`, { mode: 0o755 });
    const env = baseEnv(options.home, { ...options.env, PATH: `${dir}:${process.env.PATH}` });
    const r = await execa('bash', ['-o', 'pipefail', '-c', script], {
      env,
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
      ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
      timeout: options.timeout ?? limit(30_000),
    });
    if (r.timedOut) throw new Error(`${script} timed out`);
    return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Served {
  url: string;
  /** The URL's origin (http://127.0.0.1:<port>). */
  origin: string;
  /** The one JSON line `carbon serve` printed on stdout. */
  ready: ServeReady;
  /** The process (its exitCode is null while it runs). */
  child: ResultPromise;
  /** Everything on stderr so far (banner, access log). */
  stderr(): string;
  /** Everything on stdout so far. */
  stdout(): string;
  /** Both streams so far, in the order they arrived. */
  output(): string;
  /** Sends a signal (SIGTERM: a graceful close) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<{ exitCode: number | undefined; signal: string | undefined }>;
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<unknown>;
}

const servers = new Set<Served>();
afterAll(async () => {
  // A server left running by a failed test is stopped here, never left behind.
  await Promise.all([...servers].map((s) => s.stop('SIGKILL')));
});

/** `carbon …` in `home` left running, its output streamed (not buffered), its exit code never thrown. */
export function spawnCarbon(home: string, args: string[], env: Record<string, string | undefined> = {}): ResultPromise {
  return execa(process.execPath, [BIN(), ...args], {
    env: baseEnv(home, env),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    buffer: false,
    // execa's kill('SIGTERM') would follow with SIGKILL after 5 s, and a graceful close that takes
    // longer on a loaded machine (a stalled database's deadlines) read as a death by signal:
    // stop() has its own limit, scaled to the load, and afterAll kills what is left.
    forceKillAfterDelay: false,
  });
}

/** `carbon serve --port 0 …` in `home`, as a child process; resolves once its JSON line is out. */
export async function serve(home: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<Served> {
  const child = spawnCarbon(home, ['serve', '--port', '0', ...args], env);
  let out = '';
  let err = '';
  let all = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    all += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    all += d;
  });
  const startLimit = limit(15_000);
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`carbon serve printed no line in ${startLimit} ms\nstderr: ${err}`)), startLimit);
    const check = () => {
      const nl = out.indexOf('\n');
      if (nl !== -1) {
        clearTimeout(timer);
        resolve(out.slice(0, nl));
      }
    };
    child.stdout!.on('data', check);
    void child.then(() => {
      clearTimeout(timer);
      reject(new Error(`carbon serve exited before it was ready\nstderr: ${err}`));
    });
  });
  const ready = JSON.parse(line) as Served['ready'];
  let stopped: Promise<{ exitCode: number | undefined; signal: string | undefined }> | undefined;
  const served: Served = {
    url: ready.url,
    origin: new URL(ready.url).origin,
    ready,
    child,
    stderr: () => err,
    stdout: () => out,
    output: () => all,
    kill: () => served.stop('SIGKILL'),
    stop(signal = 'SIGTERM') {
      stopped ??= (async () => {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), limit(10_000));
        const r = await child;
        clearTimeout(timer);
        servers.delete(served);
        return { exitCode: r.exitCode, signal: r.signal };
      })();
      return stopped;
    },
  };
  servers.add(served);
  return served;
}
