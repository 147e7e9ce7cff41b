#!/usr/bin/env node
// `node bench/batch.mjs [--rows N] [--rounds N]`: how long `carbon buy --from-csv` takes to check
// a file of N rows (default 300,000) with --dry-run on the local engine, and its peak RSS
// (BENCHMARKS.md, "buy --from-csv"). Needs `npm run build` first. Each round runs in a fresh
// CARBON_HOME; the file is made once, as a spreadsheet exports one (a reference a row, kg from 1
// to 1,000, a notes column that is ignored). Everything is made in, and removed with, one temp dir.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rows = arg('--rows', 300_000);
const rounds = arg('--rounds', 3);

const dir = mkdtempSync(join(os.tmpdir(), 'carbon-bench-batch-'));
try {
  const csv = join(dir, 'batch.csv');
  const out = createWriteStream(csv);
  out.write('Reference,kg CO2e,Notes\n');
  for (let i = 1; i <= rows; i++) {
    if (!out.write(`flight-${i},${1 + ((i * 7919) % 1000)},trip ${i}\n`)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve) => out.end(resolve));
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    const home = join(dir, `home-${round}`);
    const rssFile = join(dir, `rss-${round}`);
    const started = process.hrtime.bigint();
    const r = spawnSync(
      process.execPath,
      ['-r', join(root, 'bench/lib/peak-rss.cjs'), join(root, 'bin/carbon.cjs'), 'buy', '--from-csv', csv, '--dry-run'],
      {
        env: { ...process.env, CARBON_HOME: home, BENCH_RSS_FILE: rssFile },
        stdio: ['ignore', 'ignore', 'pipe'],
        maxBuffer: 1 << 20,
      },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // The test balance does not cover the file: exit 3, after every row is read and quoted.
    if (r.status !== 3) throw new Error(`exit ${r.status}: ${r.stderr}`);
    results.push({ seconds, mb: Number(readFileSync(rssFile, 'utf8')) / 1024 });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `buy --from-csv --dry-run, ${rows} rows (${(readFileSync(csv).length / 1e6).toFixed(1)} MB), Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
  );
  for (const [i, r] of results.entries()) console.log(`  round ${i + 1}: ${r.seconds.toFixed(1)} s, peak RSS ${r.mb.toFixed(0)} MB`);
  console.log(
    `  median: ${median(results.map((r) => r.seconds)).toFixed(1)} s, peak RSS ${median(results.map((r) => r.mb)).toFixed(0)} MB`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
