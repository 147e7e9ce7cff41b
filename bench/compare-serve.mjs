// Side-by-side serving comparison of builds, for "before → after" figures (BENCHMARKS.md):
//
//   node bench/compare-serve.mjs <old>/bin/carbon.cjs bin/carbon.cjs   [CONN=10 ROUNDS=5 SECS=3]
//   node bench/compare-serve.mjs bin/carbon.cjs bin/carbon.cjs@CARBON_JOURNAL=off   (a build with its own environment)
//   node bench/compare-serve.mjs bare:5 bare:10 bin/carbon.cjs   (the bare server spending 5, 10 µs a request: what a ratio allows)
//
// Starts the bare node:http reference and `carbon serve` from each build given (a bin/carbon.cjs
// or a dist/cli.cjs, with `@NAME=value` for each variable of its own and `@node=PATH` for the Node
// that runs it), each with its stderr to a
// file, then runs autocannon against them in interleaved rounds (every other round in reverse
// order) and prints each one's median requests a second; its ratio to the bare server, the
// median of each round's ratio (a machine whose speed drifts moves both servers of a round
// alike); and its CPU a request, of the whole process and of its main thread (user + system from
// /proc, over the timed rounds).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildsFromArgv, parseBuild, startListening } from './lib/compare.mjs';

const builds = buildsFromArgv('node bench/compare-serve.mjs <bin/carbon.cjs>[@node=PATH][@NAME=value] [<another build> ...]');
const connections = Number(process.env.CONN ?? 10);
const rounds = Number(process.env.ROUNDS ?? 5);
const seconds = Number(process.env.SECS ?? 3);
const TMP = mkdtempSync(join(tmpdir(), 'carbon-compare-'));
const children = [];
const start = (name, args, env, node) => startListening({ name, node, args, env, dir: TMP, children });

/** CPU milliseconds (user + system) a process has used so far. */
function cpuMs(pid, thread = false) {
  const fields = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const servers = [await start('bare node:http', [new URL('lib/bare-server.mjs', import.meta.url).pathname], process.env)];
  for (const build of builds) {
    // `bare:N`: the bare server again, spending N µs of CPU on each request (the budget a server has).
    const spin = /^bare:(\d+(?:\.\d+)?)$/.exec(build);
    if (spin !== null) {
      servers.push(await start(build, [new URL('lib/bare-server.mjs', import.meta.url).pathname], { ...process.env, SPIN_US: spin[1] }));
      continue;
    }
    const { file, node, vars } = parseBuild(build);
    const s = await start(
      build,
      [file, 'serve', '--port', '0', '--show-keys'],
      { ...process.env, ...vars, CARBON_HOME: mkdtempSync(join(TMP, 'home-')) },
      node,
    );
    servers.push({ ...s, url: `${s.ready.url}/balance`, key: s.ready.test_key });
  }
  for (const s of servers) s.runs = [];
  for (let r = -1; r < rounds; r++) {
    for (const s of r % 2 === 0 ? servers : servers.toReversed()) {
      const before = [cpuMs(s.child.pid), cpuMs(s.child.pid, true)];
      const result = await autocannon({
        url: s.url ?? s.ready.url,
        connections,
        duration: r < 0 ? 1 : seconds,
        headers: { authorization: `Bearer ${s.key ?? 'none'}` },
      });
      if (result.non2xx || result.errors) throw new Error(`${s.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      const us = (now, then) => ((now - then) * 1000) / result.requests.total;
      if (r >= 0)
        s.runs.push({ rps: result.requests.average, us: us(cpuMs(s.child.pid), before[0]), main: us(cpuMs(s.child.pid, true), before[1]) });
    }
  }
  const bare = median(servers[0].runs.map((x) => x.rps));
  console.log(`GET /balance, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s, medians`);
  for (const s of servers) {
    const rps = median(s.runs.map((x) => x.rps));
    const paired = median(s.runs.map((x, i) => x.rps / servers[0].runs[i].rps));
    const cpu = (key) => median(s.runs.map((x) => x[key])).toFixed(1);
    console.log(
      `${s.name.padEnd(40)} ${rps.toFixed(0).padStart(7)}/s  ${(rps / bare).toFixed(2)}× (by round ${paired.toFixed(2)}×)  CPU ${cpu('us')} µs a request, ${cpu('main')} on the main thread`,
    );
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  rmSync(TMP, { recursive: true, force: true });
}
