import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

/**
 * Outside CI, with PostgreSQL's server binaries installed (Debian: /usr/lib/postgresql/N/bin)
 * and no CARBON_TEST_DATABASE_URL: a throw-away cluster in the run's temporary root, on a free
 * loopback port, for this run only. Returns its URL and how to stop it, or null (then the
 * PostgreSQL suites say in one line that they are skipped, and why).
 */
export interface ThrowawayPostgres {
  url: string;
  stop: () => void;
  restart: () => Promise<void>;
  /** The postmaster killed with SIGKILL, as the OOM killer or `kill -9` does: no shutdown at all. */
  killPostmaster: () => void;
  /** Started again after killPostmaster (once its orphaned backends have gone); resolves when it answers. */
  start: () => Promise<void>;
  /**
   * Every process of the cluster stopped (SIGSTOP): the kernel still accepts connections and
   * keeps established ones open, but nothing answers, as in a network partition.
   */
  pause: () => void;
  /** Every process stopped by pause() goes on (SIGCONT). */
  resume: () => void;
}

export async function throwawayPostgres(root: string): Promise<ThrowawayPostgres | null> {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  const bin = versions.map((v) => join('/usr/lib/postgresql', v, 'bin')).find((b) => existsSync(join(b, 'initdb')));
  if (bin === undefined) return null;
  // The server refuses to run as root: as root, the cluster belongs to the postgres user.
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;
  const gid = asRoot ? Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;
  const data = join(root, 'postgres');
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    chmodSync(root, 0o755);
    chownSync(data, uid!, gid!);
    // The postgres user must pass through every folder above the cluster: the run's temporary
    // root (os.tmpdir() in a test process) is made 0700. Traverse only (o+x), and only there.
    const top = realpathSync(tmpdir());
    for (let dir = dirname(realpathSync(root)); dir.startsWith(top); dir = dirname(dir)) {
      const mode = statSync(dir).mode & 0o7777;
      if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
    }
  }
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(join(bin, tool), args, { uid, gid, cwd: data, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.error?.message}`);
  };
  const runAsync = async (tool: string, args: string[]) => {
    const r = await execa(join(bin, tool), args, { uid, gid, cwd: data, reject: false, timeout: 60_000 });
    if (r.exitCode !== 0) throw new Error(`${tool} failed: ${r.stderr || r.message}`);
  };
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  // A password, as every real deployment and CI's cluster have, so what the tests check of a URL
  // (its password masked in every line carbon writes) holds here too.
  const password = randomBytes(12).toString('hex');
  const pwfile = join(root, 'postgres-password');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) chownSync(pwfile, uid!, gid!);
  try {
    run('initdb', [
      '-D',
      data,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${pwfile}`,
      '-U',
      'carbon',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    run('pg_ctl', [
      '-D',
      data,
      '-w',
      '-l',
      join(data, 'log'),
      '-o',
      `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  } catch (err) {
    process.stderr.write(`PostgreSQL suites: no throw-away cluster (${(err as Error).message.split('\n')[0]}).\n`);
    return null;
  }
  const serverOptions = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const postmaster = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  /** The postmaster and every process it started (backends, checkpointer, …), from /proc. */
  const processes = (): number[] => {
    const parent = postmaster();
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          // The parent pid is the second field after the command name, which is in parentheses.
          return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === parent;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [parent, ...children];
  };
  let paused: number[] = [];
  return {
    url: `postgres://carbon:${password}@127.0.0.1:${port}/postgres`,
    killPostmaster: () => process.kill(postmaster(), 'SIGKILL'),
    start: async () => {
      // The old backends notice their postmaster is gone and exit; until they have, the new one
      // refuses to start (their shared memory is still attached).
      for (let attempt = 1; ; attempt++) {
        try {
          await runAsync('pg_ctl', ['-D', data, '-w', '-l', join(data, 'log'), '-o', serverOptions, 'start']);
          return;
        } catch (err) {
          if (attempt >= 50) throw err;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    },
    pause: () => {
      // The postmaster first, so that it starts no process that would be missed.
      const parent = postmaster();
      process.kill(parent, 'SIGSTOP');
      paused = processes();
      for (const pid of paused) if (pid !== parent) process.kill(pid, 'SIGSTOP');
    },
    resume: () => {
      for (const pid of paused.reverse()) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone meanwhile.
        }
      }
      paused = [];
    },
    /**
     * Immediate: every connection is terminated (57P01), then the server is started again.
     * Resolves when it is back; this process goes on meanwhile, so its clients meet the outage.
     */
    restart: () => runAsync('pg_ctl', ['-D', data, '-w', '-m', 'immediate', '-l', join(data, 'log'), '-o', serverOptions, 'restart']),
    stop: () => {
      // A cluster left paused by a failed test is continued first: stopped processes hear no signal but SIGKILL.
      for (const pid of paused) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone.
        }
      }
      spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop'], { uid, gid, timeout: 30_000 });
    },
  };
}
