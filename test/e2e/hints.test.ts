import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  carbon,
  carbonTty,
  homes,
  json,
  leakedKeys,
  liveHomes,
  ok,
  pipeline,
  plain,
  type Served,
  sandboxKeys,
  serve,
} from '../support/cli.js';

/**
 * Hints that say what the user was doing and know the mode: a next-page hint that keeps the
 * filters, an empty filtered list that names them, and an offset of the other mode named with the
 * command that shows it.
 *
 * On the remote engine, `carbon show` and `carbon open` of an offset of the other mode: the API
 * answers 404 to this mode's key. When the profile also has the other mode's key, carbon asks the
 * API once more with it, and a hit adds the hint the local engine gives (the exit code and the
 * message stay); without that key, one request only. The client's CARBON_HOME is not the
 * server's, so a hint can only come from the API. Neither key is ever printed.
 */

const newHome = homes();
const liveHome = liveHomes(newHome);
let server: Served;
let keys: Awaited<ReturnType<typeof sandboxKeys>>;
let liveId: string;

beforeAll(async () => {
  const serverHome = newHome();
  server = await serve(serverHome);
  keys = await sandboxKeys(serverHome);
  await ok(['sandbox', 'topup', '250', '--live'], { home: serverHome });
  liveId = (await json<{ id: string }>(['buy', '--kg', '10', '--live', '--yes'], { home: serverHome })).id;
});

/** A client home whose default profile points at the server, with the given keys (as `carbon config set` writes them). */
function clientHome(profile: { test_key?: string; live_key?: string }): string {
  const home = newHome();
  const config = { profiles: { default: { base_url: server.url, ...profile } } };
  writeFileSync(join(home, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  return home;
}

/** The error line's start, as the API's 404 says it. */
const missing = (id: string): string => `error: No such offset: '${id}'. (param: id)`;

/** The --verbose lines of the HTTP requests made, as `METHOD path status`. */
const requests = (stderr: string): string[] =>
  [...stderr.matchAll(/^http: (\w+) http:\/\/127\.0\.0\.1:\d+(\S+) (\d+) /gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);

describe('the remote engine: an offset of the other mode', () => {
  test("found with the profile's other key: 404 and exit 5 as before, with the command that shows it", async () => {
    const home = clientHome({ test_key: keys.test, live_key: keys.live });
    const shown = await carbon(['show', liveId], { home });
    expect(shown).toEqual({
      stdout: '',
      stderr: `${missing(liveId)} It is a live offset: see it with \`carbon show ${liveId} --live\`.\n`,
      exitCode: 5,
    });
    const opened = await carbon(['open', liveId, '--print'], { home });
    expect(opened).toEqual({
      stdout: '',
      stderr: `${missing(liveId)} It is a live offset: see it with \`carbon open ${liveId} --print --live\`.\n`,
      exitCode: 5,
    });
    // Two requests, the second with the live key; neither key is printed.
    const verbose = await carbon(['show', liveId, '--verbose'], { home });
    expect(verbose.exitCode).toBe(5);
    expect(requests(verbose.stderr)).toEqual([`GET /api/v1/offsets/${liveId} 404`, `GET /api/v1/offsets/${liveId} 200`]);
    expect(verbose.stderr).toContain('It is a live offset');
    expect(leakedKeys(shown.stderr + opened.stderr + verbose.stderr, [keys.test, keys.live])).toEqual([]);
    // As printed, it runs.
    expect((await json<{ id: string }>(['show', liveId, '--live'], { home })).id).toBe(liveId);
  });

  test('a key from CARBON_API_KEY sets the mode: the hint names the key to use, not a flag', async () => {
    const home = clientHome({ live_key: keys.live });
    const shown = await carbon(['show', liveId], { home, env: { CARBON_API_KEY: keys.test } });
    expect(shown).toEqual({
      stdout: '',
      stderr: `${missing(liveId)} It is a live offset: use a live key to see it.\n`,
      exitCode: 5,
    });
  });

  test('found nowhere: no hint, after asking with both keys', async () => {
    const home = clientHome({ test_key: keys.test, live_key: keys.live });
    const r = await carbon(['show', 'off_nowhere', '--verbose'], { home });
    expect([r.stdout, r.exitCode]).toEqual(['', 5]);
    expect(r.stderr).toMatch(/\nerror: No such offset: 'off_nowhere'\. \(param: id\)\n$/);
    expect(requests(r.stderr)).toEqual(['GET /api/v1/offsets/off_nowhere 404', 'GET /api/v1/offsets/off_nowhere 404']);
    const quiet = await carbon(['show', 'off_nowhere'], { home });
    expect(quiet).toEqual({ stdout: '', stderr: `${missing('off_nowhere')}\n`, exitCode: 5 });
  });

  test('no key of the other mode configured: no hint, one request only', async () => {
    const home = clientHome({ test_key: keys.test });
    const r = await carbon(['show', liveId, '--verbose'], { home });
    expect([r.stdout, r.exitCode]).toEqual(['', 5]);
    expect(r.stderr).toMatch(new RegExp(`\\nerror: No such offset: '${liveId}'\\. \\(param: id\\)\\n$`));
    expect(requests(r.stderr)).toEqual([`GET /api/v1/offsets/${liveId} 404`]);
    expect(leakedKeys(r.stderr, [keys.test, keys.live])).toEqual([]);
  });
});

describe('hints and empty lists say what the user was doing', () => {
  test('the next-page hint keeps --reference, --limit and --live; an empty filtered list says what was filtered', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    for (let i = 0; i < 3; i++) await ok(['buy', '--kg', '1', '--live', '--yes', '--reference', 'team trip'], { home });
    const page = await carbonTty(['list', '--live', '--reference', 'team trip', '--limit', '2'], { home });
    const hint = /More offsets: (.*?)(?: {2}|\n)\(or --all\)/.exec(plain(page.output))?.[1];
    expect(hint).toMatch(/^carbon list --live --reference 'team trip' --limit 2 --starting-after off_\w+$/);
    // The hint, run as printed (its words as a shell would split them), gives the rest.
    const words = hint!
      .replace(/^carbon /, '')
      .match(/'[^']*'|\S+/g)!
      .map((w) => w.replace(/^'|'$/g, ''));
    expect((await json<{ data: unknown[]; has_more: boolean }>(words, { home })).data).toHaveLength(1);
    // On a narrow terminal the hint never splits the id: it goes on with ` \`, and runs as printed.
    const narrow = plain((await carbonTty(['list', '--live', '--reference', 'team trip', '--limit', '2'], { home, columns: 60 })).output);
    const printed = narrow.slice(narrow.indexOf('More offsets: ') + 'More offsets: '.length).trimEnd();
    for (const line of printed.split('\n')) expect(line.length, line).toBeLessThanOrEqual(60);
    expect(printed).toMatch(/ \\\n {2}(?:\S.* )?--starting-after off_\w+(?: {2}|\n)\(or --all\)$/);
    const command = printed.replace(/\s+\(or --all\)$/, '');
    const rest = await pipeline(`${command} --json`, { home });
    expect((JSON.parse(rest.stdout) as { data: unknown[] }).data).toHaveLength(1);
    const empty = await carbonTty(['list', '--reference', 'nowhere'], { home });
    expect(empty.output).toContain('No test offsets with reference "nowhere".');
  });
});

describe('a printed command never repeats --api-key', () => {
  test('the next page and a wait: without the key, with the mode it chose (--live for a live key)', async () => {
    const home = await liveHome();
    for (let i = 0; i < 2; i++) await ok(['buy', '--kg', '1', '--live', '--yes'], { home });
    const { live } = await sandboxKeys(home);
    for (const given of [['--api-key', live], [`--api-key=${live}`]]) {
      const page = await carbonTty(['list', ...given, '--limit', '1'], { home });
      expect(leakedKeys(page.output, [live])).toEqual([]);
      const hint = /More offsets: (.*?)(?: {2}|\n)\(or --all\)/.exec(plain(page.output))?.[1];
      expect(hint).toMatch(/^carbon list --limit 1 --live --starting-after off_\w+$/);
      // Run as printed, it goes on in live mode.
      expect((await json<{ data: Array<{ livemode: boolean }> }>([...hint!.split(' ').slice(1), '--json'], { home })).data).toEqual([
        expect.objectContaining({ livemode: true }),
      ]);
    }
    // A key typed into a reference: the next-page hint masks it, as the table's row does.
    await ok(['buy', '--kg', '1', '--live', '--yes', '--reference', `deploy ${live}`], { home });
    await ok(['buy', '--kg', '1', '--live', '--yes', '--reference', `deploy ${live}`], { home });
    const referenced = await carbonTty(['list', '--live', '--reference', `deploy ${live}`, '--limit', '1'], { home });
    expect(leakedKeys(referenced.output, [live])).toEqual([]);
    expect(plain(referenced.output)).toMatch(/More offsets: carbon list --live --reference 'deploy ck_live_…\w{4}' --limit 1/);
    // Said back as a filter (nothing matched; watch's first line): masked too.
    const none = await carbonTty(['list', '--live', '--reference', `deploy ${live}`, '--status', 'refunded'], { home });
    expect(leakedKeys(none.output, [live])).toEqual([]);
    expect(plain(none.output)).toMatch(/No live offsets with reference "deploy ck_live_…\w{4}" and with status refunded\./);
    const watched = await carbonTty(['watch', '--live', '--reference', `deploy ${live}`, '--until-settled', '--timeout', '1'], { home });
    expect(leakedKeys(watched.output, [live])).toEqual([]);
    expect(plain(watched.output)).toContain('Watching live offsets with reference "deploy ck_live_…');
    // A wait that ends before a live offset is placed: its follow-up command is in live mode too.
    const waited = await carbonTty(['buy', '--kg', '1', '--yes', '--api-key', live, '--wait', '--timeout', '1'], { home });
    expect(waited.exitCode).toBe(8);
    expect(leakedKeys(waited.output, [live])).toEqual([]);
    expect(plain(waited.output)).toContain('`carbon sandbox clock advance 1m --live` places it at once.');
  });
});

describe('hints that know the mode', () => {
  test('show and open of an offset of the other mode: 404, and the command that shows it', async () => {
    const home = await liveHome();
    const live = await json<{ id: string }>(['buy', '--kg', '10', '--live', '--yes'], { home });
    const shown = await carbon(['show', live.id], { home });
    expect(shown.exitCode).toBe(5);
    expect(shown.stderr).toBe(
      `error: No such offset: '${live.id}'. (param: id) It is a live offset: see it with \`carbon show ${live.id} --live\`.\n`,
    );
    const opened = await carbon(['open', live.id], { home });
    expect([opened.exitCode, opened.stderr]).toEqual([
      5,
      `error: No such offset: '${live.id}'. (param: id) It is a live offset: see it with \`carbon open ${live.id} --live\`.\n`,
    ]);
    // And the other way round; --json keeps the API's envelope, nothing added.
    const test_ = await json<{ id: string }>(['buy', '--kg', '1'], { home });
    expect((await carbon(['show', test_.id, '--live', '--wait'], { home })).stderr).toContain(
      `It is a test offset: see it with \`carbon show ${test_.id} --wait --test\`.`,
    );
    const asJson = await carbon(['show', live.id, '--json'], { home });
    expect(JSON.parse(asJson.stderr).error).toEqual({
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: `No such offset: '${live.id}'.`,
      param: 'id',
    });
    // An id that is nowhere gets no hint.
    expect((await carbon(['show', 'off_nowhere'], { home })).stderr).toBe("error: No such offset: 'off_nowhere'. (param: id)\n");
  });

  test('the wait-timeout message keeps --live and the profile', async () => {
    const home = await liveHome();
    await ok(['config', 'set', '--profile', 'team', 'mode', 'test'], { home });
    const r = await carbon(['buy', '--kg', '10', '--live', '--yes', '--wait', '--timeout', '1', '--profile', 'team'], { home });
    expect(r.exitCode).toBe(8);
    const id = /off_\w+/.exec(r.stdout)![0];
    expect(r.stderr).toContain(`Follow it with \`carbon show ${id} --wait --live --profile team\`.`);
    // As printed, it runs: the same offset, in the same mode and profile.
    expect((await carbon(['show', id, '--wait', '--live', '--profile', 'team', '--timeout', '1'], { home })).exitCode).toBe(8);
  });

  test('a live purchase short of balance: the live top-up, in dollars only', async () => {
    const home = await liveHome();
    const r = await carbon(['buy', '--kg', '10000', '--live', '--yes'], { home });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(
      'error: The live balance ($250.00) does not cover this purchase ($400.00). Top it up with `carbon sandbox topup 250 --live`.\n',
    );
    expect(r.stderr).not.toMatch(/cents/);
    const test_ = await carbon(['buy', '--kg', '1000000'], { home });
    expect(test_.stderr).toBe(
      'error: The test balance ($1,000.00) does not cover this purchase ($40,000.00). Top it up with `carbon sandbox topup 39000`.\n',
    );
  });
});
