// PostgreSQL serving figures (BENCHMARKS.md): GET /balance and POST /offsets through 1, 2 and 4
// `carbon serve` instances on one PostgreSQL, beside one instance on SQLite and beside PostgreSQL's
// own yardstick, pgbench's TPC-B-like run at scale 1 with the same client count, in one run; then
// a command's time from start to exit on PostgreSQL against the same on SQLite.
//
//   CARBON_BENCH_DATABASE_URL=postgres://… node bench/postgres.mjs     [SECS=5 CONN=20]
//
// Each configuration gets a fresh schema (dropped afterwards). Load comes from autocannon in this
// process, spread round-robin over the instances (as a load balancer would). For each figure the
// CPU time each carbon process and the PostgreSQL server used per request is read from /proc, so
// scaling past this machine's cores can be judged on paper.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuSeconds, postgresCpu, postgresCpuSince } from './lib/proc.mjs';

const base = process.env.CARBON_BENCH_DATABASE_URL ?? process.env.CARBON_TEST_DATABASE_URL;
if (!base) {
  console.error('set CARBON_BENCH_DATABASE_URL=postgres://… (a database the bench may create schemas in)');
  process.exit(2);
}
const seconds = Number(process.env.SECS ?? 5);
const connections = Number(process.env.CONN ?? 20);
const BIN = process.env.BENCH_BIN ?? new URL('../bin/carbon.cjs', import.meta.url).pathname;
const TMP = mkdtempSync(join(tmpdir(), 'carbon-bench-pg-'));
const children = [];
const schemas = [];

/** CPU used by `pids` and by PostgreSQL while `fn` runs. */
async function measured(pids, fn) {
  const before = pids.map(cpuSeconds);
  const pgBefore = postgresCpu();
  const result = await fn();
  const carbon = pids.map((p, i) => cpuSeconds(p) - before[i]);
  const postgres = postgresCpuSince(pgBefore);
  return { ...result, cpu: { carbon, postgres } };
}

/**
 * pgbench's TPC-B-like transaction at scale 1 (every transaction updates the one branch row: the
 * hot-row shape of a ledger), with carbon's client count, in a schema of its own.
 */
function pgbench(url) {
  const schema = `bench_pgbench_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const u = new URL(url);
  u.search = '';
  const env = { ...process.env, PGOPTIONS: `-c search_path=${schema}` };
  const run = (args) => {
    const r = spawnSync('pgbench', [...args, u.toString()], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`pgbench ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  spawnSync('psql', [u.toString(), '-qc', `CREATE SCHEMA ${schema}`], { encoding: 'utf8' });
  run(['-i', '-s', '1', '-q']);
  const out = run(['-c', String(connections), '-j', '2', '-T', String(seconds), '-n']);
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
  const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1]);
  return { tps, latency };
}

function serve(env, home = mkdtempSync(join(TMP, 'home-'))) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--show-keys'], {
      // CARBON_JOURNAL=off node bench/postgres.mjs: the same figures without the request journal.
      env: { PATH: process.env.PATH, CARBON_HOME: home, NO_COLOR: '1', CARBON_JOURNAL: process.env.CARBON_JOURNAL ?? '', ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ ...JSON.parse(out.slice(0, nl)), pid: child.pid });
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

function carbon(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, CARBON_HOME: mkdtempSync(join(TMP, 'cli-')), ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`carbon ${args.join(' ')} exited ${code}`))));
  });
}

async function load(urls, key, kind) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const runs = urls.map((url) =>
    autocannon({
      url: kind === 'get' ? `${url}/balance` : `${url}/offsets`,
      method: kind === 'get' ? 'GET' : 'POST',
      connections: Math.max(1, Math.round(connections / urls.length)),
      duration: seconds,
      headers,
      ...(kind === 'post'
        ? { body: '{"kg":1}', requests: [{ setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'idempotency-key': randomUUID() } }) }] }
        : {}),
    }),
  );
  const results = await Promise.all(runs);
  const rps = results.reduce((t, r) => t + r.requests.average, 0);
  const p50 = Math.max(...results.map((r) => r.latency.p50));
  const p99 = Math.max(...results.map((r) => r.latency.p99));
  const errors = results.reduce((t, r) => t + r.errors + r.non2xx, 0);
  return { rps, p50, p99, errors };
}

async function configuration(label, instances, database) {
  const env = database ? { CARBON_DATABASE_URL: database } : {};
  let servers;
  let key;
  if (database) {
    await carbon(['sandbox', 'topup', '10000000'], env);
    key = JSON.parse(await carbon(['sandbox', 'keys', '--reveal', '--json'], env)).find((k) => k.default === 'test').secret;
    servers = await Promise.all(Array.from({ length: instances }, () => serve(env)));
  } else {
    const home = mkdtempSync(join(TMP, 'sqlite-'));
    const ready = await serve({}, home);
    await carbon(['sandbox', 'topup', '10000000'], { CARBON_HOME: home });
    servers = [ready];
    key = ready.test_key;
  }
  const urls = servers.map((s) => s.url);
  const pids = servers.map((s) => s.pid);
  await load(urls, key, 'get'); // warm-up
  const get = await measured(pids, () => load(urls, key, 'get'));
  const post = await measured(pids, () => load(urls, key, 'post'));
  const perRequest = (r, cpu) =>
    `${cpu.map((c) => ((c * 1e6) / (r.rps * seconds)).toFixed(0)).join(' + ')} µs${database ? `, PostgreSQL ${((r.cpu.postgres * 1e6) / (r.rps * seconds)).toFixed(0)} µs` : ''}`;
  const row = (what, r) =>
    console.log(
      `| ${label} | ${what} | ${Math.round(r.rps).toLocaleString('en-US')}/s | ${r.p50} ms | ${r.p99} ms | ${r.errors} | ${perRequest(r, r.cpu.carbon)} |`,
    );
  row('GET /balance', get);
  row('POST /offsets', post);
  for (const c of children.splice(0)) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  return { get, post };
}

/**
 * A command from start to exit on each store, interleaved: `balance --json` and `buy --kg 1 --json`,
 * each in a warm home on SQLite and on a PostgreSQL schema made beforehand, `rounds` times; the
 * median wall time of each and PostgreSQL's ratio to SQLite. What PostgreSQL adds to a command is
 * its connection (TCP, the password exchange) and its round trips.
 */
function commands(url, rounds = 15) {
  const run = (args, env) => {
    const start = performance.now();
    const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`carbon ${args.join(' ')} exited ${r.status}`);
    return performance.now() - start;
  };
  const homes = {
    sqlite: { CARBON_HOME: mkdtempSync(join(TMP, 'cmd-')) },
    postgres: { CARBON_HOME: mkdtempSync(join(TMP, 'cmd-')), CARBON_DATABASE_URL: url },
  };
  const times = {};
  for (const r of [-1, ...Array(rounds).keys()])
    for (const args of [
      ['balance', '--json'],
      ['buy', '--kg', '1', '--json'],
    ])
      for (const [store, env] of Object.entries(homes)) {
        const ms = run(args, env);
        if (r >= 0) (times[`${args[0]} ${store}`] ??= []).push(ms);
      }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const command of ['balance', 'buy']) {
    const [sqlite, postgres] = [median(times[`${command} sqlite`]), median(times[`${command} postgres`])];
    console.log(
      `\`carbon ${command} --json\`, ${rounds} rounds: SQLite ${sqlite.toFixed(0)} ms, PostgreSQL ${postgres.toFixed(0)} ms (${(postgres / sqlite).toFixed(2)}×)`,
    );
  }
}

function schemaUrl() {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const u = new URL(base);
  u.searchParams.set('schema', schema);
  return u.toString();
}

try {
  console.log(`${connections} connections in all, ${seconds} s a figure, ${new Date().toISOString()}`);
  console.log('| store, instances | request | requests/s | p50 | p99 | errors | CPU per request (each carbon process; PostgreSQL) |');
  console.log('|---|---|---|---|---|---|---|');
  const sqlite = await configuration('SQLite, 1', 1, null);
  const figures = {};
  for (const n of [1, 2, 4]) figures[n] = await configuration(`PostgreSQL, ${n}`, n, schemaUrl());
  const reference = pgbench(base);
  console.log(
    `| PostgreSQL | pgbench TPC-B-like, scale 1, ${connections} clients | ${Math.round(reference.tps).toLocaleString('en-US')} tps | | latency average ${reference.latency} ms | | |`,
  );
  const verdict = (ok) => (ok ? 'pass' : 'falls short');
  const purchases = figures[1].post.rps / reference.tps;
  const reads = figures[1].get.rps / sqlite.get.rps;
  console.log('');
  console.log(
    `POST /offsets on PostgreSQL, 1 instance: ${purchases.toFixed(2)}× pgbench (goal ≥ 1.0×): ${verdict(purchases >= 1)}; p99 ${figures[1].post.p99} ms (goal < 50 ms): ${verdict(figures[1].post.p99 < 50)}`,
  );
  console.log(`GET /balance on PostgreSQL, 1 instance: ${reads.toFixed(2)}× SQLite (goal ≥ 0.5×): ${verdict(reads >= 0.5)}`);
  for (const kind of ['get', 'post']) {
    console.log(
      `${kind === 'get' ? 'GET /balance' : 'POST /offsets'} scaling, 1 → 2 → 4 instances: 1 → ${(figures[2][kind].rps / figures[1][kind].rps).toFixed(2)} → ${(figures[4][kind].rps / figures[1][kind].rps).toFixed(2)}×`,
    );
  }
  commands(schemaUrl());
  // For `npm run bench`, which puts these figures in its table.
  if (process.env.BENCH_JSON)
    writeFileSync(process.env.BENCH_JSON, JSON.stringify({ sqlite, postgres: figures, pgbench: reference, seconds, connections }));
} finally {
  for (const c of children) c.kill('SIGKILL');
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
  rmSync(TMP, { recursive: true, force: true });
}
