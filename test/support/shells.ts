import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { binary, buildIfStale, ROOT } from './binary.js';
/**
 * The completion scripts are tested in real shells against the built binary: a `carbon` shim on
 * PATH execs `node <bin>`, in a temporary HOME and CARBON_HOME. The binary is the e2e harness's
 * snapshot of bin/ + dist/ (built first when src/ changed), so a build running elsewhere in this
 * shared tree cannot pull dist/ away mid-test. The scripts come from completions/ itself.
 */

export const COMPLETIONS = join(ROOT, 'completions');
export const SCRIPT = {
  bash: join(COMPLETIONS, 'carbon.bash'),
  zsh: join(COMPLETIONS, '_carbon'),
  fish: join(COMPLETIONS, 'carbon.fish'),
} as const;

export interface Sandbox {
  /** HOME and CARBON_HOME. */
  home: string;
  /** Holds the `carbon` shim; first on PATH. */
  binDir: string;
  env: Record<string, string>;
  cleanup(): void;
}

/**
 * Runs `fn` holding a lock shared by the test files of this run (vitest runs them in parallel
 * workers): only one of them rebuilds a stale dist/, the others then find it fresh.
 */
function withBuildLock<T>(fn: () => T): T {
  const lock = join(ROOT, 'node_modules', '.cache', 'carbon-completions-build.lock');
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock left by a killed run: a build never takes this long.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 150_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited too long for ${lock}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds (when stale) and copies the binary, then makes a home with a `carbon` shim on PATH. */
export function makeSandbox(): Sandbox {
  withBuildLock(buildIfStale);
  const bin = binary();
  const home = mkdtempSync(join(tmpdir(), 'carbon-completions-'));
  const binDir = join(home, 'bin');
  mkdirSync(binDir);
  const shim = join(binDir, 'carbon');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`);
  chmodSync(shim, 0o755);
  const env = {
    PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    CARBON_HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    NO_COLOR: '1',
  };
  return {
    home,
    binDir,
    env,
    cleanup() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface Result {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs a program in the sandbox's environment only, bounded in time. */
export async function run(sandbox: Sandbox, file: string, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Result> {
  const r = await execa(file, args, {
    env: { ...sandbox.env, ...extraEnv },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    cwd: sandbox.home,
    timeout: 20_000,
    forceKillAfterDelay: 1_000,
  });
  if (r.timedOut) throw new Error(`${file} ${args.join(' ')} timed out\nstdout: ${String(r.stdout)}\nstderr: ${String(r.stderr)}`);
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
}

/** `carbon ARGS…` through the shim, as the shells call it. */
export const carbon = (sandbox: Sandbox, args: readonly string[], env?: Record<string, string>): Promise<Result> =>
  run(sandbox, join(sandbox.binDir, 'carbon'), args, env);

/** Lines of output, without the empty trailing one. */
export const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

/** The values of `__complete` output or of fish's `complete -C` (VALUE<TAB>DESCRIPTION lines). */
export const values = (text: string): string[] => lines(text).map((l) => l.split('\t')[0]!);
