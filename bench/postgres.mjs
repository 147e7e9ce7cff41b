// PostgreSQL serving figures (BENCHMARKS.md): GET /balance and POST /offsets through 1, 2 and 4
// `carbon serve` instances on one PostgreSQL, beside one instance on SQLite, in one run.
//
//   CARBON_BENCH_DATABASE_URL=postgres://… node bench/postgres.mjs     [SECS=5 CONN=20]
//
// Each configuration gets a fresh schema (dropped afterwards). Load comes from autocannon in this
// process, spread round-robin over the instances (as a load balancer would).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

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

function serve(env, home = mkdtempSync(join(TMP, 'home-'))) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--show-keys'], { env: { PATH: process.env.PATH, CARBON_HOME: home, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

function carbon(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, CARBON_HOME: mkdtempSync(join(TMP, 'cli-')), ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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
      ...(kind === 'post' ? { body: '{"kg":1}', requests: [{ setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'idempotency-key': randomUUID() } }) }] } : {}),
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
  let urls;
  let key;
  if (database) {
    await carbon(['sandbox', 'topup', '10000000'], env);
    key = JSON.parse(await carbon(['sandbox', 'keys', '--reveal', '--json'], env)).find((k) => k.default === 'test').secret;
    urls = (await Promise.all(Array.from({ length: instances }, () => serve(env)))).map((r) => r.url);
  } else {
    const home = mkdtempSync(join(TMP, 'sqlite-'));
    const ready = await serve({}, home);
    await carbon(['sandbox', 'topup', '10000000'], { CARBON_HOME: home });
    urls = [ready.url];
    key = ready.test_key;
  }
  await load(urls, key, 'get'); // warm-up
  const get = await load(urls, key, 'get');
  const post = await load(urls, key, 'post');
  const row = (what, r) => console.log(`| ${label} | ${what} | ${Math.round(r.rps).toLocaleString('en-US')}/s | ${r.p50} ms | ${r.p99} ms | ${r.errors} |`);
  row('GET /balance', get);
  row('POST /offsets', post);
  for (const c of children.splice(0)) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  return { get, post };
}

const schemas = [];
function schemaUrl() {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const u = new URL(base);
  u.searchParams.set('schema', schema);
  return u.toString();
}

try {
  console.log(`${connections} connections in all, ${seconds} s a figure, ${new Date().toISOString()}`);
  console.log('| store, instances | request | requests/s | p50 | p99 | errors |');
  console.log('|---|---|---|---|---|---|');
  const sqlite = await configuration('SQLite, 1', 1, null);
  const figures = {};
  for (const n of [1, 2, 4]) figures[n] = await configuration(`PostgreSQL, ${n}`, n, schemaUrl());
  console.log(`GET /balance scaling, 1 → 4 instances: ${(figures[4].get.rps / figures[1].get.rps).toFixed(2)}×`);
  // For `npm run bench`, which puts these figures in its table.
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ sqlite, postgres: figures, seconds, connections }));
} finally {
  for (const c of children) c.kill('SIGKILL');
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
  rmSync(TMP, { recursive: true, force: true });
}
