import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { openLocal } from '../../src/engine/local.js';
import { carbon, carbonTty, homes, json, ok, parseCsv, pipeline, plain, sandboxKeys, serve, sh } from '../support/cli.js';
import { headerless } from '../support/headerless-proxy.js';
import { limit } from '../support/load.js';
import { openSqlite } from '../support/sqlite.js';

/**
 * `carbon list --all` walks every page (250 offsets: three pages of the default 100, or many
 * small ones with --page-size) and streams them newest first with no duplicates; `--format csv`
 * is RFC 4180 that a CSV reader reads back, a reference with a comma, quotes and a newline
 * included.
 */

const newHome = homes();
const TRICKY = 'Flight LHR→JFK, "economy"\nreturn leg';
const N = 250;

let home: string;
/** Ids in the order they were bought (oldest first). */
const bought: string[] = [];

beforeAll(async () => {
  home = newHome();
  // Seeded through the library on the same data directory (250 CLI runs would take ~40 s);
  // everything read back below goes through the built binary.
  const { client, sandbox } = await openLocal(join(home, 'data'));
  try {
    for (let i = 0; i < N; i++) {
      const reference = i === 7 ? TRICKY : i % 50 === 0 ? 'batch-a' : null;
      const { offset } = await client.buy({ kg: 1 + (i % 9), ...(reference === null ? {} : { reference }) });
      bought.push(offset.id);
    }
    // Every one placed now, in model time: a test that compares two listings never sees one place
    // between them (a test offset places 3 s after its purchase, and the tests run in any order).
    await sandbox.advanceClock(60_000);
  } finally {
    await client.close();
  }
}, limit(60_000));

describe('list --all', () => {
  test('--json: NDJSON, one offset a line, every offset once, newest first', async () => {
    const r = await ok(['list', '--all', '--json'], { home });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(N);
    const offsets = lines.map((l) => JSON.parse(l) as { object: string; id: string; created: string });
    for (const o of offsets) expect(o.object).toBe('offset');
    const ids = offsets.map((o) => o.id);
    expect(new Set(ids).size).toBe(N);
    expect(ids).toEqual([...bought].reverse());
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]!.created <= offsets[i - 1]!.created).toBe(true);
  });

  test('over HTTP from carbon serve: the same 250, in the same order', async () => {
    const server = await serve(home);
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: (await sandboxKeys(home)).test };
    const r = await ok(['list', '--all', '--json'], { home, env });
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual([...bought].reverse());
    await server.stop();
  });

  test('--page-size sets the page size: 36 pages of 7 give the same 250, in the same order', async () => {
    const r = await ok(['list', '--all', '--page-size', '7', '--json'], { home });
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual([...bought].reverse());
  });

  test('plain rows: 250 tab-separated lines; a reference with a newline stays on its row', async () => {
    const r = await ok(['list', '--all'], { home });
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows).toHaveLength(N);
    for (const row of rows) expect(row).toHaveLength(6);
    expect(rows.find((row) => row[0] === bought[7])![4]).toBe('Flight LHR→JFK, "economy" return leg');
  });

  test('--reference filters across pages', async () => {
    const r = await ok(['list', '--all', '--reference', 'batch-a', '--page-size', '2', '--json'], { home });
    const ids = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toEqual([200, 150, 100, 50, 0].map((i) => bought[i]));
  });

  test('jq counts the stream, even when it starts reading late (nothing is lost at exit)', async () => {
    // ~100 KiB, more than a pipe holds: a late reader once lost the tail to process.exit().
    const r = await pipeline("carbon list --all --json | (sleep 1; jq -s 'length')", { home });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${N}\n`);
  });

  // A file (or /dev/null) is written with write(2), each batch's text as it is: process.stdout's
  // stream for a file copies every batch into a Buffer first, native memory that stays until a
  // collection (a million offsets as CSV: 110 MB against 92, BENCHMARKS.md). A preload notes
  // whether the command made process.stdout at all; what the file gets is what a pipe gets.
  test.each([
    ['--json', ['--json']],
    ['--format csv', ['--format', 'csv']],
    ['--quiet', ['--quiet']],
    ['(plain rows)', []],
  ])('list --all %s into a file: byte for byte what a pipe gets, written without process.stdout', async (name, format) => {
    const preload = join(home, 'stdout-made.cjs');
    writeFileSync(
      preload,
      `const d = Object.getOwnPropertyDescriptor(process, 'stdout'); let made = false;
Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get() { made = true; return d.get.call(process); } });
process.on('exit', () => require('node:fs').writeFileSync(process.env.MADE_FILE, String(made)));\n`,
    );
    const made = (to: string) => ({ NODE_OPTIONS: `--require ${preload}`, MADE_FILE: join(home, `${name} ${to}.made`) });
    const piped = await ok(['list', '--all', ...format], { home, env: made('pipe') });
    const file = join(home, `${name}.out`);
    const r = await pipeline(`carbon list --all ${format.map(sh).join(' ')} > ${sh(file)}`, { home, env: made('file') });
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
    expect(readFileSync(file, 'utf8')).toBe(piped.stdout);
    expect(piped.stdout).toContain(format[0] === '--quiet' ? bought[7] : format[0] === '--json' ? JSON.stringify(TRICKY) : 'LHR→JFK');
    expect(readFileSync(join(home, `${name} pipe.made`), 'utf8')).toBe('true');
    expect(readFileSync(join(home, `${name} file.made`), 'utf8')).toBe('false');
  });

  // Past `ulimit -f` a write is cut short, then refused (EFBIG): the file holds the output's start,
  // and the command ends as a full disk ends it.
  test('list --all into a file past ulimit -f: the start of the output, then exit 1 and the line', async () => {
    const whole = (await ok(['list', '--all', '--json'], { home })).stdout;
    const file = join(home, 'cut.ndjson');
    // The journal off, and past the WAL index (32 KiB a 4,096 WAL frames): the ledger's writes would
    // meet the limit first. 250 offsets as NDJSON are about 80 KB.
    const r = await pipeline(`ulimit -f 66; carbon list --all --json > ${sh(file)}`, { home, env: { CARBON_JOURNAL: 'off' } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^\{"error":.*Could not write to stdout \(EFBIG\): what was printed there is incomplete\./);
    const cut = readFileSync(file);
    expect(Buffer.byteLength(whole)).toBeGreaterThan(66 * 1024);
    expect(cut.length).toBe(66 * 1024);
    expect(cut.equals(Buffer.from(whole).subarray(0, cut.length))).toBe(true);
  });

  test('--all with --starting-after is refused (exit 2)', async () => {
    const r = await carbon(['list', '--all', '--starting-after', bought[5]!], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
  });
});

describe('a long stream', () => {
  // V8's young generation stays at the size start-up leaves it through a long `list --all`: two
  // semi-spaces of 1 MB (the new space's size at exit, as a preload reads it), on every Node.
  // Node 22 put V8's growth factor back whenever a worker thread started (the ledger's checkpointer,
  // with the journal's first commit): its young generation grew to 8 MB over these 20,000 offsets,
  // and to 32 MB over a million, where `list --all` peaked at 117 MB (BENCHMARKS.md). `list --all`
  // sets the factor again once a batch; on Node 22 a worker whose heap is made after the last batch
  // (a machine busy with other tests delays it) can still double it once, so there it may reach 4 MB.
  test("list --all over 20,000 offsets keeps V8's young generation at the size start-up leaves it", async () => {
    const big = newHome();
    await ok(['balance'], { home: big });
    // Placed offsets written straight into the ledger (20,000 purchases would take seconds): a list reads only these rows.
    const db = openSqlite(join(big, 'data', 'ledger.db'));
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO offsets (id, livemode, status, kg, amount_cents, rate, req_kg, created_ms, placed_ms)
      SELECT printf('off_%024d', i), 0, 'placed', 1, 4, 4000, 1, 1700000000000 + i, 1700000003000 + i FROM n`);
    db.close();
    const preload = join(big, 'young.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(process.env.YOUNG_FILE,
  String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)));\n`,
    );
    const size = join(big, 'young.txt');
    const r = await pipeline('carbon list --all --json > /dev/null', {
      home: big,
      env: { NODE_OPTIONS: `--require ${preload}`, YOUNG_FILE: size },
    });
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
    // Start-up leaves it at 1 to 4 MB, by what the V8 code cache holds (none yet in this run's copy
    // of the binary, or one an earlier command wrote): 2 or 4 MB here on Node 22, 24 and 26. Left
    // to grow, these 20,000 offsets take it to 8 MB on each (a million, to 16–32).
    expect(Number(readFileSync(size, 'utf8'))).toBeLessThanOrEqual(4 * 2 ** 20);
  });
});

describe('one page at a time', () => {
  test('--limit and --starting-after follow has_more to the end', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const args = ['list', '--limit', '100', '--json', ...(after === undefined ? [] : ['--starting-after', after])];
      const list = JSON.parse((await ok(args, { home })).stdout) as { data: Array<{ id: string }>; has_more: boolean };
      seen.push(...list.data.map((o) => o.id));
      if (!list.has_more) break;
      after = list.data.at(-1)!.id;
    }
    expect(seen).toEqual([...bought].reverse());
  });

  test('--limit is the total across pages (gh): 25 in pages of 10 is three requests, and has_more says more are left', async () => {
    const r = await ok(['list', '--limit', '25', '--page-size', '10', '--json', '--verbose'], { home });
    const list = JSON.parse(r.stdout) as { data: Array<{ id: string }>; has_more: boolean };
    expect(list.data.map((o) => o.id)).toEqual([...bought].reverse().slice(0, 25));
    expect(list.has_more).toBe(true);
    expect(r.stderr.match(/^http: GET \S+\/offsets\?limit=10\b/gm)).toHaveLength(3);
  });

  test('without --page-size, a request asks for what is still wanted: the default list is one request of 10', async () => {
    const r = await ok(['list', '--json', '--verbose'], { home });
    expect((JSON.parse(r.stdout) as { data: unknown[] }).data).toHaveLength(10);
    expect(r.stderr.match(/^http: GET \S+\/offsets\?limit=10 200 /gm)).toHaveLength(1);
    const many = await ok(['list', '--limit', '240', '--json', '--verbose'], { home });
    expect(many.stderr.match(/^http: GET \S+\/offsets\?limit=(\d+)\b/gm)!.map((l) => /limit=(\d+)/.exec(l)![1])).toEqual([
      '100',
      '100',
      '40',
    ]);
  });

  test('--limit past the end prints them all with has_more false; --all with --limit, or a bad --limit, is a usage error', async () => {
    const all = JSON.parse((await ok(['list', '--limit', '1000', '--json'], { home })).stdout) as { data: unknown[]; has_more: boolean };
    expect(all.data).toHaveLength(N);
    expect(all.has_more).toBe(false);
    for (const args of [
      ['--all', '--limit', '5'],
      ['--limit', '0'],
      ['--limit', '2.5'],
    ]) {
      const r = await carbon(['list', ...args], { home });
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .*--limit/);
    }
  });

  test("a --page-size out of 1 to 100 is a usage error that names --page-size and its range, not the API's `limit`", async () => {
    for (const [size, ...more] of [['101'], ['0'], ['101', '--all']]) {
      const r = await carbon(['list', '--page-size', size!, ...more], { home });
      expect([r.exitCode, r.stdout, r.stderr], [size, ...more].join(' ')).toEqual([
        2,
        '',
        `error: --page-size must be a whole number from 1 to 100, not "${size}".\n`,
      ]);
    }
  });
});

describe('--format csv', () => {
  test('a CSV reader reads back every offset, the tricky reference exactly', async () => {
    const r = await ok(['list', '--all', '--format', 'csv'], { home });
    expect(r.stdout.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(r.stdout);
    const [header, ...data] = rows;
    expect(header).toEqual([
      'id',
      'status',
      'livemode',
      'kg',
      'amount_cents',
      'currency',
      'rate_millicents_per_kg',
      'requested_kg',
      'requested_amount_cents',
      'reference',
      'created',
      'placed',
      'certificate_url',
      'environment',
    ]);
    expect(data).toHaveLength(N);
    for (const row of data) expect(row).toHaveLength(header!.length);
    const byId = new Map(data.map((row) => [row[0], Object.fromEntries(header!.map((h, i) => [h, row[i]]))]));
    expect([...byId.keys()]).toEqual([...bought].reverse());
    const tricky = byId.get(bought[7]!)!;
    expect(tricky.reference).toBe(TRICKY);
    expect(tricky).toMatchObject({ kg: '8', amount_cents: '32', currency: 'usd', livemode: 'false', requested_amount_cents: '' });
    expect(new Set(data.map((row) => row.at(-1)))).toEqual(new Set(['sandbox: not a real purchase']));
    expect(byId.get(bought[0]!)!.reference).toBe('batch-a');
    expect(byId.get(bought[1]!)!.reference).toBe('');
  });

  test("the sandbox's offsets say so on every row, in a last column (environment): local, through carbon serve; a service that does not say it is a sandbox gets none", async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    await ok(['buy', '--kg', '100', '--live', '--yes', '--reference', 'flight-1'], { home });
    const rows = async (args: string[], env: Record<string, string> = {}) => parseCsv((await ok(args, { home, env })).stdout);
    const SANDBOX = 'sandbox: not a real purchase';
    // Live mode, the one a spreadsheet would take for real purchases: livemode reads true.
    for (const args of [
      ['list', '--live', '--format', 'csv'],
      ['list', '--live', '--all', '--format', 'csv'],
    ]) {
      const [header, row] = await rows(args);
      expect(header!.at(-1), args.join(' ')).toBe('environment');
      expect(row![header!.indexOf('livemode')]).toBe('true');
      expect(row!.at(-1), args.join(' ')).toBe(SANDBOX);
    }
    // None bought in test mode: the header alone still names the column.
    expect(await rows(['list', '--all', '--format', 'csv'])).toEqual([[...(await rows(['list', '--live', '--format', 'csv']))[0]!]]);

    const server = await serve(home, ['--show-keys']);
    const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.live_key! };
    for (const args of [
      ['list', '--format', 'csv'],
      ['list', '--all', '--format', 'csv'],
    ]) {
      const [header, row] = await rows(args, env);
      expect([header!.at(-1), row!.at(-1)], args.join(' ')).toEqual(['environment', SANDBOX]);
    }
    const other = await headerless(server.url);
    for (const args of [
      ['list', '--format', 'csv'],
      ['list', '--all', '--format', 'csv'],
    ]) {
      const [header, row] = await rows(args, { ...env, CARBON_BASE_URL: other.url });
      expect(header!.at(-1), args.join(' ')).toBe('certificate_url');
      expect(row).toHaveLength(header!.length);
    }
    other.close();
    await server.stop();
  });

  test('one page as CSV, and --json with --format csv disagree (exit 2)', async () => {
    const page = parseCsv((await ok(['list', '--limit', '3', '--format', 'csv'], { home })).stdout);
    expect(page).toHaveLength(4);
    const r = await carbon(['list', '--format', 'csv', '--json'], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
  });
});

describe('list filters: --status, --since, --until, with pages, --all and every format', () => {
  test('each filter keeps what matches, on a page, with --all as NDJSON and CSV, and an empty result says what was filtered', async () => {
    // Live mode: the early purchase places a minute (model time) on; the others wait for review
    // (a limit of $0), so no status here depends on seconds of real time.
    const home = newHome();
    await ok(['config', 'set', 'mode', 'live'], { home });
    await ok(['sandbox', 'topup', '250'], { home });
    const early = await json<{ id: string; created: string }>(['buy', '--kg', '1', '--yes'], { home });
    await ok(['sandbox', 'review-limit', '0'], { home });
    const failed = await json<{ id: string }>(['buy', '--kg', '2', '--yes'], { home });
    await ok(['sandbox', 'fail', failed.id], { home });
    await ok(['sandbox', 'clock', 'advance', '40d'], { home });
    // On to one o'clock of the model's next day, so that no model midnight falls in this test.
    const { now } = await json<{ now: string }>(['sandbox', 'clock'], { home });
    await ok(['sandbox', 'clock', 'advance', `${Math.ceil((86_400_000 - (Date.parse(now) % 86_400_000)) / 1000) + 3600}s`], { home });
    const late = await json<{ id: string; created: string }>(['buy', '--kg', '3', '--yes'], { home });
    const ids = async (args: string[]) => (await json<{ data: Array<{ id: string }> }>(['list', ...args], { home })).data.map((o) => o.id);
    expect(await ids(['--status', 'refunded'])).toEqual([failed.id]);
    expect(await ids(['--status', 'placed'])).toEqual([early.id]);
    expect(await ids(['--status', 'processing'])).toEqual([late.id]);
    const lateDay = late.created.slice(0, 10);
    const earlyDay = early.created.slice(0, 10);
    expect(await ids(['--since', lateDay])).toEqual([late.id]);
    expect(await ids(['--until', earlyDay])).toEqual([failed.id, early.id]);
    expect(await ids(['--until', earlyDay, '--status', 'placed', '--limit', '1'])).toEqual([early.id]);
    // An age counts back from the model's clock, which the sandbox moved 40 days on: the last
    // week holds only the late purchase, and "until a week ago" the early ones.
    expect(await ids(['--since', '7d'])).toEqual([late.id]);
    expect(await ids(['--until', '7d'])).toEqual([failed.id, early.id]);
    const ndjson = (await ok(['list', '--all', '--json', '--until', earlyDay], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ndjson).toEqual([failed.id, early.id]);
    expect((await ok(['list', '--all', '--format', 'csv', '--status', 'refunded'], { home })).stdout.trim().split('\r\n')).toHaveLength(2);
    const none = await carbonTty(['list', '--status', 'refunded', '--since', lateDay], { home });
    expect(none.output).toContain(`No live offsets with status refunded and since ${lateDay}.`);
    // today and yesterday are days of the model's clock too (40 days on): by this computer's, every
    // offset here was bought today, and none until yesterday.
    expect(await ids(['--since', 'today'])).toEqual([late.id]);
    expect(await ids(['--since', 'yesterday'])).toEqual([late.id]);
    expect(await ids(['--until', 'yesterday'])).toEqual([failed.id, early.id]);
    expect(await ids(['--since', 'yesterday', '--until', 'today'])).toEqual([late.id]);
    expect(await ids(['--until', 'today', '--status', 'refunded'])).toEqual([failed.id]);
    const bad = await carbon(['list', '--since', 'tomorrow'], { home });
    expect([bad.exitCode, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/--since must be a day such as 2026-01-31, today or yesterday, or an age such as 7d/);
  });

  // Bad input changes nothing: a --since or --until that is neither a day nor an age is refused
  // before the model is opened, so a fresh CARBON_HOME (a CI job's) gets no ledger from a typo.
  test.each([
    ['list', '--since', 'abc'],
    ['list', '--until', '2026-02-30'],
    ['list', '--all', '--json', '--since', '7D'],
    ['watch', '--since', 'last-week'],
    ['report', '--since', '1 day'],
    ['watch', '--cursor', '/nonexistent/cursor.json'],
  ])('%s %s %s …: malformed, refused with nothing created (exit 2)', async (...args) => {
    const home = newHome();
    const r = await carbon(args, { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(/--(since|until) must be a day such as 2026-01-31|Cannot keep the cursor in \/nonexistent/);
    expect(readdirSync(home)).toEqual([]);
  });

  // A span that ends before it starts whatever the clock reads (two ages, two named days, two dates)
  // is refused before the model is opened for its clock; so is a cursor watch cannot keep, before --since's clock.
  test.each([
    ['list', '--since', '7d', '--until', '30d'],
    ['list', '--all', '--json', '--since', '1h', '--until', '1h'],
    ['list', '--since', 'today', '--until', 'yesterday'],
    ['report', '--since', '7d', '--until', '30d'],
    ['report', '--since', 'today', '--until', 'yesterday', '--format', 'csv'],
    ['watch', '--since', '7d', '--cursor', '/nonexistent/cursor.json'],
  ])('%s %s %s %s %s …: backwards or unkeepable, refused with nothing created (exit 2)', async (...args) => {
    const home = newHome();
    const r = await carbon(args, { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(/--since must come before --until\.|Cannot keep the cursor in \/nonexistent: /);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(readdirSync(home)).toEqual([]);
  });

  test('list --all on a terminal with nothing to show says so, as a page does: no header over no rows', async () => {
    const home = newHome();
    const empty = await carbonTty(['list', '--all'], { home });
    expect(empty.exitCode).toBe(0);
    expect(plain(empty.output).trim()).toBe('No test offsets yet. Buy some with `carbon buy --kg 500`.');
    await ok(['buy', '--kg', '3'], { home });
    const filtered = await carbonTty(['list', '--all', '--status', 'refunded'], { home });
    expect(plain(filtered.output).trim()).toBe('No test offsets with status refunded.');
    expect(plain((await carbonTty(['list', '--all'], { home })).output)).toMatch(/^ID +STATUS +KG .*\noff_\S+ +(processing|placed) +3 /);
  });

  test('an empty live list on a terminal suggests the top-up its first purchase needs, and what it suggests works as written', async () => {
    const home = newHome();
    for (const args of [
      ['list', '--live'],
      ['list', '--live', '--all'],
    ]) {
      const empty = await carbonTty(args, { home });
      expect(empty.exitCode).toBe(0);
      expect(plain(empty.output).trim()).toBe(
        'No live offsets yet, and the live balance ($0.00) does not cover 500 kg ($20.00). ' +
          'Top it up with `carbon sandbox topup 250 --live`, then buy with `carbon buy --kg 500 --live`.',
      );
    }
    // Only the suggestion was said: nothing was bought or topped up.
    expect((await json(['balance', '--live'], { home })).available_cents).toBe(0);
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    expect(plain((await carbonTty(['list', '--live'], { home })).output).trim()).toBe(
      'No live offsets yet. Buy some with `carbon buy --kg 500 --live`.',
    );
    await ok(['buy', '--kg', '500', '--live', '--yes'], { home });
    expect((await json(['list', '--live'], { home })).data).toHaveLength(1);
  });

  test('a span that ends before it starts is refused as report refuses it, in every format, not listed as empty', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '1'], { home });
    for (const extra of [[], ['--json'], ['--all', '--format', 'csv']]) {
      for (const span of [
        ['--since', '2026-12-01', '--until', '2026-01-01'],
        ['--since', '1h', '--until', '1h'],
        ['--since', 'today', '--until', 'yesterday'],
      ]) {
        const r = await carbon(['list', ...span, ...extra], { home });
        expect({ span, extra, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ span, extra, exitCode: 2, stdout: '' });
        expect(r.stderr).toContain('--since must come before --until.');
      }
    }
    expect((await carbon(['report', '--since', '2026-12-01', '--until', '2026-01-01'], { home })).stderr).toBe(
      'error: --since must come before --until.\n',
    );
  });
});
