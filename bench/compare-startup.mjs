// Side-by-side start-up comparison of builds, for "before → after" figures (BENCHMARKS.md):
//
//   node bench/compare-startup.mjs <old>/bin/carbon.cjs bin/carbon.cjs   [ROUNDS=60 ARGS="balance --json"]
//   node bench/compare-startup.mjs floor bin/carbon.cjs   (beside the least a `balance --json` can do)
//
// `floor` is bench/lib/floor.cjs, a few lines that do only what any program answering `balance
// --json` from carbon's ledger must (node:sqlite, the ledger opened, one row read and printed), on
// a ledger this checkout's carbon made: what the runtime itself costs, whatever ARGS says.
//
// Runs `node -e 0` and the command with each build, interleaved (each round starts at a different
// one), with and without NODE_EXTRA_CA_CERTS, each build in a warm HOME of its own, and
// prints the median wall time and its ratio to `node -e 0`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const builds = process.argv.slice(2);
if (builds.length === 0) {
  console.error('usage: node bench/compare-startup.mjs <bin/carbon.cjs> [<another build> ...]');
  process.exit(2);
}
const rounds = Number(process.env.ROUNDS ?? 60);
const args = (process.env.ARGS ?? 'balance --json').split(' ');
const TMP = mkdtempSync(join(tmpdir(), 'carbon-compare-'));
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  for (const withCa of [true, false]) {
    const env = { ...process.env, NO_COLOR: '1' };
    for (const name of Object.keys(env)) if (/^CARBON_/.test(name)) delete env[name];
    if (!withCa) delete env.NODE_EXTRA_CA_CERTS;
    const commands = [{ name: 'node -e 0', argv: ['-e', '0'], env }];
    for (const build of builds) {
      const home = mkdtempSync(join(TMP, 'home-'));
      // A person's environment: HOME, no CARBON_HOME or XDG_* (the ledger in ~/.local/share/carbon).
      const e = { ...env, HOME: home };
      for (const name of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME']) delete e[name];
      if (build === 'floor') {
        spawnSync(process.execPath, [new URL('../bin/carbon.cjs', import.meta.url).pathname, 'balance', '--json'], { env: e });
        commands.push({ name: 'floor (bench/lib/floor.cjs)', argv: [new URL('lib/floor.cjs', import.meta.url).pathname], env: e });
        continue;
      }
      spawnSync(process.execPath, [build, ...args], { env: e }); // provisions the ledger; warm from here
      commands.push({ name: build, argv: [build, ...args], env: e });
    }
    const times = commands.map(() => []);
    for (let r = 0; r < rounds + 3; r++) {
      for (let j = 0; j < commands.length; j++) {
        const i = (j + r) % commands.length;
        const started = process.hrtime.bigint();
        const run = spawnSync(process.execPath, commands[i].argv, { env: commands[i].env });
        if (run.status !== 0) throw new Error(`${commands[i].name} exited ${run.status}: ${run.stderr}`);
        if (r >= 3) times[i].push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    console.log(`${args.join(' ')}, ${rounds} interleaved rounds, ${withCa ? 'with' : 'without'} NODE_EXTRA_CA_CERTS, medians`);
    for (let i = 0; i < commands.length; i++) {
      console.log(
        `  ${commands[i].name.padEnd(40)} ${median(times[i]).toFixed(1).padStart(6)} ms  ${(median(times[i]) / median(times[0])).toFixed(2)}×`,
      );
    }
  }
} finally {
  rmSync(TMP, { recursive: true, force: true });
}
