import { afterEach, describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, plain } from '../support/cli.js';
import { limit } from '../support/load.js';
import { type RepeatingServer, repeatingServer } from '../support/repeating-server.js';

/**
 * Issue 25, item 5: every paging loop stops, with an error naming the cursor, when a server
 * repeats a cursor or an offset, instead of printing the same offsets for ever.
 */
const newHome = homes();
let stub: RepeatingServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});
const env = (s: RepeatingServer) => ({ CARBON_BASE_URL: s.url, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` });

describe.each(['ignore', 'echo'] as const)('a server whose cursor does not advance (%s)', (mode) => {
  test.each(
    [
      ['list', '--all'],
      ['list', '--all', '--json'],
      ['list', '--limit', '250'],
      ['list', '--limit', '50', '--status', 'refunded'],
      ['report'],
      ['report', '--json'],
    ].map((args) => [args.join(' '), args] as const),
  )('carbon %s stops with exit 1, naming the cursor', async (_name, args) => {
    stub = await repeatingServer(mode);
    const r = await carbon(args, { home: newHome(), env: env(stub), timeout: limit(10_000) });
    expect(r.exitCode).toBe(1);
    // Two pages asked at most: the second one repeats the first.
    expect(stub.requests.length).toBeLessThanOrEqual(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    if (args.includes('--json')) {
      const error = JSON.parse(r.stderr).error;
      expect(error.code).toBe('paging_loop');
      expect(error.cursor).toBe('off_stub0003');
    } else {
      expect(r.stderr).toMatch(/^error: .*off_stub0003/);
      expect(r.stderr).toContain('starting_after=off_stub0003');
    }
    // What was printed before the repeat is printed once, never again; --all prints the first
    // page it read before the error, rather than dropping it.
    const ids = r.stdout.match(/off_stub\d+/g) ?? [];
    expect(new Set(ids).size).toBe(ids.length);
    if (args.includes('--all')) expect(ids).toEqual(['off_stub0001', 'off_stub0002', 'off_stub0003']);
  });
});

test('a page that repeats an offset within itself stops list --all at once', async () => {
  stub = await repeatingServer('dup');
  const r = await carbon(['list', '--all'], { home: newHome(), env: env(stub) });
  expect(r.exitCode).toBe(1);
  expect(r.stderr).toContain('repeated offset off_stub0001 on the first page');
  expect(stub.requests).toHaveLength(1);
});

test('a page of no offsets that says has_more stops every walk with exit 1: the list is unfinished, and there is no cursor to go on from', async () => {
  stub = await repeatingServer('empty');
  for (const args of [['list'], ['list', '--all'], ['list', '--limit', '250'], ['report']]) {
    const r = await carbon(args, { home: newHome(), env: env(stub) });
    expect([args, r.exitCode, r.stdout, r.stderr.trim().split('\n').length]).toEqual([args, 1, '', 1]);
    expect(r.stderr).toMatch(/^error: The server answered has_more with no offsets on the first page: there is no cursor to go on from/);
  }
  expect(stub.requests).toHaveLength(4);
});

test('completion offers no ids from a page that repeats itself, and asks once', async () => {
  stub = await repeatingServer('dup');
  const r = await carbon(['__complete', '--', 'show', ''], { home: newHome(), env: env(stub) });
  expect(r.exitCode).toBe(0);
  expect(r.stdout).not.toContain('off_stub');
  expect(stub.requests).toHaveLength(1);
});

test('a server that pages properly is walked to the end (the guard refuses nothing good)', async () => {
  const home = newHome();
  for (let i = 0; i < 3; i++) expect((await carbon(['buy', '--kg', '1'], { home })).exitCode).toBe(0);
  const r = await carbon(['list', '--all', '--page-size', '1', '-q'], { home });
  expect(r.exitCode).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(3);
});

test('on a terminal too: the table stops at the repeat, one error line', async () => {
  stub = await repeatingServer('ignore');
  const r = await carbonTty(['list', '--limit', '250'], { home: newHome(), env: env(stub) });
  expect(r.exitCode).toBe(1);
  expect(plain(r.output)).toMatch(/^error: The server repeated offset off_stub0001 on the page after cursor off_stub0003 .*$/m);
  expect(stub.requests.length).toBe(2);
});
