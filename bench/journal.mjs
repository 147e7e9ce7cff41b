// What the request journal costs a purchase (BENCHMARKS.md, "The request journal"): the same
// measurements with the journal on and off (CARBON_JOURNAL=off), side by side and interleaved in
// one run, on SQLite and (with a database URL) on PostgreSQL:
//
//   npm run build && node bench/journal.mjs    [SECS=3 ROUNDS=3 RATE=2000 PARTS=inprocess,sqlite,postgres;
//                                               CARBON_BENCH_DATABASE_URL=postgres://…]
//
// - SQLite, in process: client.buy() back to back (openLocal), purchases a second;
// - each store through `carbon serve`: POST /offsets at a steady 2,000 a second (bench/lib/paced.mjs),
//   the p99 a buyer sees; and POST /offsets as fast as 10 connections go (autocannon).
// Goals (issue 36): on/off ≥ 0.90 for the rates, ≤ 1.10 for the p99. On PostgreSQL, the WAL a
// purchase wrote (pg_current_wal_lsn()), which each purchase's commit waits to sync. Beside each rate, the CPU
// time a purchase cost (this process in process; the carbon serve process, and PostgreSQL's
// backends, read from /proc): on a shared machine the wall clock swings with the neighbours' load,
// the CPU a purchase takes much less. Loopback only; every child, schema and temporary directory
// is removed at the end (Ctrl-C too).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import autocannon from 'autocannon';
import pg from 'pg';
import { paced } from './lib/paced.mjs';
import { cpuSeconds, postgresCpu, postgresCpuSince } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';

const SECS = Number(process.env.SECS ?? 3);
/** Which parts: `inprocess`, `sqlite`, `postgres` (all by default). */
const PARTS = new Set((process.env.PARTS ?? 'inprocess,sqlite,postgres').split(','));
/** The steady rate of the p99 figure (2,000 a second: the issue's; lower on a machine that cannot keep it). */
const RATE = Number(process.env.RATE ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ROOT = new URL('..', import.meta.url).pathname;
const BIN = process.env.BENCH_BIN ?? join(ROOT, 'bin', 'carbon.cjs');
const DIST_INDEX = join(ROOT, 'dist', 'index.js');
const DATABASE = process.env.CARBON_BENCH_DATABASE_URL ?? process.env.CARBON_TEST_DATABASE_URL;
const TMP = mkdtempSync(join(tmpdir(), 'carbon-bench-journal-'));
const children = new Set();
const schemas = [];
const rows = [];

const perSec = (n) => `${Math.round(n).toLocaleString('en-US')}/s`;
const us = (n) => `${Math.round(n)} µs`;

const env = (home, journal, database) => ({
  PATH: process.env.PATH,
  CARBON_HOME: home,
  NO_COLOR: '1',
  ...(journal ? {} : { CARBON_JOURNAL: 'off' }),
  ...(database ? { CARBON_DATABASE_URL: database } : {}),
});

function row(store, what, on, off, ratio, goal, pass) {
  rows.push({ store, what, on, off, ratio, goal, pass });
  console.error(`${store} | ${what} | on ${on} | off ${off} | ${ratio.toFixed(3)} | ${goal} | ${pass ? 'pass' : 'falls short'}`);
}

/**
 * SQLite in process: the purchase rate of client.buy() (bench/lib/buy-loop.mjs), journal on and
 * off, each round in a fresh process of its own and ledger, the order swapped every round. (Two
 * ledgers open in one process skewed it: whichever was opened first bought up to a third slower.)
 */
async function inProcess() {
  const loop = join(ROOT, 'bench', 'lib', 'buy-loop.mjs');
  const once = (journal) => {
    const dir = mkdtempSync(join(TMP, journal ? 'on-' : 'off-'));
    const env = { ...process.env, CARBON_JOURNAL: journal ? 'on' : 'off' };
    const run = spawnSync(process.execPath, [loop, DIST_INDEX, dir, '1500'], { env, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`buy-loop failed: ${run.stderr}`);
    const db = new DatabaseSync(join(dir, 'ledger.db'), { readOnly: true });
    const { n } = db.prepare('SELECT count(*) AS n FROM journal').get();
    db.close();
    // The setting took: entries with the journal on, none with it off.
    if (journal !== n > 0) throw new Error(`the journal ${journal ? 'recorded nothing' : 'recorded entries while off'}`);
    rmSync(dir, { recursive: true, force: true });
    const { perSecond, cpuUs } = JSON.parse(run.stdout);
    return { rate: perSecond, cpu: cpuUs };
  };
  const ons = [];
  const offs = [];
  for (let r = 0; r < ROUNDS + 2; r++) {
    for (const journal of r % 2 === 0 ? [true, false] : [false, true]) (journal ? ons : offs).push(once(journal));
  }
  const [a, b] = [median(ons.map((x) => x.rate)), median(offs.map((x) => x.rate))];
  row('SQLite', 'client.buy() in process, purchases a second', perSec(a), perSec(b), a / b, '≥ 0.90', a / b >= 0.9);
  const [ca, cb] = [median(ons.map((x) => x.cpu)), median(offs.map((x) => x.cpu))];
  row('SQLite', 'client.buy() in process, CPU a purchase', us(ca), us(cb), cb / ca, 'off/on ≥ 0.90', cb / ca >= 0.9);
}

function run(args, e) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: e, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`carbon ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function serve(e) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--show-keys'], { env: e, stdio: ['ignore', 'pipe', 'ignore'] });
    children.add(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ ...JSON.parse(out.slice(0, nl)), child });
    });
    child.once('exit', (code) => reject(new Error(`carbon serve exited ${code}`)));
  });
}

function schemaUrl() {
  const schema = `bench_journal_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const u = new URL(DATABASE);
  u.searchParams.set('schema', schema);
  return u.toString();
}

/** Through carbon serve on `store`: the p99 at 2,000/s and the rate at full speed, journal on and off. */
async function served(store) {
  const start = async (journal) => {
    const home = mkdtempSync(join(TMP, `serve-${journal ? 'on' : 'off'}-`));
    const database = store === 'PostgreSQL' ? schemaUrl() : null;
    const e = env(home, journal, database);
    run(['sandbox', 'topup', '10000000'], e);
    return serve(e);
  };
  const on = await start(true);
  const off = await start(false);
  const post = (s) => ({
    url: `${s.url}/offsets`,
    method: 'POST',
    headers: { authorization: `Bearer ${s.test_key}`, 'content-type': 'application/json' },
    body: '{"kg":1}',
  });
  const failed = { on: 0, off: 0 };
  const steady = async (s) => {
    const x = await paced({ ...post(s), rate: RATE, seconds: SECS, perRequest: () => ({ 'idempotency-key': randomUUID() }) });
    // A machine too busy to keep up times requests out: counted, and said beside the figure.
    failed[s === on ? 'on' : 'off'] += x.errors + x.non2xx;
    return x;
  };
  const full = async (s) => {
    const wal0 = await walLsn(store);
    const cpu0 = cpuSeconds(s.child.pid);
    const pg0 = postgresCpu();
    const r = await autocannon({
      ...post(s),
      connections: 10,
      duration: SECS,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }],
    });
    if (r.errors > 0 || r.non2xx > 0) throw new Error(`${store} at full speed: ${r.errors} errors, ${r.non2xx} non-2xx`);
    const n = r.requests.total;
    const cpu = ((cpuSeconds(s.child.pid) - cpu0) * 1e6) / n;
    return { rate: r.requests.average, cpu, pg: (postgresCpuSince(pg0) * 1e6) / n, wal: (await walSince(store, wal0)) / n };
  };
  for (const s of [on, off]) await full(s);
  const p99 = { on: [], off: [] };
  const rate = { on: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    p99.on.push((await steady(on)).p99);
    p99.off.push((await steady(off)).p99);
    rate.on.push(await full(on));
    rate.off.push(await full(off));
  }
  const entries = await (await fetch(`${new URL(on.url).origin}/_sandbox/requests?limit=1`, { headers: post(on).headers })).json();
  if (entries.data?.length !== 1) throw new Error(`${store}: the served journal recorded nothing with the journal on`);
  const [pOn, pOff] = [median(p99.on), median(p99.off)];
  const note = (k) => (failed[k] > 0 ? ` (${failed[k]} timed out)` : '');
  row(
    store,
    `POST /offsets at ${RATE.toLocaleString('en-US')}/s through carbon serve, p99`,
    `${pOn.toFixed(2)} ms${note('on')}`,
    `${pOff.toFixed(2)} ms${note('off')}`,
    pOn / pOff,
    '≤ 1.10',
    pOn / pOff <= 1.1,
  );
  const [rOn, rOff] = [median(rate.on.map((x) => x.rate)), median(rate.off.map((x) => x.rate))];
  row(
    store,
    'POST /offsets through carbon serve, 10 connections, purchases a second',
    perSec(rOn),
    perSec(rOff),
    rOn / rOff,
    '≥ 0.90',
    rOn / rOff >= 0.9,
  );
  const cpu = (xs) => median(xs.map((x) => x.cpu + (store === 'PostgreSQL' ? x.pg : 0)));
  const [cOn, cOff] = [cpu(rate.on), cpu(rate.off)];
  const where = store === 'PostgreSQL' ? 'carbon serve + PostgreSQL' : 'carbon serve';
  row(store, `POST /offsets, CPU a purchase (${where})`, us(cOn), us(cOff), cOff / cOn, 'off/on ≥ 0.90', cOff / cOn >= 0.9);
  if (store === 'PostgreSQL') {
    // PostgreSQL's WAL a purchase wrote (the whole server's: other sessions' work counts too).
    const [wOn, wOff] = [median(rate.on.map((x) => x.wal)), median(rate.off.map((x) => x.wal))];
    const bytes = (n) => `${Math.round(n).toLocaleString('en-US')} B`;
    row(
      store,
      'POST /offsets, WAL a purchase (what each commit syncs)',
      bytes(wOn),
      bytes(wOff),
      wOff / wOn,
      'off/on ≥ 0.90',
      wOff / wOn >= 0.9,
    );
  }
  for (const s of [on, off]) s.child.kill('SIGTERM');
}

/** One statement on the bench's database, in a connection of its own; its first row. */
async function firstRow(text, values = []) {
  const c = new pg.Client({ connectionString: DATABASE });
  await c.connect();
  try {
    return (await c.query(text, values)).rows[0];
  } finally {
    await c.end();
  }
}

/** PostgreSQL's current WAL position (null on SQLite). */
const walLsn = async (store) => (store === 'PostgreSQL' ? (await firstRow('SELECT pg_current_wal_lsn()::text AS l')).l : null);

/** Bytes of WAL PostgreSQL wrote since `from` (0 on SQLite). */
const walSince = async (store, from) =>
  store === 'PostgreSQL' ? Number((await firstRow('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [from])).d) : 0;

process.once('SIGINT', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
  process.exit(130);
});

try {
  console.error(`journal on and off, ${ROUNDS} rounds of ${SECS} s, interleaved; ${new Date().toISOString()}`);
  if (PARTS.has('inprocess')) await inProcess();
  if (PARTS.has('sqlite')) await served('SQLite');
  if (DATABASE && PARTS.has('postgres')) await served('PostgreSQL');
  else if (PARTS.has('postgres')) console.error('PostgreSQL: not measured (set CARBON_BENCH_DATABASE_URL=postgres://…)');
  console.log('| store | measured | journal on | journal off | on / off | goal | |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.store} | ${r.what} | ${r.on} | ${r.off} | ${r.ratio.toFixed(2)} | ${r.goal} | ${r.pass ? 'pass' : 'falls short'} |`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  if (DATABASE && schemas.length > 0) {
    const client = new pg.Client({ connectionString: DATABASE });
    await client.connect();
    for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await client.end();
  }
  rmSync(TMP, { recursive: true, force: true });
}
