import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, ok } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Issue 34, item 7: `buy --from-csv` streams the file. Each run's peak RSS is the child's own
 * (VmHWM in /proc/self/status, written by a preload when it exits): a memory bound, not a timing. Before the file was streamed, a 300,000-row dry run peaked at 708 MB and a 60 MB file
 * with an unclosed quote at 333 MB.
 */
const newHome = homes();
const BOUND_KB = 150 * 1024;
const ROWS = 300_000;

/** Runs carbon with a preload that writes its peak RSS (KiB) to a file when it exits. */
async function measured(home: string, args: string[]) {
  const preload = join(home, 'peak.cjs');
  const out = join(home, 'peak.txt');
  writeFileSync(
    preload,
    // VmHWM, the process's own peak: getrusage's maxRSS can carry the parent's across execve.
    `process.on('exit', () => { const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(out)}, /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]); });\n`,
  );
  const r = await carbon(args, { home, env: { NODE_OPTIONS: `--require ${preload}` } });
  return { ...r, peakKb: Number(readFileSync(out, 'utf8')) };
}

/** A file of `rows` rows, as a spreadsheet exports one: a reference each, kg from 1 to 1,000. */
async function bigFile(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('Reference,kg CO2e,Notes\n');
  for (let i = 1; i <= rows; i++) {
    if (!out.write(`flight-${i},${1 + ((i * 7919) % 1000)},trip ${i}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise((resolve) => out.end(resolve));
}

const lines = (stdout: string) => stdout.split('\n').filter(Boolean).length;

describe('buy --from-csv in bounded memory', () => {
  test(
    'a 300,000-row file: the dry run prints every row under 150 MB',
    async () => {
      const home = newHome();
      const csv = join(home, 'big.csv');
      await bigFile(csv, ROWS);
      const r = await measured(home, ['buy', '--from-csv', csv, '--dry-run']);
      // The test balance ($1,000) does not cover 150 million kg: exit 3, after every row's quote.
      expect(r.exitCode).toBe(3);
      expect(lines(r.stdout)).toBe(ROWS + 1);
      expect(r.stderr).toContain(`does not cover the batch (${ROWS.toLocaleString('en-US')} rows`);
      expect(r.peakKb).toBeGreaterThan(0);
      expect(r.peakKb).toBeLessThan(BOUND_KB);
    },
    limit(240_000),
  );

  test(
    'a 300,000-row file, bought for real: rows bought until the balance runs out, every row reported, under 150 MB',
    async () => {
      const home = newHome();
      const csv = join(home, 'big.csv');
      await bigFile(csv, ROWS);
      const r = await measured(home, ['buy', '--from-csv', csv, '--partial']);
      expect(r.exitCode).toBe(10);
      expect(lines(r.stdout)).toBe(ROWS + 1);
      expect(r.stderr).toMatch(/^error: Batch incomplete: [\d,]+ of 300,000 rows bought .*1 failed, [\d,]+ skipped/m);
      const bought = Number(/Batch incomplete: ([\d,]+) of/.exec(r.stderr)![1]!.replaceAll(',', ''));
      expect(bought).toBeGreaterThan(0);
      expect((await ok(['impact', '--json'], { home })).stdout).toContain(`"offsets": ${bought}`);
      expect(r.peakKb).toBeLessThan(BOUND_KB);
    },
    limit(240_000),
  );

  test(
    'a 60 MB file with an unclosed quote is refused (exit 2) under 150 MB, naming the line',
    async () => {
      const home = newHome();
      const csv = join(home, 'open-quote.csv');
      const out = createWriteStream(csv);
      out.write('kg,reference\n5,ok\n6,"never closed\n');
      const block = `${'x'.repeat(1023)}\n`;
      for (let i = 0; i < 60 * 1024; i++) if (!out.write(block)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      await new Promise((resolve) => out.end(resolve));
      const r = await measured(home, ['buy', '--from-csv', csv]);
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^error: The CSV cannot be read: the row after line 2 runs on past 64 KiB \(an unclosed quote\?\)\. Nothing was bought\.\n$/,
      );
      expect(r.peakKb).toBeLessThan(BOUND_KB);
      expect((await ok(['impact', '--json'], { home })).stdout).toContain('"offsets": 0');
    },
    limit(120_000),
  );
});
