// Side-by-side start-up comparison of builds by instructions, for "before → after" figures
// (BENCHMARKS.md), where the wall clock is too noisy to tell 3 % apart:
//
//   node bench/compare-instructions.mjs <old>/bin/carbon.cjs bin/carbon.cjs   [ARGS="balance --json"]
//
// Needs valgrind. Each build runs in a warm HOME of its own: two runs (the first provisions the
// ledger and writes the code cache), then one under callgrind. V8 runs on one thread with its
// seeds fixed, so two runs of the same build agree within about 0.2 %. Prints the instructions of
// each and the change against the first build.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const builds = process.argv.slice(2);
if (builds.length === 0) {
  console.error('usage: node bench/compare-instructions.mjs <bin/carbon.cjs> [<another build> ...]   [ARGS="balance --json"]');
  process.exit(2);
}
const args = (process.env.ARGS ?? 'balance --json').split(' ');
const FLAGS = ['--single-threaded', '--hash-seed=1', '--random-seed=1'];
const TMP = mkdtempSync(join(tmpdir(), 'carbon-instructions-'));

const env = { ...process.env, NO_COLOR: '1' };
for (const name of Object.keys(env)) if (/^CARBON_|^XDG_/.test(name)) delete env[name];
delete env.NODE_EXTRA_CA_CERTS;

try {
  const counts = builds.map((build, i) => {
    const e = { ...env, HOME: mkdtempSync(join(TMP, 'home-')) };
    for (let warm = 0; warm < 2; warm++) spawnSync(process.execPath, [...FLAGS, build, ...args], { env: e });
    const out = join(TMP, `callgrind.${i}`);
    execFileSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, ...FLAGS, build, ...args], {
      env: e,
      stdio: 'ignore',
    });
    // callgrind's own summary line: "summary: <instructions>".
    return Number(/^summary: (\d+)/m.exec(readFileSync(out, 'utf8'))[1]);
  });
  console.log(`${args.join(' ')}: instructions, V8 single-threaded with fixed seeds, one warm run each`);
  builds.forEach((build, i) => {
    const change = i === 0 ? '' : `  ${((counts[i] / counts[0] - 1) * 100).toFixed(2).replace(/^(?!-)/, '+')} %`;
    console.log(`  ${build.padEnd(40)} ${(counts[i] / 1e6).toFixed(2).padStart(9)} M${change}`);
  });
} finally {
  rmSync(TMP, { recursive: true, force: true });
}
