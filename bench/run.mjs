#!/usr/bin/env node
// `npm run bench`: measures every target of issue 5 against a reference measured in the same
// run, and prints one table. Plain Node ESM, so it runs on the built dist/ without a TS step.
//
// The machine this runs on is small and shared: every comparison is a ratio of figures measured
// side by side, interleaved, with many repetitions, and judged on medians.
//
//   node bench/run.mjs [--only startup,throughput,scale,streaming,serving] [--offsets N]
//                      [--rounds N] [--json FILE] [--check]
//
// --check exits 1 when a target falls short (the default is to report and exit 0).
// Loopback only; every child process and temporary directory is removed at the end.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { paced } from './lib/paced.mjs';
import { seedOffsets } from './lib/seed.mjs';
import { median, quantile } from './lib/stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NODE = process.execPath;
const SECTIONS = ['startup', 'throughput', 'scale', 'streaming', 'page', 'serving', 'postgres'];

const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    offsets: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '40' },
    json: { type: 'string' },
    check: { type: 'boolean', default: false },
  },
});
const only = new Set(opts.only ? opts.only.split(',') : SECTIONS);
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`--only: unknown section ${s} (${SECTIONS.join(', ')})`);
const BIG = Number(opts.offsets);
const SMALL = 1_000;
const MID = Math.min(100_000, BIG);
const ROUNDS = Number(opts.rounds);

// ---------------------------------------------------------------------------------------------
// Housekeeping: one temporary root, every child tracked, both removed however the run ends.

const TMP = mkdtempSync(join(process.env.BENCH_TMPDIR ?? os.tmpdir(), 'carbon-bench-'));
// The CLI under test: built from the current source into a snapshot of its own (bin/, dist/,
// package.json for "type": "module"), inside the repository so that node_modules resolves, and
// out of reach of a concurrent `npm run build` that empties dist/ while the bench runs.
mkdirSync(join(ROOT, '.bench-tmp'), { recursive: true });
const SNAPSHOT = mkdtempSync(join(ROOT, '.bench-tmp', 'run-'));
const children = new Set();
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const child of children) child.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
  rmSync(SNAPSHOT, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

const log = (line) => process.stderr.write(`${line}\n`);

cpSync(join(ROOT, 'bin'), join(SNAPSHOT, 'bin'), { recursive: true });
cpSync(join(ROOT, 'package.json'), join(SNAPSHOT, 'package.json'));
const built = spawnSync(NODE, [join(ROOT, 'scripts', 'build.mjs'), '--outdir', join(SNAPSHOT, 'dist')], {
  cwd: ROOT,
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (built.status !== 0) {
  cleanup();
  throw new Error('the build failed');
}
const BIN = join(SNAPSHOT, 'bin', 'carbon.cjs');
const DIST_INDEX = join(SNAPSHOT, 'dist', 'index.js');

/** The environment a user with no configuration has, with CARBON_HOME pointing at `home`. */
function envFor(home, extra = {}) {
  const env = { ...process.env, CARBON_HOME: home, NO_COLOR: '1', ...extra };
  // NODE_EXTRA_CA_CERTS (set on some machines) makes every node start parse a CA bundle: unset, as
  // users run carbon; the start-up section measures with it too, for comparison.
  for (const name of [
    'CARBON_API_KEY',
    'CARBON_BASE_URL',
    'CARBON_PROFILE',
    'CARBON_MAX_RETRIES',
    'CARBON_TIMEOUT',
    'CARBON_DEBUG',
    'FORCE_COLOR',
    'NODE_OPTIONS',
    'NODE_EXTRA_CA_CERTS',
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

/** Runs the CLI once, synchronously, and returns its stdout; throws on a non-zero exit. */
function carbon(home, args, { input } = {}) {
  const r = spawnSync(NODE, [BIN, ...args], { env: envFor(home), encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`carbon ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** A fresh home whose ledger exists (the first command provisions it), plus `offsets` seeded ones. */
function makeHome(name, offsets) {
  const home = join(TMP, name);
  mkdirSync(home);
  carbon(home, ['balance', '--json']);
  const t = performance.now();
  const ids = offsets > 0 ? seedOffsets(join(home, 'data'), offsets) : {};
  return { home, ids, seedMs: performance.now() - t };
}

/**
 * Wall time of each command, interleaved: every round runs each command once, starting at a
 * different one each round, so drift in the machine's load falls on all of them alike.
 */
function timeInterleaved(commands, rounds, warmup = 3) {
  const times = commands.map(() => []);
  for (let r = -warmup; r < rounds; r++) {
    for (let k = 0; k < commands.length; k++) {
      const i = (k + Math.max(r, 0)) % commands.length;
      const c = commands[i];
      c.before?.();
      const t0 = performance.now();
      const p = spawnSync(c.argv[0], c.argv.slice(1), { env: c.env, stdio: ['ignore', 'ignore', 'pipe'] });
      const ms = performance.now() - t0;
      if (p.status !== 0) throw new Error(`${c.name} exited ${p.status}: ${p.stderr}`);
      if (r >= 0) times[i].push(ms);
    }
  }
  return times;
}

const rows = [];
/** One line of the table; `pass` is decided by the caller against the goal it states. */
function row(section, what, figure, reference, ratio, goal, pass, note = '') {
  rows.push({ section, what, figure, reference, ratio, goal, pass, note });
}
const ms = (x) => `${x.toFixed(1)} ms`;
const perSec = (x) => `${Math.round(x).toLocaleString('en-US')}/s`;
const times = (x) => `${x.toFixed(2)}×`;
const mb = (kb) => `${(kb / 1024).toFixed(1)} MB`;

// ---------------------------------------------------------------------------------------------
// 1. Start-up: each command against `node -e 0`, interleaved, judged with NODE_EXTRA_CA_CERTS
//    unset (as users run carbon: it makes every node process parse a CA bundle first, which
//    hides carbon's own cost in the ratio); when the machine sets it, the same set is measured
//    with it too and shown in the note. The floor: bench/lib/floor.cjs, node:sqlite opening the
//    same ledger and printing its balance, the least a `balance --json` can do. carbon
//    runs as for a person with no configuration: HOME set, no CARBON_HOME (ledger in ~/.local/share).

const STARTUP_GOALS = { version: 1.1, help: 1.1, read: 1.2, buy: 1.3 };

/**
 * A user's environment: HOME and nothing of carbon's or XDG's, so carbon finds its config and
 * ledger where it does for a person at a terminal (~/.config/carbon, ~/.local/share/carbon).
 */
function userEnv(home) {
  const env = { ...envFor(''), HOME: home };
  for (const name of ['CARBON_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME']) delete env[name];
  return env;
}

function startup() {
  log(`start-up: ${ROUNDS} interleaved rounds`);
  const home = join(TMP, 'startup-user');
  mkdirSync(home);
  const clean = userEnv(home);
  const first = spawnSync(NODE, [BIN, 'buy', '--kg', '5', '--json'], { env: clean, encoding: 'utf8' });
  const bought = first.status === 0 ? JSON.parse(first.stdout) : {};
  if (bought.object !== 'offset') throw new Error(`carbon buy --json did not print an offset: ${first.stderr}`);
  const commands = [
    ['node -e 0', ['-e', '0'], null],
    ['floor: node:sqlite, the ledger, one row', [join(ROOT, 'bench', 'lib', 'floor.cjs')], null],
    ['carbon --version', [BIN, '--version'], STARTUP_GOALS.version],
    ['carbon --help', [BIN, '--help'], STARTUP_GOALS.help],
    ['carbon balance --json', [BIN, 'balance', '--json'], STARTUP_GOALS.read],
    ['carbon list --json', [BIN, 'list', '--json'], STARTUP_GOALS.read],
    ['carbon show <id> --json', [BIN, 'show', bought.id, '--json'], STARTUP_GOALS.read],
    ['carbon quote --kg 5 --json', [BIN, 'quote', '--kg', '5', '--json'], STARTUP_GOALS.read],
    ['carbon buy --kg 5 --json', [BIN, 'buy', '--kg', '5', '--json'], STARTUP_GOALS.buy],
  ];
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const sets = [clean, ...(ca ? [{ ...clean, NODE_EXTRA_CA_CERTS: ca }] : [])];
  const list = sets.flatMap((env) => commands.map(([name, args]) => ({ name, argv: [NODE, ...args], env })));
  const t = timeInterleaved(list, ROUNDS);
  const n = commands.length;
  const base = median(t[0]);
  for (let i = 1; i < n; i++) {
    const [name, , goal] = commands[i];
    const m = median(t[i]);
    const ca = sets.length > 1 ? `; with NODE_EXTRA_CA_CERTS: ${ms(median(t[n + i]))}, ${times(median(t[n + i]) / median(t[n]))}` : '';
    row(
      '1 start-up',
      name,
      ms(m),
      `node -e 0: ${ms(base)}`,
      m / base,
      goal === null ? '—' : `≤ ${goal.toFixed(2)}×`,
      goal === null ? null : m / base <= goal,
      `p25–p75 ${quantile(t[i], 0.25).toFixed(1)}–${quantile(t[i], 0.75).toFixed(1)} ms${ca}`,
    );
  }
  readOnlyInstall();
}

/**
 * An install the user cannot write: a copy owned by root run as nobody (or, when not root, a
 * read-only dist/). The first run writes the code cache to the user's cache directory; the
 * figure is the runs after it, against `node -e 0` run as the same user.
 */
function readOnlyInstall() {
  const dir = mkdtempSync(join(ROOT, '.bench-tmp', 'ro-'));
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(SNAPSHOT, part), join(dir, part), { recursive: true });
  for (const file of readdirSync(join(dir, 'dist'))) if (file.endsWith('.v8cache')) rmSync(join(dir, 'dist', file));
  const home = join(TMP, 'ro-home');
  mkdirSync(home);
  const env = { ...envFor(join(home, 'carbon')), HOME: home };
  delete env.XDG_CACHE_HOME;
  const asRoot = process.getuid?.() === 0;
  let prefix = [];
  if (asRoot) {
    chmodSync(dir, 0o755);
    chmodSync(TMP, 0o755);
    chownSync(home, 65534, 65534);
    prefix = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
  } else {
    chmodSync(join(dir, 'dist'), 0o555);
  }
  const bin = join(dir, 'bin', 'carbon.cjs');
  const argv = (args) => (asRoot ? [...prefix, NODE, ...args] : [NODE, ...args]);
  const first = spawnSync(argv([bin, 'balance', '--json'])[0], argv([bin, 'balance', '--json']).slice(1), { env, encoding: 'utf8' });
  if (first.status !== 0 || JSON.parse(first.stdout).object !== 'balance')
    throw new Error(`the read-only install did not run: ${first.stderr}`);
  if (readdirSync(join(dir, 'dist')).some((f) => f.endsWith('.v8cache'))) throw new Error('the read-only install was written to');
  if (!existsSync(join(home, '.cache', 'carbon'))) throw new Error('the read-only install wrote no code cache to ~/.cache/carbon');
  const t = timeInterleaved(
    [
      { name: 'node -e 0', argv: argv(['-e', '0']), env },
      { name: 'balance', argv: argv([bin, 'balance', '--json']), env },
    ],
    Math.ceil(ROUNDS / 2),
  );
  const m = median(t[1]);
  const base = median(t[0]);
  row(
    '1 start-up',
    `carbon balance --json, read-only install${asRoot ? " (root's, run as nobody)" : ''}`,
    ms(m),
    `node -e 0: ${ms(base)}`,
    m / base,
    `≤ ${STARTUP_GOALS.read.toFixed(2)}×`,
    m / base <= STARTUP_GOALS.read,
    'the code cache in ~/.cache/carbon, written by the first run',
  );
  rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// 2. Purchase throughput through CarbonClient on the in-process transport, one durable
//    transaction per buy. Reference: bare node:sqlite commits on the same disk and pragmas.

async function throughput() {
  log('purchase throughput: in-process client');
  const { openLocal } = await import(pathToFileURL(DIST_INDEX).href);
  const dir = join(TMP, 'throughput', 'data');
  const { client, sandbox } = await openLocal(dir);
  await sandbox.topUp('test', 100_000_000_000);

  const raw = new DatabaseSync(join(TMP, 'throughput', 'raw.db'));
  raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
  const [begin, commit] = [raw.prepare('BEGIN IMMEDIATE'), raw.prepare('COMMIT')];
  const rawCommit = (v) => {
    begin.run();
    insert.run(v);
    commit.run();
  };

  const latencies = [];
  const buyFor = async (msLimit, keep = true) => {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < msLimit) {
      for (let i = 0; i < 100; i++) {
        const a = performance.now();
        await client.buy({ kg: 1 });
        if (keep) latencies.push(performance.now() - a);
      }
      n += 100;
      t = performance.now();
    }
    return (n * 1000) / (t - t0);
  };
  const rawFor = (msLimit) => {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < msLimit) {
      for (let i = 0; i < 100; i++) rawCommit('x');
      n += 100;
      t = performance.now();
    }
    return (n * 1000) / (t - t0);
  };
  await buyFor(1000, false);
  rawFor(300);
  const buys = [];
  const raws = [];
  for (let r = 0; r < 5; r++) {
    buys.push(await buyFor(1500));
    raws.push(rawFor(500));
  }
  const last = (await client.list({ limit: 1 })).data[0];
  if (last?.object !== 'offset' || last.kg !== 1) throw new Error('the last purchase is not in the ledger');
  client.close();
  raw.close();
  const b = median(buys);
  const rw = median(raws);
  row(
    '2 throughput',
    'client.buy() in-process',
    perSec(b),
    `bare SQLite commit: ${perSec(rw)}`,
    b / rw,
    '≥ 9,000/s',
    b >= 9000,
    'WAL, synchronous=NORMAL, one IMMEDIATE transaction per buy; checkpoints in a worker thread (docs/reliability.md)',
  );
  const p999 = quantile(latencies, 0.999);
  row(
    '2 throughput',
    'client.buy() latency, p99.9',
    `${p999.toFixed(2)} ms`,
    `p50 ${quantile(latencies, 0.5).toFixed(3)} ms, p99 ${quantile(latencies, 0.99).toFixed(2)} ms`,
    null,
    '< 2 ms',
    p999 < 2,
    `${latencies.length.toLocaleString('en-US')} purchases back to back; the longest ${Math.max(...latencies).toFixed(1)} ms`,
  );
}

/**
 * The async storage port's own cost on the local engine: the share of the purchase loop's CPU
 * (its main thread) spent in V8's promise and async-function machinery, which is what awaiting
 * the port (and the service and client above it) adds to the same rules and SQL run straight
 * through. Sampled by Linux perf (cpu-clock, 4 kHz) with Node's --perf-basic-prof naming the
 * JavaScript frames; without perf (the linux-perf package) the row says so.
 */
function portCost() {
  const what = "the async port's machinery in the purchase loop";
  if (spawnSync('perf', ['--version'], { stdio: 'ignore' }).status !== 0) {
    row('2 throughput', what, 'not measured', 'needs Linux perf (linux-perf)', null, '≤ 5 %', null);
    return;
  }
  log('the async port: the purchase loop under perf');
  const dir = join(TMP, 'port');
  mkdirSync(dir);
  const data = join(dir, 'perf.data');
  const loop = spawnSync(
    'perf',
    [
      'record',
      '-q',
      '-e',
      'cpu-clock',
      '-F',
      '4000',
      '-o',
      data,
      '--',
      NODE,
      '--perf-basic-prof',
      join(ROOT, 'bench', 'lib', 'buy-loop.mjs'),
      DIST_INDEX,
      join(dir, 'data'),
      '4000',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (loop.status !== 0) {
    // perf is there but may not record (kernel.perf_event_paranoid, a container): said, not fatal.
    row('2 throughput', what, 'not measured', `perf record failed: ${loop.stderr.trim().split('\n')[0] ?? ''}`, null, '≤ 5 %', null);
    return;
  }
  const { perSecond } = JSON.parse(loop.stdout);
  const report = spawnSync('perf', ['report', '-i', data, '--no-children', '--sort', 'pid,sym', '--stdio', '-g', 'none'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (report.status !== 0) throw new Error(`perf report failed: ${report.stderr}`);
  // Lines: "  0.20%  5059:node  [.] Builtins_RunMicrotasks". The main thread is the busiest one
  // (the checkpointer's worker and libuv's pool take the rest).
  const byThread = new Map();
  for (const line of report.stdout.split('\n')) {
    const m = /^\s*([\d.]+)%\s+(\d+):\S+\s+\[.\]\s+(.*)$/.exec(line);
    if (m === null) continue;
    const t = byThread.get(m[2]) ?? { all: 0, async: 0 };
    t.all += Number(m[1]);
    if (/^Builtins_(RunMicrotasks|EnqueueMicrotask|\w*Promise\w*|AsyncFunction\w*|ResumeGenerator\w*|\w*Await\w*)$/.test(m[3]))
      t.async += Number(m[1]);
    byThread.set(m[2], t);
  }
  const [tid, main] = [...byThread].sort((a, b) => b[1].all - a[1].all)[0] ?? [];
  if (main === undefined || main.all === 0) throw new Error('perf recorded no samples of the purchase loop');
  rmSync(join(os.tmpdir(), `perf-${tid}.map`), { force: true });
  const share = (100 * main.async) / main.all;
  row(
    '2 throughput',
    what,
    `${share.toFixed(2)} % of its CPU`,
    `the loop's main thread: ${perSec(perSecond)}`,
    null,
    '≤ 5 %',
    share <= 5,
    "perf record -e cpu-clock -F 4000 of bench/lib/buy-loop.mjs (4 s); V8's promise, microtask and async-function builtins, as a share of the main thread's samples",
  );
}

// ---------------------------------------------------------------------------------------------
// 3. Scale: the same commands on a ledger of BIG offsets vs one of 1,000.

function scale(small, mid, big) {
  const sizes = [
    [small, SMALL],
    [mid, MID],
    [big, BIG],
  ];
  log(`growth: ${sizes.map(([, n]) => short(n)).join(', ')} offsets, ${Math.ceil(ROUNDS / 2)} rounds`);
  const commands = (ids) => [
    ['list --limit 10', ['list', '--limit', '10']],
    ['show <id>', ['show', ids.middle]],
    ['balance', ['balance']],
    ['impact', ['impact']],
    ['list --limit 10 --starting-after <id>', ['list', '--limit', '10', '--starting-after', ids.middle]],
  ];
  // The figures must be right before their times mean anything.
  for (const [h, n] of sizes) {
    const impact = JSON.parse(carbon(h.home, ['impact', '--json']));
    if (impact.offsets !== n) throw new Error(`impact.offsets is ${impact.offsets}, expected ${n}`);
    const shown = JSON.parse(carbon(h.home, ['show', h.ids.middle, '--json']));
    if (shown.id !== h.ids.middle) throw new Error('show returned another offset');
    const page = JSON.parse(carbon(h.home, ['list', '--limit', '10', '--starting-after', h.ids.middle, '--json']));
    if (page.data.length !== 10 || page.data[0].id === h.ids.middle) throw new Error('the page after the cursor is wrong');
  }
  const list = [];
  const perSize = sizes.map(([h]) => commands(h.ids));
  const names = perSize[0].map(([name]) => name);
  for (let i = 0; i < names.length; i++) {
    for (const [k, [h, n]] of sizes.entries())
      list.push({ name: `${names[i]} @${short(n)}`, argv: [NODE, BIN, ...perSize[k][i][1]], env: envFor(h.home) });
  }
  // A purchase whose placement has come due: the next read places it (the lazy lifecycle), and
  // finding what is due must not read the whole ledger either.
  const dueMakers = sizes.map(([h]) => duePlacement(h.home));
  names.push('impact, a placement due');
  for (const [k, [h, n]] of sizes.entries())
    list.push({ name: `impact due @${short(n)}`, argv: [NODE, BIN, 'impact'], env: envFor(h.home), before: dueMakers[k].add });
  const t = timeInterleaved(list, Math.ceil(ROUNDS / 2), 2);
  for (const m of dueMakers) {
    const left = m.left();
    m.close();
    if (left !== 0) throw new Error(`${left} due placements were not placed by carbon impact`);
  }
  const notes = { 4: 'the cursor is found by key', 5: 'each run first places a purchase that came due' };
  for (let i = 0; i < names.length; i++) {
    const [s, m, b] = [0, 1, 2].map((k) => median(t[3 * i + k]));
    row(
      '3 growth',
      `carbon ${names[i]}`,
      `${ms(b)} @${short(BIG)}`,
      `${ms(s)} @1k`,
      b / s,
      '≤ 1.20×',
      b / s <= 1.2,
      `${ms(m)} @${short(MID)}${notes[i] ? `; ${notes[i]}` : ''}`,
    );
  }
  // A report reads every offset of the span once: its time grows with the ledger by nature; the
  // figure is its rate at each size.
  const reports = sizes.map(([h, n]) => {
    const runs = [];
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      carbon(h.home, ['report', '--by', 'month', '--json']);
      runs.push(performance.now() - t0);
    }
    return { n, ms: median(runs) };
  });
  const [rs, rm, rb] = reports;
  row(
    '3 growth',
    'carbon report --by month',
    `${ms(rb.ms)} @${short(BIG)} (${perSec((rb.n * 1000) / rb.ms)})`,
    `${ms(rs.ms)} @1k`,
    null,
    '≥ 50,000/s @1M',
    (rb.n * 1000) / rb.ms >= 50_000,
    `${ms(rm.ms)} @${short(MID)} (${perSec((rm.n * 1000) / rm.ms)}); every offset read once, start-up included`,
  );
}
/**
 * Adds, on demand, one test purchase of 1 kg whose placement is already due, charged and counted
 * as the model does (offset, charge entry, balance, impact), straight into the ledger.
 */
function duePlacement(home) {
  const db = new DatabaseSync(join(home, 'data', 'ledger.db'));
  db.exec('PRAGMA busy_timeout = 5000');
  const { rate } = db.prepare('SELECT rate FROM account WHERE id = 1').get();
  const cents = Math.ceil(rate / 1000);
  const add = () => {
    db.exec('BEGIN IMMEDIATE');
    const now = Date.now();
    const id = `off_due${randomUUID().replace(/-/g, '').slice(0, 21)}`;
    db.prepare(`INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference, created_ms, settle_at_ms, review)
      VALUES (?, 0, 'processing', 1, ?, ?, 1, NULL, NULL, ?, ?, NULL)`).run(id, cents, rate, now - 5000, now - 2000);
    db.prepare("INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES (0, 'charge', ?, ?, ?)").run(
      -cents,
      id,
      now - 5000,
    );
    db.prepare('UPDATE balances SET available_cents = available_cents - ? WHERE livemode = 0').run(cents);
    db.prepare('UPDATE impact SET processing_kg = processing_kg + 1, offsets = offsets + 1 WHERE livemode = 0').run();
    db.exec('COMMIT');
  };
  return {
    add,
    left: () => db.prepare("SELECT count(*) AS n FROM offsets WHERE status = 'processing'").get().n,
    close: () => db.close(),
  };
}

const short = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

// ---------------------------------------------------------------------------------------------
// 4. Streaming: list --all --json over BIG offsets into /dev/null; peak RSS and offsets/s.

function peakRss(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Runs `node -r peak-rss.cjs <args>` with stdout into /dev/null: wall ms and peak RSS in kB. */
function measured(args, env) {
  const rssFile = join(TMP, `rss-${randomUUID()}`);
  const devNull = openSync('/dev/null', 'w');
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(NODE, ['-r', join(ROOT, 'bench', 'lib', 'peak-rss.cjs'), ...args], {
      env: { ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', devNull, 'pipe'],
    });
    children.add(child);
    closeSync(devNull);
    let stderr = '';
    let polled = 0;
    child.stderr.on('data', (d) => (stderr += d));
    const poll = setInterval(() => (polled = Math.max(polled, peakRss(child.pid))), 25);
    child.on('exit', (code) => {
      const wall = performance.now() - t0;
      clearInterval(poll);
      children.delete(child);
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`));
      const reported = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) : 0;
      resolve({ wall, rssKb: Math.max(reported, polled), reported, polled });
    });
  });
}

async function streaming(small, big) {
  log(`streaming: list --all as NDJSON and as CSV over ${BIG.toLocaleString('en-US')} offsets`);
  // How many offsets each ledger holds now (the growth section may have added a few).
  const count = (h) => JSON.parse(carbon(h.home, ['impact', '--json'])).offsets;
  const smallCount = count(small);
  const bigCount = count(big);
  // Right before fast: every offset once, newest first, one JSON object per line; CSV as many rows.
  const lines = carbon(small.home, ['list', '--all', '--json']).trimEnd().split('\n');
  if (lines.length !== smallCount || new Set(lines.map((l) => JSON.parse(l).id)).size !== smallCount) {
    throw new Error(`list --all --json printed ${lines.length} lines for ${smallCount} offsets`);
  }
  const csv = carbon(small.home, ['list', '--all', '--format', 'csv']).trimEnd().split('\r\n');
  if (csv.length !== smallCount + 1) throw new Error(`list --all --format csv printed ${csv.length} lines for ${smallCount} offsets`);
  const base = [];
  const runs = { json: [], csv: [] };
  for (let r = 0; r < 2; r++) {
    base.push(await measured(['-e', '0'], envFor(big.home)));
    runs.json.push(await measured([BIN, 'list', '--all', '--json'], envFor(big.home)));
    runs.csv.push(await measured([BIN, 'list', '--all', '--format', 'csv'], envFor(big.home)));
  }
  if (process.env.BENCH_DEBUG) log(JSON.stringify({ base, runs }));
  const baseRss = Math.max(...base.map((x) => x.rssKb));
  for (const [format, label] of [
    ['json', 'NDJSON (--json)'],
    ['csv', 'CSV (--format csv)'],
  ]) {
    const rss = Math.max(...runs[format].map((x) => x.rssKb));
    const rate = median(runs[format].map((x) => (bigCount * 1000) / x.wall));
    row(
      '4 streaming',
      `list --all, ${label}, ${short(BIG)} offsets: rate`,
      perSec(rate),
      `${(median(runs[format].map((x) => x.wall)) / 1000).toFixed(1)} s wall`,
      null,
      '≥ 200,000/s',
      rate >= 200_000,
      'into /dev/null, start-up included',
    );
    row(
      '4 streaming',
      `list --all, ${label}, ${short(BIG)} offsets: peak RSS`,
      mb(rss),
      `node -e 0: ${mb(baseRss)}`,
      rss / baseRss,
      '< 100 MB',
      rss < 100 * 1024,
      'the larger of 2 runs (VmHWM), reference likewise',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Serving: GET /balance on carbon serve vs a bare node:http server, same load tool and
//    connections; POST /offsets with fresh idempotency keys.

/** Starts a child that prints one JSON line with "url" on stdout; resolves with it. */
function startListening(args, env, name) {
  return new Promise((resolve, reject) => {
    const logFile = join(TMP, `${name}.log`);
    const err = openSync(logFile, 'w');
    const child = spawn(NODE, args, { env, stdio: ['ignore', 'pipe', err] });
    closeSync(err);
    children.add(child);
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start in 20 s`)), 20_000);
    const fail = (e) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n${readFileSync(logFile, 'utf8').slice(-2000)}`));
    };
    child.on('exit', (code) => fail(new Error(`${name} exited ${code} before it listened`)));
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      try {
        resolve({ child, ready: JSON.parse(out.slice(0, nl)) });
      } catch (e) {
        fail(e);
      }
    });
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      children.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function serving() {
  log('serving: autocannon against carbon serve and a bare node:http server');
  const { default: autocannon } = await import('autocannon');
  const load = async (options) => {
    const result = await autocannon({ connections: 10, pipelining: 1, ...options });
    if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
      throw new Error(`${options.url}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
    }
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total };
  };
  const home = join(TMP, 'serve');
  mkdirSync(home);
  const serve = await startListening([BIN, 'serve', '--port', '0', '--show-keys'], envFor(home), 'carbon-serve');
  const bare = await startListening([join(ROOT, 'bench', 'lib', 'bare-server.mjs')], envFor(home), 'bare-server');
  try {
    const key = serve.ready.test_key;
    if (typeof key !== 'string') throw new Error('carbon serve did not print a test key');
    const headers = { authorization: `Bearer ${key}` };
    const balanceUrl = `${serve.ready.url}/balance`;
    const check = await fetch(balanceUrl, { headers });
    if (check.status !== 200 || (await check.json()).object !== 'balance') throw new Error('GET /balance did not answer a balance');

    const seconds = 3;
    const rounds = 5;
    // 10 connections (autocannon's default) and 100 (a busier sandbox, more requests a turn).
    for (const connections of [10, 100]) {
      await load({ url: bare.ready.url, headers, connections, duration: 1 });
      await load({ url: balanceUrl, headers, connections, duration: 1 });
      const bareRuns = [];
      const serveRuns = [];
      for (let r = 0; r < rounds; r++) {
        bareRuns.push(await load({ url: bare.ready.url, headers, connections, duration: seconds }));
        serveRuns.push(await load({ url: balanceUrl, headers, connections, duration: seconds }));
      }
      const s = median(serveRuns.map((x) => x.rps));
      const b = median(bareRuns.map((x) => x.rps));
      row(
        '5 serving',
        `GET /api/v1/balance, ${connections} connections`,
        `${perSec(s)} (p99 ${median(serveRuns.map((x) => x.p99))} ms)`,
        `bare node:http: ${perSec(b)} (p99 ${median(bareRuns.map((x) => x.p99))} ms)`,
        s / b,
        '≥ 0.85×',
        s / b >= 0.85,
        `autocannon, ${connections} connections, ${rounds} × ${seconds} s each, interleaved; the median`,
      );
    }

    // Fresh idempotency keys: every request is a new purchase. Enough balance for all of them.
    const { openLocal } = await import(pathToFileURL(DIST_INDEX).href);
    const local = await openLocal(join(home, 'data'));
    await local.sandbox.topUp('test', 100_000_000_000);
    const before = (await local.sandbox.status()).impact.test.offsets;
    local.client.close();
    const post = {
      url: `${serve.ready.url}/offsets`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ kg: 1 }),
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }],
    };
    await load({ ...post, duration: 1 });
    // At a steady 2,000 purchases a second (a busy CI fleet), the latency a buyer sees: an
    // open-loop load (bench/lib/paced.mjs). Not autocannon's --overallRate, which sends each
    // second's share in a burst at full speed.
    const steady = [];
    for (let r = 0; r < 3; r++) {
      const x = await paced({
        url: post.url,
        method: 'POST',
        headers: post.headers,
        body: post.body,
        rate: 2000,
        seconds,
        perRequest: () => ({ 'idempotency-key': randomUUID() }),
      });
      if (x.errors > 0 || x.non2xx > 0) throw new Error(`POST /offsets at 2,000/s: ${x.errors} errors, ${x.non2xx} non-2xx`);
      steady.push(x);
    }
    const steadyP99 = median(steady.map((x) => x.p99));
    row(
      '5 serving',
      'POST /api/v1/offsets at 2,000/s, p99',
      `${steadyP99.toFixed(2)} ms`,
      `p50 ${median(steady.map((x) => x.p50)).toFixed(2)} ms, p99.9 ${median(steady.map((x) => x.p999)).toFixed(2)} ms, ${perSec(median(steady.map((x) => x.rps)))}`,
      null,
      '< 5 ms',
      steadyP99 < 5,
      `an open-loop load at a steady 2,000 a second (bench/lib/paced.mjs), 3 × ${seconds} s, after a 1 s warm-up; the median p99; the generator sent up to ${Math.max(...steady.map((x) => x.lag)).toFixed(1)} ms late`,
    );
    const postRuns = [];
    for (let r = 0; r < 2; r++) postRuns.push(await load({ ...post, duration: seconds }));
    const impact = await (await fetch(`${serve.ready.url}/impact`, { headers })).json();
    const sent = postRuns.reduce((n, x) => n + x.total, 0);
    const sentAll = sent + steady.reduce((n, x) => n + x.total, 0);
    if (impact.offsets - before < sentAll)
      throw new Error(`${sentAll} purchases answered 201 but only ${impact.offsets - before} offsets were added`);
    const p = median(postRuns.map((x) => x.rps));
    row(
      '5 serving',
      'POST /api/v1/offsets (fresh keys), as fast as it goes',
      `${perSec(p)} (p99 ${median(postRuns.map((x) => x.p99))} ms)`,
      '—',
      null,
      '≥ 2,000/s',
      p >= 2000,
      `each a new purchase; ${impact.offsets - before} offsets added`,
    );
  } finally {
    await Promise.all([stop(serve.child), stop(bare.child)]);
  }
}

// ---------------------------------------------------------------------------------------------
// 7. PostgreSQL: carbon serve on one PostgreSQL (1, 2 and 4 instances) beside one on SQLite, in
//    one run of bench/postgres.mjs; only when a database URL is given.

function postgres() {
  const url = process.env.CARBON_BENCH_DATABASE_URL ?? process.env.CARBON_TEST_DATABASE_URL;
  if (!url) {
    row(
      '7 PostgreSQL',
      'not measured',
      '—',
      '—',
      null,
      '—',
      null,
      'set CARBON_BENCH_DATABASE_URL=postgres://… (a database the bench may create schemas in)',
    );
    return;
  }
  log('PostgreSQL: bench/postgres.mjs');
  const out = join(TMP, 'postgres.json');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'postgres.mjs')], {
    env: { ...process.env, BENCH_JSON: out, BENCH_BIN: BIN, CARBON_BENCH_DATABASE_URL: url },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`bench/postgres.mjs exited ${r.status}`);
  const { sqlite, postgres: pg, seconds, connections } = JSON.parse(readFileSync(out, 'utf8'));
  const fig = (x) => `${perSec(x.rps)} (p99 ${x.p99} ms)`;
  for (const [kind, what] of [
    ['get', 'GET /api/v1/balance'],
    ['post', 'POST /api/v1/offsets'],
  ]) {
    for (const n of ['1', '2', '4']) {
      const x = pg[n][kind];
      row(
        '7 PostgreSQL',
        `${what}, ${n} instance${n === '1' ? '' : 's'} on one PostgreSQL`,
        fig(x),
        `SQLite, 1 instance: ${fig(sqlite[kind])}`,
        x.rps / sqlite[kind].rps,
        '—',
        null,
        n === '1' ? `${connections} connections in all, ${seconds} s a figure; ${x.errors} errors` : `${x.errors} errors`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------

function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const git = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  return { cpus: os.availableParallelism(), model, node: process.version, platform: `${os.platform()} ${os.release()}`, git };
}

// ---------------------------------------------------------------------------------------------
// 6. The developer page: GET / signed in, server time from the access log, 1k vs BIG offsets.

async function developerPage(small, mid, big) {
  log('developer page: GET / (HTML) on both ledgers');
  const serverMs = async (home, name) => {
    const { child, ready } = await startListening([BIN, 'serve', '--port', '0', '--show-keys'], envFor(home), name);
    try {
      const login = await fetch(ready.developer_page_url, { redirect: 'manual' });
      const cookie = login.headers.get('set-cookie').split(';')[0];
      for (let i = 0; i < 5; i++) await (await fetch(new URL('/', ready.url), { headers: { cookie, accept: 'text/html' } })).text();
      const lines = () =>
        readFileSync(join(TMP, `${name}.log`), 'utf8')
          .split('\n')
          .filter((l) => / GET \/ 200 /.test(l));
      const seen = lines().length;
      for (let i = 0; i < 30; i++) await (await fetch(new URL('/', ready.url), { headers: { cookie, accept: 'text/html' } })).text();
      await new Promise((r) => setTimeout(r, 100));
      return median(
        lines()
          .slice(seen)
          .map((l) => Number(/ (\d+\.\d)ms /.exec(l)[1])),
      );
    } finally {
      await stop(child);
    }
  };
  const s = await serverMs(small.home, 'page-small');
  const m = await serverMs(mid.home, 'page-mid');
  const b = await serverMs(big.home, 'page-big');
  row(
    '3 growth',
    `developer page GET / (signed in), server time`,
    `${ms(b)} @${short(BIG)}`,
    `${ms(s)} @1k`,
    b / s,
    '< 50 ms',
    b < 50,
    `${ms(m)} @${short(MID)}; the access log's duration, median of 30`,
  );
}

function printTable() {
  const header = ['target', 'measured', 'figure', 'reference (same run)', 'ratio', 'goal', 'result'];
  const section = (r) => Number.parseInt(r.section, 10);
  const body = [...rows]
    .sort((a, b) => section(a) - section(b))
    .map((r) => [
      r.section,
      r.what,
      r.figure,
      r.reference,
      r.ratio === null ? '—' : times(r.ratio),
      r.goal,
      r.pass === null ? '—' : r.pass ? 'pass' : 'FALLS SHORT',
    ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const b of body) console.log(line(b));
  const notes = rows.filter((r) => r.note);
  if (notes.length) {
    console.log('');
    for (const r of notes) console.log(`- ${r.what}: ${r.note}`);
  }
}

const started = performance.now();
const info = machine();
const loadBefore = os.loadavg();
log(`carbon bench: ${info.model}, ${info.cpus} CPUs, node ${info.node}, ${info.git}; temp ${TMP}`);
try {
  if (only.has('startup')) startup();
  if (only.has('throughput')) {
    await throughput();
    portCost();
  }
  if (only.has('scale') || only.has('streaming') || only.has('page')) {
    log(`seeding ${SMALL.toLocaleString('en-US')}, ${MID.toLocaleString('en-US')} and ${BIG.toLocaleString('en-US')} offsets`);
    const small = makeHome('small', SMALL);
    const mid = makeHome('mid', MID);
    const big = makeHome('big', BIG);
    log(`seeded ${BIG.toLocaleString('en-US')} offsets in ${(big.seedMs / 1000).toFixed(1)} s`);
    if (only.has('scale')) scale(small, mid, big);
    if (only.has('streaming')) await streaming(small, big);
    if (only.has('page')) await developerPage(small, mid, big);
  }
  if (only.has('serving')) await serving();
  if (only.has('postgres')) postgres();
} finally {
  cleanup();
}
const totalS = (performance.now() - started) / 1000;
const loadAfter = os.loadavg();
console.log(`\ncarbon bench — ${new Date().toISOString()}`);
console.log(`machine: ${info.model}, ${info.cpus} CPUs (nproc), node ${info.node}, ${info.platform}; commit ${info.git}`);
console.log(
  `load average (1 min): ${loadBefore[0].toFixed(2)} at start, ${loadAfter[0].toFixed(2)} at end; bench took ${totalS.toFixed(0)} s\n`,
);
printTable();
if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ machine: info, loadBefore, loadAfter, seconds: totalS, rows }, null, 2)}\n`);
const short_ = rows.filter((r) => r.pass === false);
if (opts.check && short_.length > 0) process.exitCode = 1;
