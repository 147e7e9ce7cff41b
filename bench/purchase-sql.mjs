#!/usr/bin/env node
// What an in-process purchase's SQL costs alone (BENCHMARKS.md, "A fifth sitting"): a ledger made
// by carbon itself (dist/index.js, 2,000 purchases through the client), then the statements one
// purchase runs in SQLite (src/store/sqlite/statements.ts and sqlite-tx.ts: the reads of
// purchaseFacts, placeDue's check, the offset, its entry, the three totals, the idempotency key),
// one IMMEDIATE transaction each, back to back, with a worker checkpointing the WAL as the store's
// checkpointer does. No JavaScript of carbon's runs in the loop: the rate is what SQLite allows the
// purchase path on this machine, against the client's `bench/lib/buy-loop.mjs` in the same run.
//
//   node bench/purchase-sql.mjs [ms=3000] [--partial-certificate-index]
//
// --partial-certificate-index first rebuilds `offsets` with certificate_id indexed only where it is
// set: today every purchase adds a NULL to the UNIQUE index on certificate_id (one more WAL page).
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const ms = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 3000);
const partial = process.argv.includes('--partial-certificate-index');
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'carbon-purchase-sql-'));
try {
  // The ledger as carbon leaves it after 2,000 purchases (in a child, so its caches are its own).
  const made = `const { openLocal } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/index.js')).href)});
    const { client, sandbox } = await openLocal(${JSON.stringify(dir)});
    await sandbox.topUp('test', 100_000_000_000);
    for (let i = 0; i < 2000; i++) await client.buy({ kg: 1 });
    await client.close();`;
  execFileSync(process.execPath, ['--input-type=module', '-e', made], { stdio: 'inherit', env: { ...process.env, CARBON_JOURNAL: 'off' } });
  const path = join(dir, 'ledger.db');
  const db = new DatabaseSync(path);
  if (partial) {
    const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'offsets'").get().sql;
    const indexes = db.prepare("SELECT sql FROM sqlite_master WHERE tbl_name = 'offsets' AND type = 'index' AND sql IS NOT NULL").all();
    db.exec('BEGIN');
    db.exec(sql.replace('CREATE TABLE offsets', 'CREATE TABLE offsets_new').replace('certificate_id TEXT UNIQUE', 'certificate_id TEXT'));
    db.exec('INSERT INTO offsets_new SELECT * FROM offsets; DROP TABLE offsets; ALTER TABLE offsets_new RENAME TO offsets');
    for (const { sql: index } of indexes) db.exec(index);
    db.exec('CREATE UNIQUE INDEX offsets_certificate ON offsets (certificate_id) WHERE certificate_id IS NOT NULL; COMMIT');
  }
  // The store's connection settings (sqlite-open.ts), and its checkpointer (checkpointer.ts).
  db.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA cache_size = -4096; PRAGMA wal_autocheckpoint = 0',
  );
  // As the store does (checkpointer.ts, WalCheckpoints): the worker publishes the WAL's length and
  // counts its checkpoints, and past WAL_HIGH pages the writer copies the WAL back itself, once a
  // length, so that its next commit restarts it. A writer that never pauses gives a PASSIVE
  // checkpoint no moment in which the WAL is all copied back: without this the WAL grew to 450 MB
  // in a 4-second run, every frame written to a part of the file never written before.
  const shared = new Int32Array(new SharedArrayBuffer(8));
  const checkpointer = new Worker(
    `const { workerData } = require('node:worker_threads');
     const { DatabaseSync } = require('node:sqlite');
     const db = new DatabaseSync(${JSON.stringify(path)});
     const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
     const shared = new Int32Array(workerData);
     setInterval(() => { try { const { log } = checkpoint.get(); if (log >= 0) Atomics.store(shared, 0, log); Atomics.add(shared, 1, 1); } catch {} }, 20);`,
    { eval: true, workerData: shared.buffer },
  );
  const WAL_HIGH = 16384; // src/store/sqlite/checkpointer.ts
  let copiedAt = 0;
  const bound = () => {
    if (Atomics.load(shared, 0) <= WAL_HIGH || Atomics.load(shared, 1) === copiedAt) return;
    copiedAt = Atomics.load(shared, 1);
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  };
  const s = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    dataVersion: db.prepare('PRAGMA data_version'),
    idempotency: db.prepare('SELECT fingerprint, offset_id, created_ms FROM idempotency WHERE livemode = ? AND key = ?'),
    keyByHash: db.prepare('SELECT id, hash, livemode, permission, last4, created_ms, revoked_ms FROM api_keys WHERE hash = ?'),
    account: db.prepare(
      'SELECT status, rate, review_limit_cents, clock_offset_ms, rate_limit_requests, rate_limit_window_ms FROM account WHERE id = 1',
    ),
    balance: db.prepare('SELECT available_cents FROM balances WHERE livemode = ?'),
    newestCreated: db.prepare('SELECT created_ms FROM offsets WHERE livemode = ? ORDER BY seq DESC LIMIT 1'),
    anyDue: db.prepare("SELECT 1 FROM offsets WHERE status = 'processing' AND settle_at_ms <= ? LIMIT 1"),
    insertOffset: db.prepare(`INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, req_amount_cents, reference,
       created_ms, settle_at_ms, review, certificate_id)
     VALUES (@id, @livemode, 'processing', @kg, @amount_cents, @rate, @req_kg, @req_amount_cents, @reference,
       @created_ms, @settle_at_ms, @review, @certificate_id)`),
    entry: db.prepare('INSERT INTO entries (livemode, kind, amount_cents, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)'),
    addBalance: db.prepare('UPDATE balances SET available_cents = available_cents + ? WHERE livemode = ?'),
    addImpact: db.prepare('UPDATE impact SET processing_kg = processing_kg + ?, offsets = offsets + ? WHERE livemode = ?'),
    addDaily: db.prepare(`INSERT INTO impact_daily (livemode, day, kg, offsets) VALUES (@livemode, @day, @kg, @offsets)
     ON CONFLICT (livemode, day) DO UPDATE SET kg = kg + @kg, offsets = offsets + @offsets`),
    rememberKey: db.prepare('INSERT INTO idempotency (livemode, key, fingerprint, offset_id, created_ms) VALUES (?, ?, ?, ?, ?)'),
  };
  const { hash } = db.prepare('SELECT hash FROM api_keys WHERE livemode = 0 LIMIT 1').get();
  const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const offsetId = () => `off_${[...randomBytes(24)].map((b) => BASE62[b % 62]).join('')}`;
  const buy = () => {
    s.dataVersion.get();
    s.begin.run();
    const key = randomUUID();
    s.idempotency.get(0, key);
    s.keyByHash.get(hash);
    s.account.get();
    s.balance.get(0);
    s.newestCreated.get(0);
    const now = Date.now();
    s.anyDue.get(now);
    const id = offsetId();
    s.insertOffset.run({
      id,
      livemode: 0,
      kg: 1,
      amount_cents: 4,
      rate: 4000,
      req_kg: 1,
      req_amount_cents: null,
      reference: null,
      created_ms: now,
      settle_at_ms: now + 300_000,
      review: null,
      certificate_id: null,
    });
    s.entry.run(0, 'charge', -4, id, now);
    s.addBalance.run(-4, 0);
    s.addImpact.run(1, 1, 0);
    s.addDaily.run({ livemode: 0, day: Math.floor(now / 86_400_000), kg: 1, offsets: 1 });
    s.rememberKey.run(0, key, 'f'.repeat(64), id, now);
    s.commit.run();
    bound();
  };
  const loop = (limit) => {
    let n = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    while (performance.now() - t0 < limit) {
      buy();
      n++;
    }
    const cpu = process.cpuUsage(cpu0);
    return {
      purchases: n,
      perSecond: Math.round((n * 1000) / (performance.now() - t0)),
      cpuUs: +((cpu.user + cpu.system) / n).toFixed(1),
      walMB: +(statSync(`${path}-wal`).size / 2 ** 20).toFixed(1),
    };
  };
  loop(1000);
  process.stdout.write(`${JSON.stringify({ schema: partial ? 'partial certificate index' : 'as carbon makes it', ...loop(ms) })}\n`);
  await checkpointer.terminate();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
