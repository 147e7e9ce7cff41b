// Side-by-side latency of purchases at a steady rate, for "before → after" figures (BENCHMARKS.md,
// "A seventh sitting"): the latency a buyer sees from `carbon serve` at RATE purchases a second.
//
//   node bench/compare-paced.mjs <old>/bin/carbon.cjs bin/carbon.cjs   [RATE=2000 ROUNDS=4 SECS=3]
//   node bench/compare-paced.mjs <old>/bin/carbon.cjs@node=/usr/bin/node bin/carbon.cjs@CARBON_JOURNAL=off
//
// Each build (a bin/carbon.cjs, with `@NAME=value` for each variable of its own, and `@node=PATH`
// for the Node that runs it) gets a ledger of its own, topped up through its own dist/index.js,
// and `carbon serve` on it, its stderr to a file. Each is warmed up with a second of the load,
// then loaded in interleaved rounds (every other round in reverse order) by bench/lib/paced.mjs:
// an open-loop load, each purchase with a fresh idempotency key. Prints each round's p99 and
// p99.9, and how late the generator itself sent requests (its own stalls count in what it measures).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildsFromArgv, parseBuild, startListening } from './lib/compare.mjs';
import { paced } from './lib/paced.mjs';

const builds = buildsFromArgv('node bench/compare-paced.mjs <bin/carbon.cjs>[@node=PATH][@NAME=value] [<another build> ...]');
const rate = Number(process.env.RATE ?? 2000);
const rounds = Number(process.env.ROUNDS ?? 4);
const seconds = Number(process.env.SECS ?? 3);
const TMP = mkdtempSync(join(tmpdir(), 'carbon-compare-'));
const children = [];

try {
  const servers = [];
  for (const build of builds) {
    const { file, node, vars } = parseBuild(build);
    const env = { ...process.env, ...vars, NO_COLOR: '1', CARBON_HOME: mkdtempSync(join(TMP, 'home-')) };
    delete env.NODE_EXTRA_CA_CERTS;
    const index = pathToFileURL(join(dirname(resolve(file)), '..', 'dist', 'index.js')).href;
    const topUp = `const { openLocal } = await import(${JSON.stringify(index)});
      const { client, sandbox } = await openLocal(${JSON.stringify(join(env.CARBON_HOME, 'data'))});
      await sandbox.topUp('test', 100_000_000_000);
      await client.close();`;
    const made = spawnSync(node, ['--input-type=module', '-e', topUp], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (made.status !== 0) throw new Error(`${build}: the top-up exited ${made.status}`);
    servers.push({
      ...(await startListening({ name: build, node, args: [file, 'serve', '--port', '0', '--show-keys'], env, dir: TMP, children })),
      runs: [],
    });
  }
  const load = (s, secs) =>
    paced({
      url: `${s.ready.url}/offsets`,
      method: 'POST',
      headers: { authorization: `Bearer ${s.ready.test_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kg: 1 }),
      rate,
      seconds: secs,
      perRequest: () => ({ 'idempotency-key': randomUUID() }),
    });
  for (const s of servers) await load(s, 1);
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 === 0 ? servers : servers.toReversed()) {
      const x = await load(s, seconds);
      if (x.errors > 0 || x.non2xx > 0) throw new Error(`${s.name}: ${x.errors} errors, ${x.non2xx} non-2xx`);
      s.runs.push(x);
    }
  }
  console.log(`POST /offsets at ${rate} a second, ${rounds} interleaved rounds of ${seconds} s, by round`);
  const column = (s, key) => s.runs.map((x) => x[key].toFixed(2).padStart(6)).join(' ');
  for (const s of servers) {
    console.log(s.name);
    console.log(`  p99 (ms)              ${column(s, 'p99')}`);
    console.log(`  p99.9 (ms)            ${column(s, 'p999')}`);
    console.log(`  generator late (ms)   ${column(s, 'lag')}`);
  }
} finally {
  for (const child of children) child.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
}
