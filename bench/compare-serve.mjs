// Side-by-side serving comparison of builds, for "before → after" figures (BENCHMARKS.md):
//
//   node bench/compare-serve.mjs <old>/bin/carbon.cjs bin/carbon.cjs   [CONN=10 ROUNDS=5 SECS=3]
//
// Starts the bare node:http reference and `carbon serve` from each build given (a bin/carbon.cjs
// or a dist/cli.cjs), each with its stderr to a file, then runs autocannon against them in
// interleaved rounds and prints each one's median requests a second, its ratio to the bare
// server, and its CPU a request (user + system from /proc/<pid>/stat, over the timed rounds).
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const builds = process.argv.slice(2);
if (builds.length === 0) {
  console.error('usage: node bench/compare-serve.mjs <bin/carbon.cjs> [<another build> ...]');
  process.exit(2);
}
const connections = Number(process.env.CONN ?? 10);
const rounds = Number(process.env.ROUNDS ?? 5);
const seconds = Number(process.env.SECS ?? 3);
const TMP = mkdtempSync(join(tmpdir(), 'carbon-compare-'));
const children = [];

function start(name, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', openSync(join(TMP, `${children.length}.log`), 'w')] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ name, child, ready: JSON.parse(out.slice(0, nl)) });
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
}

/** CPU milliseconds (user + system) a process has used so far. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const servers = [await start('bare node:http', [new URL('lib/bare-server.mjs', import.meta.url).pathname], process.env)];
  for (const build of builds) {
    const s = await start(build, [build, 'serve', '--port', '0', '--show-keys'], {
      ...process.env,
      CARBON_HOME: mkdtempSync(join(TMP, 'home-')),
    });
    servers.push({ ...s, url: `${s.ready.url}/balance`, key: s.ready.test_key });
  }
  for (const s of servers) s.runs = [];
  for (let r = -1; r < rounds; r++) {
    for (const s of servers) {
      const before = cpuMs(s.child.pid);
      const result = await autocannon({
        url: s.url ?? s.ready.url,
        connections,
        duration: r < 0 ? 1 : seconds,
        headers: { authorization: `Bearer ${s.key ?? 'none'}` },
      });
      if (result.non2xx || result.errors) throw new Error(`${s.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      if (r >= 0) s.runs.push({ rps: result.requests.average, us: ((cpuMs(s.child.pid) - before) * 1000) / result.requests.total });
    }
  }
  const bare = median(servers[0].runs.map((x) => x.rps));
  console.log(`GET /balance, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians`);
  for (const s of servers) {
    const rps = median(s.runs.map((x) => x.rps));
    console.log(
      `${s.name.padEnd(40)} ${rps.toFixed(0).padStart(7)}/s  ${(rps / bare).toFixed(2)}×  CPU ${median(s.runs.map((x) => x.us)).toFixed(1)} µs a request`,
    );
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  rmSync(TMP, { recursive: true, force: true });
}
