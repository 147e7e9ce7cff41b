// Snapshots of a large ledger (BENCHMARKS.md, "Snapshots"): a snapshot file of N offsets is
// made here (each offset with its charge and its Idempotency-Key, as purchases leave them), then
// the built binary loads it into a fresh ledger, saves it again, and loads it once more in place
// of the ledger it made, each in a process of its own whose peak RSS is read from /proc
// (bench/lib/peak-rss.cjs). The saved file must be the loaded one, row for row. SQLite always;
// PostgreSQL too when CARBON_TEST_DATABASE_URL is set.
//
//   npm run build && node bench/snapshot.mjs [offsets, default 1000000]
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = new URL('..', import.meta.url).pathname;
const N = Number(process.argv[2] ?? 1_000_000);
const TMP = mkdtempSync(join(tmpdir(), 'carbon-bench-snapshot-'));
const DAY = 86_400_000;

const COLUMNS = {
  account: ['status', 'rate', 'review_limit_cents', 'clock_offset_ms', 'rate_limit_requests', 'rate_limit_window_ms', 'created_ms'],
  balances: ['livemode', 'available_cents'],
  impact: ['livemode', 'placed_kg', 'processing_kg', 'offsets'],
  impact_daily: ['livemode', 'day', 'kg', 'offsets'],
  api_keys: ['id', 'hash', 'livemode', 'permission', 'last4', 'created_ms', 'revoked_ms', 'default_for'],
  offsets: [
    'seq',
    'id',
    'livemode',
    'status',
    'kg',
    'amount_cents',
    'rate',
    'req_kg',
    'req_amount_cents',
    'reference',
    'created_ms',
    'settle_at_ms',
    'review',
    'placed_ms',
    'certificate_id',
  ],
  entries: ['seq', 'livemode', 'kind', 'amount_cents', 'offset_id', 'created_ms'],
  idempotency: ['livemode', 'key', 'fingerprint', 'offset_id', 'created_ms'],
  meta: ['name', 'value'],
};

/** Writes a whole, consistent snapshot of `n` placed test offsets, streamed (never held whole). */
async function makeSnapshot(file, n) {
  const now = Date.now();
  const start = now - 2 * DAY - n;
  const rate = 4000;
  const charge = (i) => Math.ceil(((1 + (i % 500)) * rate) / 1000);
  let spent = 0;
  let kg = 0;
  const days = new Map();
  for (let i = 0; i < n; i++) {
    spent += charge(i);
    kg += 1 + (i % 500);
    const day = Math.floor((start + i) / DAY);
    const d = days.get(day) ?? [0, 0];
    d[0] += 1 + (i % 500);
    d[1] += 1;
    days.set(day, d);
  }
  const balance = 100_000_000;
  const counts = {
    account: 1,
    balances: 2,
    impact: 2,
    impact_daily: days.size,
    api_keys: 1,
    offsets: n,
    entries: n + 1,
    idempotency: n,
    meta: 0,
  };
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  let rows = 0;
  let buffered = '';
  const write = async (text) => {
    hash.update(text);
    buffered += text;
    if (buffered.length > 1 << 20) {
      if (!out.write(buffered)) await new Promise((r) => out.once('drain', r));
      buffered = '';
    }
  };
  const row = (table, ...values) => {
    rows++;
    return write(`${JSON.stringify([table, ...values])}\n`);
  };
  const tables = Object.fromEntries(Object.entries(COLUMNS).map(([t, columns]) => [t, { columns, rows: counts[t] }]));
  const header = {
    carbon_snapshot: 1,
    created: new Date(now).toISOString(),
    carbon: 'bench',
    clock: { now: new Date(now).toISOString(), now_ms: now, offset_ms: 0 },
    journal: false,
    tables,
  };
  await write(`${JSON.stringify(header)}\n`);
  await row('account', 'active', rate, 0, 0, null, 1000, start - 1);
  await row('balances', 0, balance);
  await row('balances', 1, 0);
  await row('impact', 0, kg, 0, n);
  await row('impact', 1, 0, 0, 0);
  for (const [day, [dkg, count]] of [...days].sort((a, b) => a[0] - b[0])) await row('impact_daily', 0, day, dkg, count);
  await row('api_keys', 'key_bench000000000000', randomBytes(32).toString('base64'), 0, 'purchase', 'abcd', start - 1, null, null);
  const id = (i) => `off_${String(i).padStart(24, '0')}`;
  const reference = (i) => (i % 10 === 0 ? `team-${i % 7}` : null);
  for (let i = 0; i < n; i++) {
    const k = 1 + (i % 500);
    await row(
      'offsets',
      i + 1,
      id(i),
      0,
      'placed',
      k,
      charge(i),
      rate,
      k,
      null,
      reference(i),
      start + i,
      null,
      null,
      start + i + 3000,
      null,
    );
  }
  await row('entries', 1, 0, 'topup', balance + spent, null, start - 1);
  for (let i = 0; i < n; i++) await row('entries', i + 2, 0, 'charge', -charge(i), id(i), start + i);
  for (let i = 0; i < n; i++)
    // The request each offset was bought with, as its key recorded it (purchase.ts, fingerprint).
    await row(
      'idempotency',
      0,
      `bench-${String(i).padStart(8, '0')}`,
      JSON.stringify([1 + (i % 500), null, reference(i)]),
      id(i),
      start + i,
    );
  await write('');
  out.write(buffered);
  out.write(`${JSON.stringify({ end: { rows, sha256: hash.digest('hex') } })}\n`);
  await new Promise((r) => out.end(r));
}

/** `carbon <args>` in a process of its own: wall ms and peak RSS (kB). */
function measured(args, env) {
  const rssFile = join(TMP, `rss-${randomBytes(4).toString('hex')}`);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-r', join(ROOT, 'bench/lib/peak-rss.cjs'), join(ROOT, 'bin/carbon.cjs'), ...args], {
      env: { PATH: process.env.PATH, HOME: env.CARBON_HOME, ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`carbon ${args.join(' ')} exited ${code}: ${stderr}`));
      resolve({ ms: performance.now() - t0, rssMb: Number(readFileSync(rssFile, 'utf8')) / 1024 });
    });
  });
}

/**
 * The rows of a snapshot file (every line but the header and the end), hashed: the two files must
 * agree but for the account's clock offset, which a load sets so the clock starts again from the file's.
 */
async function rowsDigest(file) {
  const hash = createHash('sha256');
  let first = true;
  let last = '';
  for await (const line of createInterface({ input: createReadStream(file) })) {
    if (first) first = false;
    else {
      if (last !== '' && !last.startsWith('["account",')) hash.update(`${last}\n`);
      last = line;
    }
  }
  return hash.digest('hex');
}

async function round(store, env, source) {
  const home = join(TMP, `home-${store}`);
  const load = await measured(['sandbox', 'snapshot', 'load', source], { CARBON_HOME: home, ...env });
  const saved = join(TMP, `saved-${store}.ndjson`);
  const save = await measured(['sandbox', 'snapshot', 'save', saved], { CARBON_HOME: home, ...env });
  const same = (await rowsDigest(saved)) === (await rowsDigest(source));
  if (!same) throw new Error(`${store}: the saved file's rows are not the loaded file's`);
  // The same file again, in place of the ledger it made: emptying a ledger as large comes first.
  const again = await measured(['sandbox', 'snapshot', 'load', source], { CARBON_HOME: home, ...env });
  const mb = (readFileSync(saved).length / 2 ** 20).toFixed(0);
  console.log(
    `| ${store} | ${N.toLocaleString('en-US')} | ${mb} MB | ${(load.ms / 1000).toFixed(1)} s | ${load.rssMb.toFixed(0)} MB | ${(save.ms / 1000).toFixed(1)} s | ${save.rssMb.toFixed(0)} MB | ${(again.ms / 1000).toFixed(1)} s |`,
  );
}

try {
  const source = join(TMP, 'source.ndjson');
  await makeSnapshot(source, N);
  console.log('| store | offsets | file | load | load peak RSS | save | save peak RSS | load over it |');
  console.log('|---|---|---|---|---|---|---|---|');
  await round('SQLite', {}, source);
  const url = process.env.CARBON_TEST_DATABASE_URL;
  if (url) {
    const schema = `bench_snapshot_${randomBytes(4).toString('hex')}`;
    const u = new URL(url);
    u.searchParams.set('schema', schema);
    try {
      await round('PostgreSQL', { CARBON_DATABASE_URL: u.toString() }, source);
    } finally {
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  }
} finally {
  if (existsSync(TMP) && !process.env.BENCH_KEEP) rmSync(TMP, { recursive: true, force: true });
}
