import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { gzipSync } from 'node:zlib';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { ledgerPath } from '../support/children.js';
import { BIN, baseEnv, carbon, carbonTty, homes, json, ok, parseCsv, pipeline, plain, sandboxKeys, serve } from '../support/cli.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { headerless } from '../support/headerless-proxy.js';
import { limit } from '../support/load.js';

/** Issue 25, item 1: `carbon buy --from-csv FILE`, through the built binary. */
const newHome = homes();

const file = (home: string, name: string, text: string | Uint8Array) => {
  const path = join(home, name);
  writeFileSync(path, text);
  return path;
};
/**
 * Ctrl-C (or SIGTERM) to a child that is waiting on an answer, handled before the answer can
 * arrive: an event, not a sleep of a guessed length, which a busy machine can outlast. Linux's
 * /proc tells it: the signal is no longer pending, and the main thread, woken by it, has gone back
 * to sleep (its voluntary context switches grew), so its event loop has run the signal's handler.
 * (libuv runs signal handlers after the other I/O of the same wake-up: an answer arriving in that
 * wake-up would be seen first.)
 */
async function interruptWaiting(pid: number, signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
  const main = () => readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const switches = (status: string) => Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(status)![1]);
  const before = switches(main());
  process.kill(pid, signal);
  const handled = () => {
    const status = main();
    const pending = /^(SigPnd|ShdPnd):\s*[0-9a-f]*[1-9a-f]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return !pending && /^State:\s*S/m.test(status) && switches(status) > before;
  };
  while (!handled()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const offsetIds = async (home: string, env?: Record<string, string>) =>
  (await ok(['list', '--all', '-q', ...(env ? [] : [])], { home, ...(env ? { env } : {}) })).stdout.split('\n').filter(Boolean);
const results = (stdout: string) => {
  const [header, ...rows] = parseCsv(stdout);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
};

describe('in a pipe', () => {
  test('buys one offset per row, headers matched loosely, and a second run buys nothing', async () => {
    const home = newHome();
    const csv = file(home, 'flights.csv', 'KG CO2e,Reference,notes\n500,flight-1,x\n"1,000",flight-2,y\n\n250,,z\n');
    const first = await carbon(['buy', '--from-csv', csv], { home });
    expect(first.exitCode).toBe(0);
    const rows = results(first.stdout);
    expect(rows.map((r) => [r.row, r.status, r.kg, r.amount_cents, r.reference, r.replayed])).toEqual([
      ['1', 'processing', '500', '2000', 'flight-1', 'false'],
      ['2', 'processing', '1000', '4000', 'flight-2', 'false'],
      ['3', 'processing', '250', '1000', '', 'false'],
    ]);
    expect(rows.every((r) => /^off_/.test(r.offset_id!))).toBe(true);
    // A pipe gets no progress bar: the ignored column's warning and the summary, nothing else.
    expect(first.stderr).toBe(
      'warning: ignoring column "notes" (carbon reads kg, amount, amount_cents and reference).\n✓ 3 of 3 rows bought (1,750 kg for $70.00, test mode, sandbox: not a real purchase).\n',
    );
    expect(await offsetIds(home)).toHaveLength(3);

    const again = await carbon(['buy', '--from-csv', csv], { home });
    expect(again.exitCode).toBe(0);
    const replayed = results(again.stdout);
    expect(replayed.map((r) => r.offset_id)).toEqual(rows.map((r) => r.offset_id));
    expect(replayed.every((r) => r.replayed === 'true')).toBe(true);
    expect(again.stderr).toContain(
      '3 of 3 rows bought (1,750 kg for $70.00, test mode, sandbox: not a real purchase; 3 by an earlier run, not charged again)',
    );
    expect(await offsetIds(home)).toHaveLength(3);
    expect((await ok(['balance', '--json'], { home })).stdout).toContain('"available_cents": 93000');

    // -q: the offsets' ids alone, one a line (for xargs), as `buy -q` prints its one; the summary stays on stderr.
    const quiet = await carbon(['buy', '--from-csv', csv, '-q'], { home });
    expect([quiet.exitCode, quiet.stdout]).toEqual([0, rows.map((r) => `${r.offset_id}\n`).join('')]);
    expect(quiet.stderr).toContain('3 of 3 rows bought');
    const withJson = await carbon(['buy', '--from-csv', csv, '--quiet', '--json'], { home });
    expect([withJson.exitCode, withJson.stdout]).toEqual([2, '']);
    expect(JSON.parse(withJson.stderr).error.message).toBe('--quiet prints only the offset ids: leave out --json.');
    expect(await offsetIds(home)).toHaveLength(3);
  });

  test('amounts in dollars become exact cents; --json gives NDJSON rows and the batch totals; stdin works', async () => {
    const home = newHome();
    // Enough for the batch twice: a run again is checked against the balance whole (README, "Buying from a spreadsheet").
    await ok(['sandbox', 'topup', '2000'], { home });
    const r = await carbon(['buy', '--from-csv', '-', '--json'], { home, input: 'amount_usd,REF\n12.50,a\n$0.29,b\n"1,000.10",c\n' });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    // A column carbon does not read is said with --json too: a misspelt header would buy without its reference, unsaid.
    const misspelt = await carbon(['buy', '--from-csv', '-', '--json', '--dry-run'], { home, input: 'kg,refrence\n5,a\n' });
    expect([misspelt.exitCode, misspelt.stderr]).toEqual([
      0,
      'warning: ignoring column "refrence" (carbon reads kg, amount, amount_cents and reference).\n',
    ]);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.slice(0, 3).map((l) => [l.object, l.row, l.amount_cents, l.reference])).toEqual([
      ['batch_row', 1, 1248, 'a'],
      ['batch_row', 2, 28, 'b'],
      ['batch_row', 3, 100008, 'c'],
    ]);
    expect(lines[3]).toMatchObject({ object: 'batch', rows: 3, bought: 3, replayed: 0, failed: 0, skipped: 0 });
    expect([lines[3].amount_cents, lines[3].charged_cents]).toEqual([101284, 101284]);
    // Run again: every row replayed, what they cost still counted, nothing charged by this run.
    const again = await carbon(['buy', '--from-csv', '-', '--json'], { home, input: 'amount_usd,REF\n12.50,a\n$0.29,b\n"1,000.10",c\n' });
    expect(JSON.parse(again.stdout.trim().split('\n').at(-1)!)).toMatchObject({ replayed: 3, amount_cents: 101284, charged_cents: 0 });
  });

  test("the sandbox's results say so on every row, in a last column (environment), as list's CSV: local, through carbon serve; --json and a service that does not say it is a sandbox get none", async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'reference,kg\nflight-1,5\nflight-2,7\n');
    const SANDBOX = 'sandbox: not a real purchase';
    const listHeader = async (env: Record<string, string> = {}) =>
      parseCsv((await ok(['list', '--format', 'csv'], { home, env })).stdout)[0]!;
    const ends = async (args: string[], env: Record<string, string> = {}) => {
      const r = await ok(['buy', '--from-csv', csv, ...args], { home, env });
      const [header, ...rows] = parseCsv(r.stdout);
      expect(rows, args.join(' ')).toHaveLength(2);
      for (const row of rows) expect(row, args.join(' ')).toHaveLength(header!.length);
      return { header: header!, last: new Set(rows.map((row) => row.at(-1))) };
    };
    for (const args of [['--dry-run'], []]) {
      const { header, last } = await ends(args);
      expect([header.at(-1), [...last]], args.join(' ')).toEqual(['environment', [SANDBOX]]);
      // The column is list's own: the same name, last, with the same value.
      expect(header.at(-1)).toBe((await listHeader()).at(-1));
    }
    const ndjson = (await ok(['buy', '--from-csv', csv, '--json'], { home })).stdout.trim().split('\n');
    for (const line of ndjson) expect(Object.keys(JSON.parse(line))).not.toContain('environment');

    const server = await serve(home, ['--show-keys']);
    const other = await headerless(server.url);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.test_key! };
      const served = await ends([], env);
      expect([served.header.at(-1), [...served.last]]).toEqual(['environment', [SANDBOX]]);
      // Over HTTP a dry run cannot know which rows an earlier run bought (these two were): every row priced, charged_cents null.
      const remoteDry = (await ok(['buy', '--from-csv', csv, '--dry-run', '--json'], { home, env })).stdout.trim().split('\n');
      expect(remoteDry.map((l) => JSON.parse(l).replayed)).toEqual([false, false, undefined]);
      expect(JSON.parse(remoteDry.at(-1)!)).toMatchObject({ object: 'batch', charged_cents: null, dry_run: true });
      const elsewhere = await ends([], { ...env, CARBON_BASE_URL: other.url });
      expect(elsewhere.header.at(-1)).toBe('idempotency_key');
      expect(elsewhere.header).not.toContain('environment');
    } finally {
      other.close();
      await server.stop();
    }
  });

  test('a batch with bad rows is refused whole: every fault named, nothing bought, exit 2', async () => {
    const home = newHome();
    // The last row's `1,200` is unquoted: three cells under two columns, read as 1 kg before.
    const csv = file(
      home,
      'bad.csv',
      'kg,amount,reference\n500,,ok\n1.5,,half\n,,none\n0,,zero\n5,2.00,both\n,1.234,mills\n1,200,,split\n',
    );
    const r = await carbon(['buy', '--from-csv', csv], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    for (const fault of [
      'row 2 (line 3): kg must be a whole number',
      'row 3 (line 4): no kg, amount or amount_cents',
      'row 4 (line 5): kg must be a whole number from 1 to 1,000,000',
      'row 5 (line 6): give one of kg, amount and amount_cents',
      'row 6 (line 7): amount must be dollars such as 12.50, not "1.234" (at most two decimals',
      'row 7 (line 8): 4 cells where the header names 3 columns (past them: "split"): an unquoted comma splits a cell in two',
    ]) {
      expect(r.stderr).toContain(fault);
    }
    expect(r.stderr).toMatch(/^error: 6 of 7 rows cannot be bought .*nothing was bought\.$/m);
    expect(await offsetIds(home)).toEqual([]);
    // --json: each fault in the envelope's rows (its row, its line, why), and their count.
    const json = await carbon(['buy', '--from-csv', csv, '--json'], { home });
    expect([json.exitCode, json.stdout]).toEqual([2, '']);
    const { error } = JSON.parse(json.stderr) as {
      error: { code: string; rows: Array<{ row: number; line: number; message: string }>; rows_refused: number };
    };
    expect([error.code, error.rows_refused]).toEqual(['csv_invalid', 6]);
    expect(error.rows.map((f) => [f.row, f.line])).toEqual([
      [2, 3],
      [3, 4],
      [4, 5],
      [5, 6],
      [6, 7],
      [7, 8],
    ]);
    expect(error.rows[5]!.message).toMatch(/^4 cells where the header names 3 columns/);
    expect(await offsetIds(home)).toEqual([]);
  });

  test("a bad cell's control characters are spaces on its row's line, as on the error line: an escape sequence drives no terminal", async () => {
    const home = newHome();
    const csv = file(home, 'esc.csv', 'reference,kg\nr1,5\u001b]0;pwned\u0007\u001b[31m\nr2,6\u0000\n');
    const r = await carbon(['buy', '--from-csv', csv, '--dry-run'], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain('  row 1 (line 2): kg must be a whole number such as 500 or 1,000, not "5 ]0;pwned [31m"');
    expect(r.stderr).toContain('  row 2 (line 3): kg must be a whole number such as 500 or 1,000, not "6 "');
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(await offsetIds(home)).toEqual([]);
  });

  test('a file of many bad rows names the first 20, then counts the rest', async () => {
    const home = newHome();
    const csv = file(home, 'zeros.csv', `kg,reference\n${Array.from({ length: 25 }, (_, i) => `0,r${i + 1}`).join('\n')}\n`);
    const r = await carbon(['buy', '--from-csv', csv], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    const named = r.stderr.split('\n').filter((l) => /^ {2}row \d+ \(line \d+\):/.test(l));
    expect(named.map((l) => /row (\d+)/.exec(l)![1])).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    expect(r.stderr).toContain('  … and 5 more');
    const json = JSON.parse((await carbon(['buy', '--from-csv', csv, '--json'], { home })).stderr) as {
      error: { rows: Array<{ row: number }>; rows_refused: number };
    };
    expect([json.error.rows.map((f) => f.row), json.error.rows_refused]).toEqual([Array.from({ length: 20 }, (_, i) => i + 1), 25]);
    expect(await offsetIds(home)).toEqual([]);
  });

  test.each([
    ['no purchase column', 'name,reference\nx,y\n', /names no kg, amount or amount_cents column\. Nothing was bought\./],
    ['two kg columns', 'kg,KG\n1,2\n', /two kg columns: "kg" and "KG"; keep one\. Nothing was bought\./],
    [
      'an unclosed quote',
      'kg,reference\n5,"open\n',
      /^error: The CSV cannot be read: a quote is still open at the end of the file \(line 2\): a cell that starts with " must end with "\. Nothing was bought\.\n$/,
    ],
    [
      'a quoted cell that goes on',
      'kg,reference\n5,"ab"c\n',
      /^error: The CSV cannot be read: on line 2, a quoted cell goes on after its closing quote \("c"\); write a quote inside a quoted cell twice \(""\)\. Nothing was bought\.\n$/,
    ],
    [
      'a quote inside an unquoted cell',
      'kg,reference\n3,=HYPERLINK("http://x")\n',
      /^error: The CSV cannot be read: on line 2, cell 2 has a quote after its start \("=HYPERLINK\("\); a cell holding a quote is quoted whole, each quote in it written twice \("a ""b"" c"\)\. Nothing was bought\.\n$/,
    ],
    ['only a header', 'kg\n', /a header and no rows/],
  ])('%s: exit 2, nothing bought', async (_what, text, message) => {
    const home = newHome();
    const r = await carbon(['buy', '--from-csv', file(home, 'f.csv', text)], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(await offsetIds(home)).toEqual([]);
  });

  test('a file saved in Windows-1252 is refused with how to save it; semicolons and tabs are read as delimiters', async () => {
    const home = newHome();
    const latin = join(home, 'latin.csv');
    writeFileSync(latin, Buffer.from('kg,reference\n5,caf\xe9\n', 'latin1'));
    const r = await carbon(['buy', '--from-csv', latin], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('The CSV is not UTF-8 text; nothing was bought. Save it as "CSV UTF-8"');
    expect(await offsetIds(home)).toEqual([]);
    const semi = await carbon(['buy', '--from-csv', '-'], { home, input: '\ufeffReference;Kg\nx;5\n' });
    expect(results(semi.stdout).map((row) => [row.reference, row.kg])).toEqual([['x', '5']]);
    const tabs = await carbon(['buy', '--from-csv', '-'], { home, input: 'amount\treference\n1.00\ty\n' });
    expect(results(tabs.stdout).map((row) => [row.reference, row.amount_cents])).toEqual([['y', '100']]);
  });

  test('flags of a single purchase, and a missing file, are usage errors', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'kg\n5\n');
    expect((await carbon(['buy', '--from-csv', csv, '--kg', '5'], { home })).stderr).toContain('leave out --kg');
    const wait = await carbon(['buy', '--from-csv', csv, '--wait'], { home });
    expect(wait.exitCode).toBe(2);
    expect(wait.stderr).toContain('carbon watch --until-settled');
    const missing = await carbon(['buy', '--from-csv', join(home, 'nope.csv')], { home });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toBe(`error: There is no file ${join(home, 'nope.csv')}; nothing was bought.\n`);
    const empty = await carbon(['buy', '--from-csv', ''], { home });
    expect([empty.exitCode, empty.stderr]).toEqual([
      2,
      'error: --from-csv needs a file (or - for stdin), and was given an empty name; nothing was bought.\n',
    ]);
    const dir = await carbon(['buy', '--from-csv', home], { home });
    expect(dir.stderr).toBe(`error: ${home} is a directory, not a CSV file; nothing was bought.\n`);
    expect((await carbon(['buy', '--kg', '5', '--batch-id', 'x'], { home })).exitCode).toBe(2);
    expect(await offsetIds(home)).toEqual([]);
  });

  test('a batch stopped while it is checked (no server there, a key refused) says that nothing was bought, with its exit code', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'reference,kg\na,1\nb,2\n');
    const unreached = await carbon(['buy', '--from-csv', csv], {
      home,
      env: { CARBON_BASE_URL: 'http://127.0.0.1:1/api/v1', CARBON_API_KEY: 'ck_test_abcdefabcdef12' },
    });
    expect([unreached.exitCode, unreached.stdout]).toEqual([1, '']);
    expect(unreached.stderr).toMatch(
      /^error: Could not reach http:\/\/127\.0\.0\.1:1: .* The batch was being checked: nothing was bought\.\n$/,
    );
    const server = await serve(home);
    try {
      const refused = await carbon(['buy', '--from-csv', csv], {
        home,
        env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: 'ck_test_abcdefabcdef12' },
      });
      expect([refused.exitCode, refused.stdout]).toEqual([4, '']);
      expect(refused.stderr).toMatch(/^error: .*API key.* The batch was being checked: nothing was bought\.\n$/);
    } finally {
      await server.stop();
    }
    expect(await offsetIds(home)).toEqual([]);
  });

  test('--max-cents bounds the batch total; --dry-run prints the totals and whether the balance covers them', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'kg\n500\n500\n');
    const over = await carbon(['buy', '--from-csv', csv, '--max-cents', '3999'], { home });
    expect(over.exitCode).toBe(2);
    expect(over.stderr).toContain('would cost 4000 cents, more than --max-cents 3999');
    expect((await carbon(['buy', '--from-csv', csv, '--max-cents', '4000', '--dry-run'], { home })).exitCode).toBe(0);
    const dry = await carbon(['buy', '--from-csv', csv, '--dry-run'], { home });
    expect(results(dry.stdout).map((r) => r.status)).toEqual(['quoted', 'quoted']);
    expect(dry.stderr).toContain('Dry run: 2 rows, 1,000 kg for $40.00, from the test balance ($1,000.00), which covers it');
    // A count of rows is grouped as the kg and dollars beside it are (before: "1200 rows, 1,200 kg").
    const many = await carbon(['buy', '--from-csv', file(home, 'many.csv', `kg\n${'1\n'.repeat(1200)}`), '--dry-run'], { home });
    expect(many.stderr).toContain('Dry run: 1,200 rows, 1,200 kg for $48.00');
    const big = file(home, 'big.csv', 'kg\n20000\n10000\n');
    const short = await carbon(['buy', '--from-csv', big, '--dry-run', '--json'], { home });
    expect(short.exitCode).toBe(3);
    expect(JSON.parse(short.stdout.trim().split('\n').at(-1)!)).toMatchObject({
      object: 'batch',
      amount_cents: 120000,
      sufficient_balance: false,
      dry_run: true,
    });
    // The error carries what the purchase's refusal carries (spec section 7: balance_cents, required_cents).
    const refused = await carbon(['buy', '--from-csv', big, '--json'], { home });
    const money = { balance_cents: 100000, required_cents: 120000, shortfall_cents: 20000 };
    expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'insufficient_balance', ...money });
    expect(JSON.parse(short.stderr).error).toMatchObject({ code: 'insufficient_balance', ...money });
    // The top-up it would take, as the purchase's refusal names it.
    const said = await carbon(['buy', '--from-csv', big, '--dry-run'], { home });
    expect(said.stderr.trim().split('\n').at(-1)).toBe(
      'error: Dry run: the test balance ($1,000.00) does not cover the batch (2 rows, 30,000 kg for $1,200.00): $200.00 short; buying would be refused. Nothing was bought. Top it up with `carbon sandbox topup 250`, or add --partial to buy the rows that fit, in order.',
    );
    expect(await offsetIds(home)).toEqual([]);
  });

  test("--dry-run with a read-only key gets the purchase's exit code, 10, saying row 1 would be refused and the rest skipped", async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'kg\n5\n6\n7\n');
    const env = { CARBON_API_KEY: (await sandboxKeys(home)).readOnly };
    const bought = await carbon(['buy', '--from-csv', csv], { home, env });
    expect(results(bought.stdout).map((r) => [r.status, r.error_code])).toEqual([
      ['failed', 'insufficient_permissions'],
      ['skipped', 'batch_stopped'],
      ['skipped', 'batch_stopped'],
    ]);
    // Before: exit 0, "which covers it": the dry run did not look at the key, as the single purchase's does.
    const dry = await carbon(['buy', '--from-csv', csv, '--dry-run'], { home, env });
    expect([dry.exitCode, bought.exitCode]).toEqual([10, 10]);
    expect(dry.stderr.trim().split('\n').at(-1)).toBe(
      'error: Dry run: this key is read-only; row 1 would fail (insufficient_permissions) and 2 would be skipped. Nothing was bought. Run it with a key that may buy.',
    );
    const may = await carbon(['buy', '--from-csv', csv, '--dry-run'], { home });
    expect([may.exitCode, may.stderr.trim().split('\n').at(-1)]).toEqual([
      0,
      'Dry run: 3 rows, 18 kg for $0.72, from the test balance ($1,000.00), which covers it; the key may buy. Nothing was bought.',
    ]);
    expect(await offsetIds(home)).toEqual([]);
  });

  test('run again after the balance fell, on the local engine: rows an earlier run bought are not counted against the balance (exit 0, nothing charged)', async () => {
    const home = newHome();
    // $480 a row, of the $1,000 test balance.
    const csv = file(home, 'q3.csv', 'reference,kg\nq3-flights,12000\nq3-freight,12000\n');
    const args = ['buy', '--from-csv', csv, '--batch-id', '2026-q3'];
    expect((await carbon(args, { home })).exitCode).toBe(0);
    const balance = async () => (await json<{ available_cents: number }>(['balance'], { home })).available_cents;
    expect(await balance()).toBe(4000);
    // Before: exit 3, "$920.00 short", and a top-up of $920 advised for a batch that needs none.
    const dry = await carbon([...args, '--dry-run'], { home });
    expect([dry.exitCode, dry.stderr.trim().split('\n').at(-1)]).toEqual([
      0,
      'Dry run: 2 rows, 24,000 kg for $960.00, from the test balance ($40.00), which covers it (2 rows bought by an earlier run are not charged again: $0.00 to pay); the key may buy. Nothing was bought.',
    ]);
    // Each row says it would come back replayed, and the totals what would be charged. Before: replayed false, as a new row.
    expect(results(dry.stdout).map((r) => [r.status, r.replayed])).toEqual([
      ['quoted', 'true'],
      ['quoted', 'true'],
    ]);
    const dryJson = (await carbon([...args, '--dry-run', '--json'], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(dryJson.map((r) => r.replayed)).toEqual([true, true, undefined]);
    expect(dryJson.at(-1)).toMatchObject({
      object: 'batch',
      amount_cents: 96000,
      charged_cents: 0,
      sufficient_balance: true,
      dry_run: true,
    });
    const again = await carbon(args, { home });
    expect([again.exitCode, results(again.stdout).map((r) => r.replayed)]).toEqual([0, ['true', 'true']]);
    expect(await balance()).toBe(4000);
    // A row added since: only it is to pay, and the shortfall and the top-up are its.
    const more = file(home, 'q3b.csv', 'reference,kg\nq3-flights,12000\nq3-freight,12000\nq3-rail,12000\n');
    const short = await carbon(['buy', '--from-csv', more, '--batch-id', '2026-q3', '--json'], { home });
    expect([short.exitCode, short.stdout]).toEqual([3, '']);
    expect(JSON.parse(short.stderr).error).toMatchObject({
      code: 'insufficient_balance',
      message:
        'The test balance ($40.00) does not cover the batch (3 rows, 36,000 kg for $1,440.00; 2 rows bought by an earlier run are not charged again: $480.00 to pay): $440.00 short. Nothing was bought.',
      required_cents: 48000,
      shortfall_cents: 44000,
    });
    expect(await balance()).toBe(4000);
    // Rows that share a reference may be bought under each other's keys (a sorted file): counted as charged, as before.
    const shared = newHome();
    const twice = file(shared, 'twice.csv', 'reference,kg\nteam,12000\nteam,12000\n');
    expect((await carbon(['buy', '--from-csv', twice], { home: shared })).exitCode).toBe(0);
    expect((await carbon(['buy', '--from-csv', twice], { home: shared })).exitCode).toBe(3);
  });

  test('run again after the balance fell, on the local engine: a changed row, --partial, and a run cut short say what the ledger knows', async () => {
    const home = newHome();
    // $40 a row, of the $1,000 test balance; then a row changed, and the balance spent to $20.
    const rows = (third: number) =>
      `kg,reference\n${Array.from({ length: 10 }, (_, i) => `${i === 2 ? third : 1000},r-${i + 1}`).join('\n')}\n`;
    const csv = file(home, 'a.csv', rows(1000));
    const changed = file(home, 'a2.csv', rows(2000));
    expect((await carbon(['buy', '--from-csv', csv], { home })).exitCode).toBe(0);
    expect((await carbon(['buy', '--from-csv', changed, '--rebuy-changed'], { home })).exitCode).toBe(0);
    expect((await carbon(['buy', '--kg', '12500'], { home })).exitCode).toBe(0);
    const balance = async () => (await json<{ available_cents: number }>(['balance'], { home })).available_cents;
    expect(await balance()).toBe(2000);
    // With --rebuy-changed, the changed row replays under its new key. Before: exit 3, "$60.00 short".
    const rebuy = await carbon(['buy', '--from-csv', changed, '--rebuy-changed', '--dry-run'], { home });
    expect([rebuy.exitCode, rebuy.stderr]).toEqual([0, expect.stringContaining('10 rows bought by an earlier run are not charged again')]);
    const rebought = await carbon(['buy', '--from-csv', changed, '--rebuy-changed'], { home });
    expect([rebought.exitCode, results(rebought.stdout).map((r) => r.replayed)]).toEqual([0, Array(10).fill('true')]);
    // Without it, the changed row is not bought (exit 10, `changed`), not a top-up to ask for.
    // Its dry run says so too, with the purchase's exit code (before: exit 0, and every row `quoted`, replayed false).
    const plain = await carbon(['buy', '--from-csv', changed, '--dry-run'], { home });
    expect([plain.exitCode, plain.stderr]).toEqual([
      10,
      'error: Dry run: 10 rows, 11,000 kg for $440.00, from the test balance ($20.00), which covers it; ' +
        '9 rows bought by an earlier run are not charged again, and 1 row changed since is not bought again without --rebuy-changed: $0.00 to pay; ' +
        'the batch would end incomplete. Nothing was bought. Add --rebuy-changed to buy the changed rows as they are now.\n',
    ]);
    expect(results(plain.stdout).map((r) => [r.status, r.replayed, r.error_code])).toEqual(
      Array.from({ length: 10 }, (_, i) => (i === 2 ? ['changed', 'false', 'row_changed'] : ['quoted', 'true', ''])),
    );
    expect((await carbon(['buy', '--from-csv', changed], { home })).exitCode).toBe(10);
    // --partial's dry run counts what the ledger knows too: every row replays. Before: exit 10, "covers the first 0 of 10 rows".
    expect((await carbon(['buy', '--from-csv', csv, '--dry-run', '--partial'], { home })).exitCode).toBe(0);
    // A run cut short (every purchase failing) asks for no --partial, and for a top-up only as an upper bound.
    expect(
      (await carbon(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', '500', '--route', 'POST /offsets'], { home })).exitCode,
    ).toBe(0);
    const cut = await carbon(['buy', '--from-csv', csv, '--max-retries', '0'], { home });
    expect([cut.exitCode, cut.stderr]).toEqual([
      10,
      expect.stringContaining(
        'Run the same command again to resume (batch default): rows already bought are never bought twice (the rows left cost at most $400.00; the balance is $20.00: where the rows not bought yet need more, that run says so, and names the top-up, at most `carbon sandbox topup 380`).',
      ),
    ]);
    expect((await carbon(['sandbox', 'faults', 'off'], { home })).exitCode).toBe(0);
    expect((await carbon(['buy', '--from-csv', csv], { home })).exitCode).toBe(0);
    expect(await balance()).toBe(2000);
  });

  test('a batch the balance does not cover is refused before anything is bought (exit 3); --partial buys what fits, in order', async () => {
    const home = newHome();
    // $200 a row; the test balance is $1,000.
    const csv = file(home, 'f.csv', `kg,reference\n${Array.from({ length: 8 }, (_, i) => `5000,team-${i + 1}`).join('\n')}\n`);
    const refused = await carbon(['buy', '--from-csv', csv], { home });
    expect(refused.exitCode).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'error: The test balance ($1,000.00) does not cover the batch (8 rows, 40,000 kg for $1,600.00): $600.00 short. Nothing was bought. ' +
        'Top it up with `carbon sandbox topup 600`, or add --partial to buy the rows that fit, in order (rows an earlier run of this batch bought are not charged again).\n',
    );
    expect(await offsetIds(home)).toEqual([]);
    const json = await carbon(['buy', '--from-csv', csv, '--json'], { home });
    // Typed as the API types a 402 (invalid_request_error), as a single buy's is: api_error is a 5xx's.
    expect(JSON.parse(json.stderr).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'insufficient_balance',
      shortfall_cents: 60000,
      required_cents: 160000,
    });

    // A dry run with --partial says what the purchase would do, with its exit code: the first five fit.
    const dry = await carbon(['buy', '--from-csv', csv, '--partial', '--dry-run'], { home });
    expect([dry.exitCode, results(dry.stdout).map((r) => r.status)]).toEqual([10, Array(8).fill('quoted')]);
    expect(dry.stderr).toBe(
      'error: Dry run: with --partial, the test balance ($1,000.00) covers the first 5 of 8 rows ($1,000.00); row 6 would fail (insufficient_balance) and 2 would be skipped. Nothing was bought.\n',
    );
    const dryJson = await carbon(['buy', '--from-csv', csv, '--partial', '--dry-run', '--json'], { home });
    expect([dryJson.exitCode, JSON.parse(dryJson.stderr).error.code]).toEqual([10, 'batch_incomplete']);
    expect(await offsetIds(home)).toEqual([]);

    const cut = await carbon(['buy', '--from-csv', csv, '--partial'], { home });
    expect(cut.exitCode).toBe(10);
    expect(results(cut.stdout).map((r) => `${r.status}:${r.error_code}`)).toEqual([
      ...Array(5).fill('processing:'),
      'failed:insufficient_balance',
      'skipped:batch_stopped',
      'skipped:batch_stopped',
    ]);
    // Run again as it is, it would stop at the same row: the line names the top-up the rows left need ($600), at
    // most (on the local engine, the run that resumes counts only the rows not bought yet, and names their top-up).
    expect(cut.stderr).toMatch(
      /^error: Batch incomplete: 5 of 8 rows bought .*1 failed, 2 skipped .*Run the same command again to resume \(batch default\): rows already bought are never bought twice \(the rows left cost at most \$600\.00; the balance is \$0\.00: .* at most `carbon sandbox topup 600`\)/m,
    );
    await ok(['sandbox', 'topup', '1000'], { home });
    const resumed = await carbon(['buy', '--from-csv', csv, '--partial'], { home });
    expect(resumed.exitCode).toBe(0);
    expect(results(resumed.stdout).map((r) => r.replayed)).toEqual([...Array(5).fill('true'), ...Array(3).fill('false')]);
    expect(await offsetIds(home)).toHaveLength(8);
    expect((await ok(['balance', '--json'], { home })).stdout).toContain('"available_cents": 40000');
  });

  test('a batch another process spends under (402 at a row): its line says the balance as it is now, and the top-up the rows left need', {
    timeout: limit(60_000),
  }, async () => {
    const home = newHome();
    const server = await serve(home);
    try {
      // Each purchase waits 300 ms in the server: time for another one to come between two rows.
      await ok(['sandbox', 'faults', 'set', '--latency', '300ms', '--route', 'POST /offsets'], { home });
      const { test: key } = await sandboxKeys(home);
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${server.url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
        });
      const balance = async () => ((await (await api('/balance')).json()) as { available_cents: number }).available_cents;
      const client = newHome();
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
      // $100 a row, eight rows: $800 of the $1,000 balance, so the check before buying passes.
      const csv = file(client, 'f.csv', `kg,reference\n${Array.from({ length: 8 }, (_, i) => `2500,row-${i + 1}`).join('\n')}\n`);
      const batch = carbon(['buy', '--from-csv', csv], { home: client, env });
      // Once the batch has bought its first row, another purchase spends $750 of what is left.
      while ((await balance()) === 100_000) await new Promise((resolve) => setTimeout(resolve, 10));
      const spent = await api('/offsets', { method: 'POST', headers: { 'idempotency-key': 'elsewhere' }, body: '{"amount_cents":75000}' });
      expect(spent.status).toBe(201);
      const r = await batch;
      expect(r.exitCode).toBe(10);
      const bought = results(r.stdout).filter((x) => x.status === 'processing').length;
      const left = (8 - bought) * 10_000;
      const now = await balance();
      expect(now).toBeLessThan(10_000);
      const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
      // Before: the balance at the check less what this run charged ($700 or so), which covers the rows left.
      expect(r.stderr).toContain(`(the rows left cost ${dollars(left)}; the balance is ${dollars(now)}), then run the same command again`);
    } finally {
      await server.stop();
    }
  });

  test('a row is bought once, however the file is saved again: line endings, BOM, quoting, blank lines, order, rows around it', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '1000'], { home });
    // Two identical rows without a reference are two purchases (the first and second "5 kg, no reference").
    const first = await ok(
      ['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n500,flight-1\n1000,flight-2\n5,\n5,\n250,flight-3\n')],
      {
        home,
      },
    );
    expect(results(first.stdout).map((r) => r.replayed)).toEqual(Array(5).fill('false'));
    const bought = new Map(results(first.stdout).map((r) => [`${r.reference}:${r.kg}`, r.offset_id]));
    // Saved again: CRLF, a BOM, quotes, blank lines, another column, reordered, flight-3 gone, a row on top.
    const saved = file(
      home,
      'b.csv',
      '\ufeff"Reference","KG","Notes"\r\n"new-on-top","7",""\r\n\r\n"flight-2","1,000","moved"\r\n,5,\r\n"flight-1",500,x\r\n\r\n,"5",\r\n',
    );
    const again = await carbon(['buy', '--from-csv', saved], { home });
    expect(again.exitCode).toBe(0);
    const rows = results(again.stdout);
    expect(rows.map((r) => [r.reference, r.replayed])).toEqual([
      ['new-on-top', 'false'],
      ['flight-2', 'true'],
      ['', 'true'],
      ['flight-1', 'true'],
      ['', 'true'],
    ]);
    expect(rows[1]!.offset_id).toBe(bought.get('flight-2:1000'));
    expect(rows[3]!.offset_id).toBe(bought.get('flight-1:500'));
    expect(await offsetIds(home)).toHaveLength(6);
    // A third identical row is a third purchase.
    const third = await ok(['buy', '--from-csv', file(home, 'c.csv', 'kg\n5\n5\n5\n')], { home });
    expect(results(third.stdout).map((r) => r.replayed)).toEqual(['true', 'true', 'false']);
    expect(await offsetIds(home)).toHaveLength(7);
  });

  test('with --batch-id, a row inserted at the top buys only itself; another batch id is another batch', async () => {
    const home = newHome();
    await ok(['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n5,a\n6,b\n'), '--batch-id', 'q3'], { home });
    const grown = await ok(['buy', '--from-csv', file(home, 'b.csv', 'kg,reference,extra\n7,c,3\n5,a,1\n6,b,2\n'), '--batch-id', 'q3'], {
      home,
    });
    expect(results(grown.stdout).map((r) => [r.reference, r.replayed])).toEqual([
      ['c', 'false'],
      ['a', 'true'],
      ['b', 'true'],
    ]);
    expect(await offsetIds(home)).toHaveLength(3);
    const q4 = await ok(['buy', '--from-csv', join(home, 'a.csv'), '--batch-id', 'q4'], { home });
    expect(results(q4.stdout).map((r) => r.replayed)).toEqual(['false', 'false']);
    expect(await offsetIds(home)).toHaveLength(5);
    expect((await carbon(['buy', '--from-csv', join(home, 'a.csv'), '--batch-id', 'no spaces'], { home })).exitCode).toBe(2);
  });

  test("a row's key has the form the README gives, and the docs name no version of carbon that made others", async () => {
    const home = newHome();
    const bought = await ok(['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n5,a\n6,\n'), '--batch-id', 'q3'], { home });
    const keys = results(bought.stdout).map((r) => r.idempotency_key);
    expect(keys).toEqual([expect.stringMatching(/^csv:q3:[\w-]+$/), expect.stringMatching(/^csv:q3:[\w-]+$/)]);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('`csv:<batch id>:…`');
    // Every build so far is this version: a doc saying that it made other keys contradicts `carbon --version`.
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const doc of [readme, readFileSync(join(ROOT, 'docs/reliability.md'), 'utf8')]) expect(doc).not.toContain(`carbon ${version}`);
  });

  test('a row whose quantity changed after it was bought is not bought again: its result says what it was bought as (exit 10)', async () => {
    const home = newHome();
    const first = await ok(['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n500,flight-1\n800,flight-2\n')], { home });
    const [was] = results(first.stdout);
    // Placed before the next run (3 s of the model's clock): a replay answers the offset as it is
    // now, so without this it would depend on how much real time passed between the two runs.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const edited = file(home, 'b.csv', 'kg,reference\n600,flight-1\n800,flight-2\n');
    const changed = await carbon(['buy', '--from-csv', edited], { home });
    expect(changed.exitCode).toBe(10);
    const [row, same] = results(changed.stdout);
    expect(row).toMatchObject({
      status: 'changed',
      offset_id: was!.offset_id,
      kg: '500',
      amount_cents: '2000',
      error_code: 'row_changed',
      error_message: `it was bought before as 500 kg for $20.00 (${was!.offset_id}); the row now asks 600 kg: nothing was bought now (--rebuy-changed buys it as it is now)`,
    });
    expect(same).toMatchObject({ status: 'placed', replayed: 'true' });
    expect(changed.stderr).toMatch(
      /^error: Batch incomplete: 1 of 2 rows bought .*1 changed since bought, not bought again\. Add --rebuy-changed/m,
    );
    expect(await offsetIds(home)).toHaveLength(2);
    // Asked for: bought as it is now, once.
    const rebought = await carbon(['buy', '--from-csv', edited, '--rebuy-changed'], { home });
    expect(rebought.exitCode).toBe(0);
    expect(results(rebought.stdout)[0]).toMatchObject({ status: 'processing', kg: '600', replayed: 'false' });
    const again = await carbon(['buy', '--from-csv', edited, '--rebuy-changed'], { home });
    expect(results(again.stdout).map((r) => r.replayed)).toEqual(['true', 'true']);
    expect(await offsetIds(home)).toHaveLength(3);
  });

  test('rows that share a reference, sorted or with one cut off, come back replayed; a real change among them is still caught', async () => {
    const home = newHome();
    // A team's flights under its name, then the file sorted by kg.
    await ok(['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n1200,ops\n800,ops\n300,ops\n50,dev\n')], { home });
    // Placed (3 s of the model's clock): the replays below answer each offset as it is now.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const sorted = file(home, 'b.csv', 'kg,reference\n50,dev\n300,ops\n800,ops\n1200,ops\n');
    const again = await carbon(['buy', '--from-csv', sorted], { home });
    expect([again.exitCode, again.stderr]).toEqual([
      0,
      '✓ 4 of 4 rows bought (2,350 kg for $94.00, test mode, sandbox: not a real purchase; 4 by an earlier run, not charged again).\n',
    ]);
    expect(results(again.stdout).map((r) => `${r.reference}:${r.kg}:${r.status}:${r.replayed}`)).toEqual([
      'dev:50:placed:true',
      'ops:300:placed:true',
      'ops:800:placed:true',
      'ops:1200:placed:true',
    ]);
    // The row of a reference cut off by an earlier run is bought once, wherever sorting put it.
    await ok(['buy', '--from-csv', file(home, 'c.csv', 'kg,reference\n5,qa\n'), '--batch-id', 'cut'], { home });
    const grown = await carbon(['buy', '--from-csv', file(home, 'd.csv', 'kg,reference\n9,qa\n5,qa\n'), '--batch-id', 'cut'], { home });
    expect(grown.exitCode).toBe(0);
    expect(results(grown.stdout).map((r) => `${r.kg}:${r.replayed}`)).toEqual(['9:false', '5:true']);
    expect(await offsetIds(home)).toHaveLength(6);
    // One of them edited (300 → 400): that row is caught as changed, the others replayed, nothing bought.
    const edited = await carbon(['buy', '--from-csv', file(home, 'e.csv', 'kg,reference\n1200,ops\n400,ops\n800,ops\n50,dev\n')], {
      home,
    });
    expect(edited.exitCode).toBe(10);
    expect(results(edited.stdout).map((r) => `${r.reference}:${r.status}:${r.replayed}`)).toEqual([
      'ops:placed:true',
      'ops:changed:false',
      'ops:placed:true',
      'dev:placed:true',
    ]);
    expect(await offsetIds(home)).toHaveLength(6);
  });

  test('a row of a shared reference edited while another is added: the edited row is caught as changed, the new one bought once', async () => {
    const home = newHome();
    await ok(['buy', '--from-csv', file(home, 'a.csv', 'reference,kg\nteam,10\n')], { home });
    // Row 1 edited (10 → 15), row 2 added: the first row's key bought 10 kg, which no row asks now.
    const grown = await carbon(['buy', '--from-csv', file(home, 'b.csv', 'reference,kg\nteam,15\nteam,20\n')], { home });
    expect(grown.exitCode).toBe(10);
    const [edited, added] = results(grown.stdout);
    expect([edited!.status, edited!.kg, added!.status, added!.kg, added!.replayed]).toEqual(['changed', '10', 'processing', '20', 'false']);
    expect(edited!.error_message).toMatch(
      /^it was bought before as 10 kg for \$0\.40 \(off_\w+\); the row now asks 15 kg: nothing was bought now/,
    );
    const bought = await json<{ data: Array<{ kg: number }> }>(['list', '--reference', 'team'], { home });
    expect(bought.data.map((o) => o.kg).sort((a, b) => a - b)).toEqual([10, 20]);
    // Run again: the same; with --rebuy-changed, the edited row is bought as it is now, once.
    expect((await carbon(['buy', '--from-csv', file(home, 'b.csv', 'reference,kg\nteam,15\nteam,20\n')], { home })).exitCode).toBe(10);
    await ok(['buy', '--from-csv', file(home, 'b.csv', 'reference,kg\nteam,15\nteam,20\n'), '--rebuy-changed'], { home });
    const after = await json<{ data: Array<{ kg: number }> }>(['list', '--reference', 'team'], { home });
    expect(after.data.map((o) => o.kg).sort((a, b) => a - b)).toEqual([10, 15, 20]);
  });

  test.each<[string, string, string, string[], number[]]>([
    // Rows of the same quantity: the second 5 edited to 7, a row added: its key's 5 is the first row's twin, matched already.
    [
      'equal quantities',
      'team,5\nteam,5\nteam,3\n',
      'team,5\nteam,7\nteam,3\nteam,2\n',
      ['replayed', 'changed 5', 'replayed', 'bought'],
      [2, 3, 5, 5],
    ],
    // The first row edited to what the second asks, a row added.
    [
      'an edit to a quantity another row asks',
      'team,5\nteam,7\n',
      'team,7\nteam,7\nteam,1\n',
      ['changed 5', 'replayed', 'bought'],
      [1, 5, 7],
    ],
  ])('%s: the edited row is caught as changed, the added one bought, nothing twice', async (_, first, second, statuses, kgs) => {
    const home = newHome();
    await ok(['buy', '--from-csv', file(home, 'a.csv', `reference,kg\n${first}`)], { home });
    const r = await carbon(['buy', '--from-csv', file(home, 'b.csv', `reference,kg\n${second}`)], { home });
    expect(r.exitCode).toBe(10);
    const said = results(r.stdout).map((x) =>
      x.status === 'changed'
        ? `changed ${/bought before as (\d+) kg/.exec(x.error_message ?? '')?.[1]}`
        : x.replayed === 'true'
          ? 'replayed'
          : 'bought',
    );
    expect(said).toEqual(statuses);
    const bought = await json<{ data: Array<{ kg: number }> }>(['list', '--reference', 'team'], { home });
    expect(bought.data.map((o) => o.kg).sort((a, b) => a - b)).toEqual(kgs);
  });

  test('a changed row never cites an offset bought in the same run as what it was bought as', async () => {
    const home = newHome();
    await ok(['buy', '--from-csv', file(home, 'a.csv', 'reference,kg\nteam,4\nteam,4\n')], { home });
    const r = await carbon(['buy', '--from-csv', file(home, 'b.csv', 'reference,kg\nteam,3\nteam,4\nteam,2\n')], { home });
    const [first, , last] = results(r.stdout);
    expect([first!.status, first!.replayed]).toEqual(['processing', 'false']);
    expect(last!.status).toBe('changed');
    expect(last!.offset_id).not.toBe(first!.offset_id);
    expect(last!.error_message).not.toContain(first!.offset_id);
  });

  test("the reference's offsets of another batch do not make an edited row look sorted", async () => {
    const home = newHome();
    await ok(['buy', '--from-csv', file(home, 'a.csv', 'reference,kg\nteam,15\n'), '--batch-id', '2026-11'], { home });
    await ok(['buy', '--from-csv', file(home, 'b.csv', 'reference,kg\nteam,10\n'), '--batch-id', '2026-12'], { home });
    const r = await carbon(['buy', '--from-csv', file(home, 'c.csv', 'reference,kg\nteam,15\nteam,20\n'), '--batch-id', '2026-12'], {
      home,
    });
    expect(r.exitCode).toBe(10);
    const [edited, added] = results(r.stdout);
    expect([edited!.status, edited!.kg, added!.status, added!.kg, added!.replayed]).toEqual(['changed', '10', 'processing', '20', 'false']);
    const bought = await json<{ data: Array<{ kg: number }> }>(['list', '--reference', 'team'], { home });
    expect(bought.data.map((o) => o.kg).sort((a, b) => a - b)).toEqual([10, 15, 20]);
  });

  test('semicolon and tab files read numbers in their locale; cost, price and total headers are dollars; a number read two ways is refused', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '10000'], { home });
    const semi = await carbon(['buy', '--from-csv', '-', '--dry-run'], {
      home,
      input: 'Reference;Kg;Cost (USD)\nx;1.200;\ny;;1.234,50\nz;;1 234,50\nw;;12,5\n',
    });
    expect(semi.exitCode).toBe(0);
    expect(results(semi.stdout).map((r) => [r.reference, r.kg, r.amount_cents])).toEqual([
      ['x', '1200', '4800'],
      ['y', '30862', '123448'],
      ['z', '30862', '123448'],
      ['w', '312', '1248'],
    ]);
    for (const header of ['price', 'Total $', 'cost_usd']) {
      const tab = await carbon(['buy', '--from-csv', '-', '--dry-run'], { home, input: `${header}\treference\n1.000,00\tp\n` });
      expect(results(tab.stdout).map((r) => r.amount_cents)).toEqual(['100000']);
    }
    const twoWays = await carbon(['buy', '--from-csv', '-'], { home, input: 'reference;kg\nx;1,200\n' });
    expect(twoWays.exitCode).toBe(2);
    expect(twoWays.stderr).toContain('row 1 (line 2): kg "1,200" could be read two ways: 1.2 (a decimal comma');
    expect(twoWays.stderr).toContain('or 1200 (a comma grouping thousands)');
    const euros = await carbon(['buy', '--from-csv', '-'], { home, input: 'reference,Cost (EUR)\nx,5\n' });
    expect(euros.exitCode).toBe(2);
    expect(euros.stderr).toContain('The CSV\'s column "Cost (EUR)" is in EUR; carbon buys in US dollars.');
    expect(await offsetIds(home)).toEqual([]);
  });

  test('a UTF-16 file is recognised and refused with the right advice', async () => {
    const home = newHome();
    for (const bytes of [
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('kg\treference\n5\tx\n', 'utf16le')]),
      Buffer.from('kg,reference\n5,x\n', 'utf16le'),
    ]) {
      const path = join(home, 'unicode.txt');
      writeFileSync(path, bytes);
      const r = await carbon(['buy', '--from-csv', path], { home });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('The CSV is UTF-16 text');
      expect(r.stderr).toContain('iconv -f UTF-16 -t UTF-8');
      expect(r.stderr).not.toContain('WINDOWS-1252');
    }
    expect(await offsetIds(home)).toEqual([]);
  });

  test('a file that is not text (a workbook, an archive, a program) is named as what it is, not taken for UTF-16 or Windows-1252', async () => {
    const home = newHome();
    const zip = Buffer.concat([
      Buffer.from('PK\x03\x04\x14\x00\x00\x00\x00\x00', 'latin1'),
      Buffer.alloc(40),
      Buffer.from('[Content_Types].xml'),
    ]);
    const elf = Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01', 'latin1'), Buffer.alloc(400)]);
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => (i % 5 === 0 ? 0 : 0x80 + (i % 100))));
    for (const [bytes, said, hint] of [
      [zip, 'it is a zip archive, as an Excel (.xlsx) or OpenDocument (.ods) workbook is', 'save it as "CSV UTF-8"'],
      [
        Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]),
        'it is an Excel 97–2003 workbook (.xls)',
        'save it as "CSV UTF-8"',
      ],
      [gzipSync('kg\n5\n'), 'it is gzip-compressed', 'gunzip -c FILE | carbon buy --from-csv -'],
      [elf, 'it is a program (ELF)', 'Give carbon the CSV file itself.'],
      [Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(100)]), 'it is an SQLite database', 'sqlite3 -csv -header'],
      [binary, 'it holds binary data (zero bytes)', 'save it as "CSV UTF-8"'],
    ] as const) {
      const r = await carbon(['buy', '--from-csv', file(home, 'book.xlsx', bytes)], { home });
      expect([r.exitCode, r.stdout], said).toEqual([2, '']);
      expect(r.stderr.trimEnd().split('\n'), said).toEqual([
        expect.stringContaining(`error: The file is not text: ${said}. Nothing was bought. `),
      ]);
      expect(r.stderr, said).toContain(hint);
      expect(r.stderr, said).not.toMatch(/UTF-16|WINDOWS-1252/);
    }
    expect(await offsetIds(home)).toEqual([]);
  });

  // SIGTERM (a CI job that times out) stops it as Ctrl-C does, and the line names it.
  test.each([
    ['SIGINT', ''],
    ['SIGTERM', 'SIGTERM, '],
  ] as const)('%s while the batch is being checked: one line, nothing bought, exit 130', async (signal, named) => {
    const home = newHome();
    // The file comes on stdin and stays open: the batch is still being checked when the signal comes.
    // The copy carbon keeps of what it has read (in TMPDIR) says when the rows have been read.
    const child = execa(process.execPath, [BIN(), 'buy', '--from-csv', '-'], {
      env: baseEnv(home, { TMPDIR: home }),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
    });
    const text = 'kg,reference\n5,a\n6,b\n';
    child.stdin!.write(text);
    const copy = () => {
      const dir = readdirSync(home).find((d) => d.startsWith('carbon-batch-'));
      const path = dir === undefined ? '' : join(home, dir, 'batch.csv');
      return path !== '' && existsSync(path) ? readFileSync(path, 'utf8') : '';
    };
    while (copy() !== text) await new Promise((resolve) => setTimeout(resolve, 10));
    child.kill(signal);
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(r.stdout).toBe('');
    expect(String(r.stderr).trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^Interrupted while checking the batch \\(${named}[0-2] rows? read\\): nothing was bought\\.$`));
    expect(await offsetIds(home)).toEqual([]);
    // The copy is gone with the run.
    expect(readdirSync(home).filter((d) => d.startsWith('carbon-batch-'))).toEqual([]);
  });

  test.each([
    ['SIGINT', ''],
    ['SIGTERM', 'SIGTERM, '],
  ] as const)(
    '%s while a file read whole waits for its quotes: one line, nothing bought then or after, exit 130',
    async (signal, named) => {
      const home = newHome();
      // A file of three rows is read in one go; each quote takes 3 s (the sandbox's latency fault),
      // so the signal comes while the rows already read are being quoted. Before, the stop only
      // ended a read already over: the quotes went on, and the whole batch was bought (exit 0).
      await ok(['sandbox', 'faults', 'set', '--latency', '3000ms', '--route', 'POST /quotes'], { home });
      const csv = file(home, 'three.csv', 'reference,kg\nr1,1\nr2,2\nr3,3\n');
      const child = execa(process.execPath, [BIN(), 'buy', '--from-csv', csv], {
        env: baseEnv(home, { TMPDIR: home }),
        extendEnv: false,
        reject: false,
      });
      // The copy carbon keeps of what it has read (in TMPDIR) says when the file has been read whole.
      const copied = () => readdirSync(home).some((d) => d.startsWith('carbon-batch-') && existsSync(join(home, d, 'batch.csv')));
      while (!copied()) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill(signal);
      const r = await child;
      expect([r.exitCode, r.stdout]).toEqual([130, '']);
      expect(r.stderr).toMatch(new RegExp(`^Interrupted while checking the batch \\(${named}[0-3] rows? read\\): nothing was bought\\.$`));
      await ok(['sandbox', 'faults', 'off'], { home });
      expect(await offsetIds(home)).toEqual([]);
    },
  );

  test.each([
    ['SIGINT', 'Ctrl-C', ''],
    ['SIGTERM', 'SIGTERM', ' \\(SIGTERM\\)'],
  ] as const)('%s stops after the purchase under way (exit 130); running it again resumes', async (signal, name, named) => {
    const home = newHome();
    const server = await serve(home);
    // A gate in front of the server holds the answer to the third purchase until the signal is sent.
    let purchases = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => {};
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const target = new URL(server.url);
    const gate = createServer((req, res) => {
      const third = req.method === 'POST' && req.url === '/api/v1/offsets' && ++purchases === 3;
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        async (answer) => {
          if (third) {
            reached();
            await held;
          }
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        CARBON_BASE_URL: `http://127.0.0.1:${(gate.address() as AddressInfo).port}/api/v1`,
        CARBON_API_KEY: (await sandboxKeys(home)).test,
      };
      const csv = file(home, 'f.csv', `kg\n${Array(6).fill('1').join('\n')}\n`);
      const child = execa(process.execPath, [BIN(), 'buy', '--from-csv', csv], {
        env: baseEnv(home, env),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });
      await atGate;
      // The child handles the signal before the third answer arrives (its handler only sets a flag).
      await interruptWaiting(child.pid!, signal);
      release();
      const r = await child;
      expect(r.exitCode).toBe(130);
      const rows = results(String(r.stdout));
      expect(rows.map((row) => `${row.status}:${row.error_code}`)).toEqual([
        'processing:',
        'processing:',
        'processing:',
        'skipped:interrupted',
        'skipped:interrupted',
        'skipped:interrupted',
      ]);
      expect(rows.at(-1)!.error_message).toBe(`interrupted (${name})`);
      expect(String(r.stderr)).toMatch(
        new RegExp(`^Interrupted${named}: 3 of 6 rows bought .*3 skipped\\. Run the same command again to resume`, 'm'),
      );
      const resumed = await carbon(['buy', '--from-csv', csv, '--json'], { home, env });
      expect(resumed.exitCode).toBe(0);
      expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ rows: 6, replayed: 3, bought: 3 });
      expect(await offsetIds(home)).toHaveLength(6);
    } finally {
      release();
      gate.closeAllConnections();
      await new Promise((resolve) => gate.close(resolve));
      await server.stop();
    }
  });

  test('a batch cut short whose rows left fit the balance, but not the whole file, is resumed with --partial, as its line says', async () => {
    const home = newHome();
    const server = await serve(home);
    let proxy: FaultProxy | undefined;
    try {
      // $150 a row, $750 in all, from $1,000: the third purchase meets a 503, and $700 is left for the $450 of rows left.
      proxy = await startFaultProxy({
        target: server.url,
        plan: ['forward', 'forward', '503'],
        only: { method: 'POST', path: '/api/v1/offsets' },
      });
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: (await sandboxKeys(home)).test, CARBON_MAX_RETRIES: '0' };
      const csv = file(home, 'f.csv', `kg,reference\n${Array.from({ length: 5 }, (_, i) => `3750,site-${i + 1}`).join('\n')}\n`);
      const cut = await carbon(['buy', '--from-csv', csv], { home, env });
      expect(cut.exitCode).toBe(10);
      expect(cut.stderr).toMatch(
        /Run the same command again with --partial to resume \(batch default\): rows already bought are never bought twice; the balance left \(\$700\.00\) covers the rows left \(\$450\.00\), not the whole file \(\$750\.00\), which a run without --partial refuses\.$/m,
      );
      // As it says: without --partial the whole file is refused; with it, the rest is bought.
      expect((await carbon(['buy', '--from-csv', csv], { home, env })).exitCode).toBe(3);
      const resumed = await carbon(['buy', '--from-csv', csv, '--partial'], { home, env });
      expect(resumed.exitCode).toBe(0);
      expect(results(resumed.stdout).map((r) => r.replayed)).toEqual(['true', 'true', 'false', 'false', 'false']);
      expect(await offsetIds(home)).toHaveLength(5);
    } finally {
      await proxy?.close();
      await server.stop();
    }
  });

  test('a failed row among rows that share a reference stops the batch: sorted after it, no row is bought twice', async () => {
    const home = newHome();
    const server = await serve(home);
    let proxy: FaultProxy | undefined;
    try {
      // The second purchase is refused for its own reason (a 422, which would not stop a batch of other references).
      const refused = {
        status: 422,
        body: { error: { type: 'invalid_request_error', code: 'validation_error', message: 'Refused (fault proxy).' } },
      };
      proxy = await startFaultProxy({ target: server.url, plan: ['forward', refused], only: { method: 'POST', path: '/api/v1/offsets' } });
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: (await sandboxKeys(home)).test, CARBON_MAX_RETRIES: '0' };
      const first = await carbon(['buy', '--from-csv', file(home, 'a.csv', 'kg,reference\n100,ops\n200,ops\n300,ops\n')], { home, env });
      expect(first.exitCode).toBe(10);
      expect(results(first.stdout).map((r) => r.status)).toEqual(['processing', 'failed', 'skipped']);
      expect(first.stderr).toContain('the batch stopped at row 2: validation_error');
      // Sorted, then run again: before, 300 kg (bought under the third row's key, the second's left
      // unused) was bought again under the second's, and 200 kg was said to have changed.
      const again = await carbon(['buy', '--from-csv', file(home, 'b.csv', 'kg,reference\n300,ops\n200,ops\n100,ops\n')], { home, env });
      expect(again.exitCode).toBe(0);
      const bought = (await ok(['list', '--all', '--json'], { home, env })).stdout.trim().split('\n');
      expect(bought.map((line) => (JSON.parse(line) as { kg: number }).kg).sort((a, b) => a - b)).toEqual([100, 200, 300]);
    } finally {
      await proxy?.close();
      await server.stop();
    }
  });

  test('a 429 after retries, or a key that may not buy (403), stops the batch as a 5xx does: the rows say why, exit 10 (not 7 or 4)', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'kg,reference\n10,a\n20,b\n');
    const stopped = async (env: Record<string, string>, code: string, resume: string) => {
      const r = await carbon(['buy', '--from-csv', csv, '--max-retries', '1'], { home, env });
      expect([r.exitCode, r.stderr.trim().split('\n').length]).toEqual([10, 1]);
      expect(results(r.stdout).map((row) => `${row.status}:${row.error_code}`)).toEqual([`failed:${code}`, 'skipped:batch_stopped']);
      expect(r.stderr).toContain(`the batch stopped at row 1: ${code}`);
      expect(r.stderr).toMatch(new RegExp(`Run the same command again ${resume}to resume \\(batch `));
      // Refused every time: nothing can have been bought, and nothing says it may have been.
      expect(r.stderr).toContain('; 1 failed, 1 skipped');
      expect(r.stderr).not.toContain('may have been bought');
      expect(results(r.stdout)[0]!.error_message).not.toContain('may or may not');
    };
    // The same key would be refused again: the way on names another (or the account made active).
    const anotherKey = 'with a key that may buy \\(CARBON_API_KEY, --profile\\), or once the account is active, ';
    await stopped({ CARBON_API_KEY: (await sandboxKeys(home)).readOnly }, 'insufficient_permissions', anotherKey);
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', '429', '--retry-after', '0', '--route', 'POST /offsets'], {
      home,
    });
    await stopped({}, 'rate_limited', '');
    expect(await offsetIds(home)).toHaveLength(0);
  });

  test('a lost answer cuts the batch; running it again finds that purchase and buys each row once', async () => {
    const home = newHome();
    const server = await serve(home);
    let proxy: FaultProxy | undefined;
    try {
      // The second purchase is made by the server, but its answer never reaches the client.
      proxy = await startFaultProxy({ target: server.url, plan: ['forward', 'drop'], only: { method: 'POST', path: '/api/v1/offsets' } });
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: (await sandboxKeys(home)).test, CARBON_MAX_RETRIES: '0' };
      const csv = file(home, 'f.csv', 'kg\n10\n20\n30\n40\n');
      const cut = await carbon(['buy', '--from-csv', csv], { home, env });
      expect(cut.exitCode).toBe(10);
      expect(results(cut.stdout).map((r) => `${r.status}:${r.error_code}`)).toEqual([
        'processing:',
        'failed:connection_error',
        'skipped:batch_stopped',
        'skipped:batch_stopped',
      ]);
      // The row whose answer was lost says it may have been bought, and so does the line.
      expect(results(cut.stdout)[1]!.error_message).toMatch(
        /\. The purchase may or may not have been made: running the batch again replays it/,
      );
      expect(cut.stderr).toContain(
        '; 1 failed, 2 skipped (the batch stopped at row 2: connection_error). The failed row may have been bought all the same.',
      );
      const resumed = await carbon(['buy', '--from-csv', csv], { home, env });
      expect(resumed.exitCode).toBe(0);
      // Rows 1 and 2 were bought by the first run (row 2's answer was lost): replayed, not bought again.
      expect(results(resumed.stdout).map((r) => r.replayed)).toEqual(['true', 'true', 'false', 'false']);
      expect(await offsetIds(home)).toHaveLength(4);
    } finally {
      await proxy?.close();
      await server.stop();
    }
  });
  test('--json: the totals count the failed rows that may have been bought (maybe_bought), and the ledger shows they were', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', 'kg,reference\n10,a\n20,b\n30,c\n');
    // Every purchase is made, and its answer dropped (the local engine's faults, as a server's).
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', 'drop-after', '--route', 'POST /offsets', '--seed', '1'], {
      home,
    });
    const cut = await carbon(['buy', '--from-csv', csv, '--json', '--max-retries', '0'], { home });
    expect(cut.exitCode).toBe(10);
    const lines = cut.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ status: 'failed', error_code: 'connection_error' });
    expect(lines[0].error_message).toContain('The purchase may or may not have been made');
    expect(lines.at(-1)).toMatchObject({ bought: 0, failed: 1, maybe_bought: 1, skipped: 2, charged_cents: 0 });
    // It was: 10 kg, $0.40, taken from the balance.
    expect((await json(['balance'], { home })).available_cents).toBe(100_000 - 40);
    await ok(['sandbox', 'faults', 'off'], { home });
    const resumed = await carbon(['buy', '--from-csv', csv, '--json'], { home });
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ replayed: 1, bought: 2, failed: 0, maybe_bought: 0 });
  });

  // `| head` ends a listing quietly (exit 0); a batch it cuts off is not a success. Its results
  // (some 200 kB) cannot all go into a pipe whose reader has left, so the cut comes mid-batch.
  test('a reader that goes away (| head -1) stops the batch: the rest skipped, exit 10; running it again finishes it', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', `reference,kg\n${Array.from({ length: 600 }, (_, i) => `r${i}-${'x'.repeat(190)},1`).join('\n')}\n`);
    const cut = await pipeline(`carbon buy --from-csv ${csv} | head -1`, { home });
    expect(cut.exitCode).toBe(10);
    expect(cut.stdout).toBe(
      'row,status,offset_id,kg,amount_cents,reference,replayed,error_code,error_message,idempotency_key,environment\r\n',
    );
    expect(cut.stderr.trim().split('\n')).toHaveLength(1);
    expect(cut.stderr).toMatch(
      /^error: Batch incomplete: \d+ of 600 rows bought .*; \d+ skipped \(stdout was closed: the reader of the results went away\)\. Run the same command again to resume/,
    );
    const bought = (await offsetIds(home)).length;
    expect(bought).toBeLessThan(600);
    const resumed = await carbon(['buy', '--from-csv', csv, '--json'], { home });
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ rows: 600, replayed: bought, bought: 600 - bought });
    expect(await offsetIds(home)).toHaveLength(600);
  });

  // A pipe says its reader is gone only when written to: the row whose result met the closed pipe
  // was bought, and none after it. The ledger's write lock, held here, keeps the first purchase
  // waiting until the reader has read the header and closed its end.
  test('a reader gone before the first purchase: that row is bought, no row after it, exit 10', async () => {
    const home = newHome();
    await ok(['balance'], { home });
    const csv = file(home, 'f.csv', `kg\n${'1\n'.repeat(50)}`);
    const gone = join(home, 'reader-gone');
    const other = new DatabaseSync(ledgerPath(home));
    other.exec('BEGIN IMMEDIATE');
    let cut: Promise<Awaited<ReturnType<typeof pipeline>>>;
    try {
      cut = pipeline(`carbon buy --from-csv ${csv} | { read -r header; exec <&-; : > ${gone}; }`, {
        home,
        env: { CARBON_BUSY_TIMEOUT_MS: '60000' },
      });
      while (!existsSync(gone)) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    const run = await cut;
    expect(run.exitCode).toBe(10);
    expect(run.stderr).toMatch(/^error: Batch incomplete: 1 of 50 rows bought .*; 49 skipped \(stdout was closed/);
    expect(await offsetIds(home)).toHaveLength(1);
  });

  test('with --json too: a batch cut off by its reader exits 10, a dry run 3, though the totals line comes last', async () => {
    const home = newHome();
    const csv = file(home, 'f.csv', `reference,kg\n${Array.from({ length: 300 }, (_, i) => `r${i}-${'x'.repeat(190)},1`).join('\n')}\n`);
    const cut = await pipeline(`carbon buy --from-csv ${csv} --json | head -1`, { home });
    expect([cut.exitCode, JSON.parse(cut.stderr).error.code]).toEqual([10, 'batch_incomplete']);
    const big = file(home, 'big.csv', `reference,kg\n${Array.from({ length: 600 }, (_, i) => `b${i}-${'x'.repeat(190)},50`).join('\n')}\n`);
    for (let run = 0; run < 3; run++) {
      const short = await pipeline(`carbon buy --from-csv ${big} --dry-run --json | head -1`, { home });
      expect(short.exitCode, short.stderr).toBe(3);
    }
  });

  test('a dry run whose reader goes away (| head -1) still exits with its verdict: 3 when the balance falls short', async () => {
    const home = newHome();
    // 600 rows of 50 kg: $1,200 against the fresh $1,000, in some 200 kB of results.
    const csv = file(home, 'f.csv', `reference,kg\n${Array.from({ length: 600 }, (_, i) => `r${i}-${'x'.repeat(190)},50`).join('\n')}\n`);
    const short = await pipeline(`carbon buy --from-csv ${csv} --dry-run | head -1`, { home });
    expect(short.exitCode).toBe(3);
    expect(short.stderr).toMatch(
      /^error: Dry run: the test balance \(\$1,000\.00\) does not cover the batch .*Nothing was bought\. Top it up with `carbon sandbox topup 250`, or add --partial to buy the rows that fit, in order\.\n$/,
    );
    await ok(['sandbox', 'topup', '250'], { home });
    expect((await pipeline(`carbon buy --from-csv ${csv} --dry-run | head -1`, { home })).exitCode).toBe(0);
    expect(await offsetIds(home)).toEqual([]);
  });
});

describe('live mode', () => {
  test('without a terminal it needs --yes (exit 2, nothing bought); with --yes it buys', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const csv = file(home, 'f.csv', 'kg\n10\n');
    const refused = await carbon(['buy', '--from-csv', csv, '--live'], { home });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('A live batch needs --yes');
    expect((await ok(['list', '--live', '-q'], { home })).stdout).toBe('');
    const bought = await carbon(['buy', '--from-csv', csv, '--live', '--yes'], { home });
    expect(bought.exitCode).toBe(0);
    expect(results(bought.stdout)).toHaveLength(1);
  });
});

describe('on a terminal', () => {
  const csv = (home: string) => file(home, 'f.csv', 'kg,reference\n10,a\n20,b\n');

  test('asks once for a live batch, shows progress, then prints the results', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const r = await carbonTty(['buy', '--from-csv', csv(home), '--live'], { home, input: 'y\n' });
    expect(r.exitCode).toBe(0);
    const text = plain(r.output);
    expect(text.match(/Buy 2 rows, 30 kg for \$1\.20 from the sandbox's LIVE balance \(\$250\.00\)\? \[y\/N\]/g)).toHaveLength(1);
    expect(text).toContain('row,status,offset_id');
    // The live batch's line names its mode and the sandbox, as a single purchase's does: a screenshot of it is not read as real money.
    expect(text).toContain('✓ 2 of 2 rows bought (30 kg for $1.20, live mode, sandbox: not a real purchase).');
    expect((await ok(['list', '--live', '-q'], { home })).stdout.trim().split('\n')).toHaveLength(2);
  });

  test('a "no" buys nothing: stopped by the user (exit 130, one plain line)', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const r = await carbonTty(['buy', '--from-csv', csv(home), '--live'], { home, input: 'n\n' });
    expect(r.exitCode).toBe(130);
    expect(plain(r.output)).toMatch(/^Cancelled; nothing was bought\.\r?$/m);
    expect(r.output).not.toContain('error');
    expect((await ok(['list', '--live', '-q'], { home })).stdout).toBe('');
  });

  test(
    'a test batch draws a progress bar on the terminal',
    async () => {
      const home = newHome();
      const many = file(home, 'many.csv', `kg\n${Array(200).fill('1').join('\n')}\n`);
      const r = await carbonTty(['buy', '--from-csv', many], { home, timeout: limit(60_000) });
      expect(r.exitCode).toBe(0);
      expect(plain(r.output)).toMatch(/Buying [█░]{20} \d+\/200/);
      expect(plain(r.output)).toContain('✓ 200 of 200 rows bought');
    },
    limit(60_000),
  );

  test('rows typed at the terminal (--from-csv -) get no spinner over them while they are read: how to end them is said instead', async () => {
    const home = newHome();
    // Typed, then Ctrl-D at the start of a line: the terminal's end of input.
    const r = await carbonTty(['buy', '--from-csv', '-'], { home, input: 'kg\n5\n\u0004' });
    expect(r.exitCode).toBe(0);
    const output = plain(r.output);
    expect(output).toContain('Reading the rows from the terminal: type them (a header line first), then Ctrl-D on a line of its own.');
    // No bar while reading and checking (its frames redraw, and so erase, the line being typed);
    // the buying, once the rows are in, has its own.
    expect(output).not.toContain('Checking before buying');
    expect(output).toContain('✓ 1 of 1 rows bought (5 kg for $0.20, test mode, sandbox: not a real purchase).');
  });
});

describe('the local ledger failing under a batch', () => {
  test('a row the ledger does not answer fails (storage_error), the rest are skipped, exit 10, and running it again resumes', async () => {
    const home = newHome();
    const csv = join(home, 'rows.csv');
    writeFileSync(csv, 'kg,reference\n5,locked-1\n6,locked-2\n7,locked-3\n');
    await ok(['balance'], { home });
    // Another process holds the ledger's write lock past the busy timeout (200 ms here).
    const { spawn } = await import('node:child_process');
    const holder = spawn(
      process.execPath,
      [
        '-e',
        "const db = new (require('node:sqlite').DatabaseSync)(process.argv[1]); db.exec('BEGIN EXCLUSIVE'); process.stdout.write('locked\\n'); setInterval(() => {}, 1000);",
        join(home, 'data', 'ledger.db'),
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
      });
      const cut = await carbon(['buy', '--from-csv', csv], { home, env: { CARBON_BUSY_TIMEOUT_MS: '200' } });
      expect(cut.exitCode, cut.stderr).toBe(10);
      expect(results(cut.stdout).map((r) => `${r.status}:${r.error_code}`)).toEqual([
        'failed:storage_error',
        'skipped:batch_stopped',
        'skipped:batch_stopped',
      ]);
      // The ledger's own words and what to do first, as a single purchase says them, then how to resume.
      expect(cut.stderr).toMatch(
        /^error: Batch incomplete: 0 of 3 rows bought .*the batch stopped at row 1: the ledger \S+ledger\.db is locked by another process\)\. Wait for the other carbon process to finish and try again\. Run the same command again to resume/m,
      );
    } finally {
      holder.kill('SIGKILL');
    }
    const resumed = await carbon(['buy', '--from-csv', csv], { home });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(results(resumed.stdout).map((r) => r.status)).toEqual(['processing', 'processing', 'processing']);
  });
});
