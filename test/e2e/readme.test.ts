import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { BIN, baseEnv, homes, json, ok, serve } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * Every ```sh example of the README, run the way CI shells run scripts: `bash -eo pipefail`,
 * with `carbon` on the PATH (the built binary). The ids and addresses an example names (`off_…`,
 * `key_…`, port 4010, api.example.com) are filled in with real ones the test makes first; an
 * example that cannot run here says why in a `<!-- not run: … -->` line above it, and the list of
 * those is fixed below, so none is skipped silently.
 */

interface Block {
  /** The first line, to name it. */
  title: string;
  code: string;
  notRun: string | null;
}

function readmeBlocks(): Block[] {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    const code = lines.slice(i + 1, end).join('\n');
    const marker = /^<!-- not run: (.+) -->$/.exec(lines[i - 1] ?? '');
    blocks.push({ title: lines[i + 1]!, code, notRun: marker?.[1] ?? null });
    i = end;
  }
  return blocks;
}

const BLOCKS = readmeBlocks();
const newHome = homes();

/** A directory with a `carbon` that runs the built binary, for the examples' PATH. */
function shimDir(): string {
  const dir = join(newHome(), 'bin');
  mkdirSync(dir);
  writeFileSync(join(dir, 'carbon'), `#!/bin/sh\nexec "${process.execPath}" "${BIN()}" "$@"\n`);
  chmodSync(join(dir, 'carbon'), 0o755);
  return dir;
}

async function run(code: string, home: string, env: Record<string, string> = {}) {
  const r = await execa('bash', ['-eo', 'pipefail', '-c', code], {
    cwd: home,
    env: baseEnv(home, { PATH: `${shimDir()}:${process.env.PATH}`, SHELL: '/bin/bash', ...env }),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: limit(60_000),
  });
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
}

const block = (start: string): Block => {
  const found = BLOCKS.filter((b) => b.code.startsWith(start));
  expect(found, start).toHaveLength(1);
  return found[0]!;
};

describe("the README's shell examples", () => {
  test('each is run below, or says why not (and those are these, no more)', () => {
    expect(BLOCKS.filter((b) => b.notRun !== null).map((b) => b.title.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'npm ci',
      'carbon config',
      'carbon serve',
      'carbon sandbox',
      "export CARBON_DATABASE_URL='postgres://carbon:secret@db.internal:5432/carbon?schema=team_a'",
      'carbon completion',
      'npm run',
    ]);
    const run = BLOCKS.filter((b) => b.notRun === null).map((b) => b.title);
    expect(run).toHaveLength(RUN.length);
    for (const title of run)
      expect(
        RUN.some((start) => title.startsWith(start)),
        title,
      ).toBe(true);
  });

  test('the tour, with an offset id for `carbon show off_…`', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const id = (await json<{ id: string }>(['buy', '--kg', '5'], { home })).id;
    writeFileSync(join(home, 'flights.csv'), 'kg,reference\n1200,flight-LHR-JFK\n800,flight-JFK-SFO\n');
    const r = await run(block('carbon buy --kg 500  ').code.replace('off_…', id), home);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(id);
    expect(r.stdout).toMatch(/^available_cents\t/m);
    // The batch's results, then watch's events: every offset of the tour created and placed.
    expect(r.stdout).toMatch(/^2,processing,off_\w+,800,3200,flight-JFK-SFO,/m);
    const events = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{"id":"evt_'))
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.filter((e) => e.type === 'offset.created')).toHaveLength(5);
    expect(events.filter((e) => e.type === 'offset.placed')).toHaveLength(5);
    expect(readFileSync(join(home, 'report.html'), 'utf8')).toMatch(/^<!doctype html>[\s\S]*<svg role="img"/);
  });

  test("the tour's --from-csv line before flights.csv is made: refused as the README says, nothing bought", async () => {
    const home = newHome();
    const line = block('carbon buy --kg 500  ')
      .code.split('\n')
      .find((l) => l.startsWith('carbon buy --from-csv flights.csv'))!;
    const r = await run(line, home);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', 'error: There is no file flights.csv; nothing was bought.']);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('`There is no file flights.csv; nothing was bought.`, exit 2');
  });

  test('following offsets: carbon watch until they settle', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const r = await run(block('carbon buy --kg 500 --reference ci-42').code, home);
    expect(r.stderr).not.toMatch(/error|warning/);
    expect(r.exitCode).toBe(0);
    // After the clock's own lines: the offset created, then placed; then watch exits 0.
    expect(r.stdout).toMatch(/\noffset\.created (off_\w+)\noffset\.placed \1$/);
  });

  test('in pipes: jq, NDJSON, CSV and xargs', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5'], { home });
    const r = await run(block('carbon balance --json | jq').code, home);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\d+$/);
    expect(lines.filter((l) => /^"off_\w+"$/.test(l)).length).toBeGreaterThanOrEqual(1);
    expect(readFileSync(join(home, 'offsets.csv'), 'utf8')).toMatch(/^id,status,/);
  });

  test('buying from a spreadsheet: a dry run, the batch, and the same batch again', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const r = await run(block('cat > flights.csv').code, home);
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.exitCode).toBe(0);
    const results = readFileSync(join(home, 'results.csv'), 'utf8');
    expect(results).toMatch(/^row,status,offset_id/);
    const ids = [...results.matchAll(/off_\w+/g)].map((m) => m[0]);
    expect(ids).toHaveLength(2);
    // The dry run's rows (quoted, no offset), then the third line's: the same two offsets again.
    expect(r.stdout).toMatch(/^1,quoted,,1200,4800,flight-LHR-JFK,/m);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('off_'))).toEqual(ids);
    expect((await ok(['list', '--all', '-q'], { home })).stdout.trim().split('\n')).toHaveLength(2);
  });

  test('the report', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5', '--reference', 'ops-flight-12'], { home });
    const r = await run(block('carbon report ').code, home);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('| ');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('0');
    expect(readFileSync(join(home, 'by-team.csv'), 'utf8')).toContain('ops');
  });

  describe('the CI example, against a served sandbox for api.example.com', () => {
    async function ci(drain: boolean) {
      const serverHome = newHome();
      const server = await serve(serverHome);
      const key = (
        await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home: serverHome })
      ).find((k) => k.default === 'test')!.secret;
      if (drain) {
        const { available_cents } = await json<{ available_cents: number }>(['balance'], { home: serverHome });
        await ok(['buy', '--amount-cents', String(available_cents - 100)], { home: serverHome });
      }
      const runner = newHome();
      const code = block('export CARBON_HOME="$RUNNER_TEMP/carbon"').code.replace('https://api.example.com/api/v1', server.url);
      const r = await run(code, runner, { RUNNER_TEMP: runner, OFFSETS_TEST_KEY: key, CI_PIPELINE_ID: '42' });
      await server.stop();
      return r;
    }

    test('bought: the id on stdout, exit 0', { timeout: limit(60_000) }, async () => {
      const r = await ci(false);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toMatch(/^off_\w+$/);
    });

    test('balance too low (exit 3): the case arm runs under -e and says so, exit 1', { timeout: limit(60_000) }, async () => {
      const r = await ci(true);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('balance too low: top up on the developer page');
    });
  });

  test('the sandbox, every control, with ids from a model set up for it', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '3000', '--live'], { home });
    await ok(['sandbox', 'review-limit', '1000'], { home });
    const inReview = (await json<{ id: string }>(['buy', '--amount', '1500', '--live', '--yes'], { home })).id;
    // Above the review limit too, so it is still processing when the example fails it, however long
    // the commands before take (a live offset under the limit is placed 60 s on, and fail refuses it then).
    const toFail = (await json<{ id: string }>(['buy', '--amount', '1500', '--live', '--yes'], { home })).id;
    const key = (await json<{ id: string }>(['sandbox', 'keys', 'create'], { home })).id;
    const code = block('carbon sandbox status')
      .code.replace('review approve off_…', `review approve ${inReview}`)
      .replace('fail off_…', `fail ${toFail}`)
      .replace('key_…', key);
    const r = await run(code, home);
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
  });

  test('rehearsing failures: bought once under faults, the setting shown, then off', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const r = await run(block('carbon sandbox faults set --error-rate 0.3 --seed 7 --retry-after 0').code, home);
    expect([r.exitCode, r.stderr]).toEqual([0, expect.not.stringMatching(/^error/m)]);
    expect(r.stdout).toContain('faults.route\tPOST /offsets\n');
    expect(r.stdout).toContain('faults.mode\ttest\n');
    expect(await json<{ impact: { test: { offsets: number } }; faults: unknown }>(['sandbox', 'status'], { home })).toMatchObject({
      impact: { test: { offsets: 1 } },
      faults: null,
    });
  });

  test('what did my app send: carbon logs, filtered, as NDJSON, and one entry whole', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const r = await run(block('carbon buy --kg 5 >/dev/null').code, home);
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
    // The list (a pipe: tab-separated), the 4xx filter (the 404), no replays, then one entry whole.
    expect(r.stdout).toMatch(/\t404\tGET\t\/api\/v1\/offsets\/off_nothere\tresource_missing\t/);
    expect(r.stdout).toMatch(/\nid\treq_[A-Za-z0-9]{14}\n/);
    expect(r.stdout).toMatch(/\nresponse_body\t\{"error"/);
  });

  test('snapshots: saved, reset, loaded back, the Idempotency-Key replayed', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const r = await run(block('carbon sandbox topup 500 --live && carbon buy').code, home);
    expect([r.exitCode, r.stderr]).toEqual([0, expect.not.stringMatching(/^error/m)]);
    const lines = r.stdout.trim().split('\n');
    // The purchase's card id … then the replay's: the same offset.
    const id = /^id\t(off_\w+)$/m.exec(r.stdout)?.[1];
    expect(lines.at(-1)).toBe(id);
    expect(r.stdout).toContain('counts.offsets\t1\n');
    expect(await json<{ balances: { live: number } }>(['sandbox', 'status'], { home })).toMatchObject({ balances: { live: 50_000 } });
  });

  test('carbon serve from another terminal: the served port for 4010', { timeout: limit(60_000) }, async () => {
    const home = newHome();
    const server = await serve(home);
    const port = new URL(server.url).port;
    const r = await run(block("# The sandbox's test key").code.replaceAll('127.0.0.1:4010', `127.0.0.1:${port}`), home);
    await server.stop();
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('exit 6');
    expect(r.stdout).toMatch(/HTTP\/1\.1 200 OK/);
    expect(r.stderr).toMatch(/^error: .*Idempotency-Key/m);
  });
});

/** The first lines of the examples run above. */
const RUN = [
  'carbon buy --kg 500',
  'cat > flights.csv',
  'carbon buy --kg 500 --reference ci-42',
  'carbon balance --json | jq',
  'carbon report ',
  'export CARBON_HOME="$RUNNER_TEMP/carbon"',
  'carbon sandbox status',
  'carbon sandbox faults set',
  'carbon sandbox topup 500 --live && carbon buy',
  "# The sandbox's test key",
  'carbon buy --kg 5 >/dev/null',
];
