import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, ok, plain, serve } from '../support/cli.js';

/**
 * What a new user tripped on, round three: hints that know the mode, live purchases that cannot
 * happen by accident, a purchase held for review said so before and after, a live wait on the
 * local model that says how it ends, help that starts with the command's own flags.
 */

const newHome = homes();
const TTY = { FORCE_COLOR: undefined };

/** A home with $250 of live balance. */
async function liveHome(): Promise<string> {
  const home = newHome();
  await ok(['sandbox', 'topup', '250', '--live'], { home });
  return home;
}

describe('hints that know the mode', () => {
  test('show and open of an offset of the other mode: 404, and the command that shows it', async () => {
    const home = await liveHome();
    const live = await json<{ id: string }>(['buy', '--kg', '10', '--live', '--yes'], { home });
    const shown = await carbon(['show', live.id], { home });
    expect(shown.exitCode).toBe(5);
    expect(shown.stderr).toBe(`error: No such offset: '${live.id}'. (param: id) It is a live offset: see it with \`carbon show ${live.id} --live\`.\n`);
    const opened = await carbon(['open', live.id], { home });
    expect([opened.exitCode, opened.stderr]).toEqual([5, `error: No such offset: '${live.id}'. (param: id) It is a live offset: see it with \`carbon open ${live.id} --live\`.\n`]);
    // And the other way round; --json keeps the API's envelope, nothing added.
    const test_ = await json<{ id: string }>(['buy', '--kg', '1'], { home });
    expect((await carbon(['show', test_.id, '--live', '--wait'], { home })).stderr).toContain(`It is a test offset: see it with \`carbon show ${test_.id} --wait --test\`.`);
    const asJson = await carbon(['show', live.id, '--json'], { home });
    expect(JSON.parse(asJson.stderr).error).toEqual({ type: 'invalid_request_error', code: 'resource_missing', message: `No such offset: '${live.id}'.`, param: 'id' });
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
    expect(r.stderr).toBe('error: The live balance ($250.00) does not cover this purchase ($400.00). Top it up with `carbon sandbox topup 250 --live`.\n');
    expect(r.stderr).not.toMatch(/cents/);
    const test_ = await carbon(['buy', '--kg', '1000000'], { home });
    expect(test_.stderr).toBe('error: The test balance ($1,000.00) does not cover this purchase ($40,000.00). Top it up with `carbon sandbox topup 39000`.\n');
  });
});

describe('a live purchase cannot happen by accident', () => {
  test('echo n | carbon buy --kg 10 --live: exit 2, one line, nothing bought', async () => {
    const home = await liveHome();
    const r = await carbon(['buy', '--kg', '10', '--live'], { home, input: 'n\n' });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe('error: A live purchase needs --yes when nobody can confirm it (stdin is not a terminal); nothing was bought. Add --yes to buy with real money without being asked.\n');
    const asJson = await carbon(['buy', '--kg', '10', '--live', '--json'], { home, input: 'n\n' });
    expect([asJson.exitCode, JSON.parse(asJson.stderr).error.code]).toEqual([2, 'usage_error']);
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
    expect((await json<{ available_cents: number }>(['balance', '--live'], { home })).available_cents).toBe(25_000);
    // --yes says so: bought, with no warning.
    const yes = await carbon(['buy', '--kg', '10', '--live', '--yes'], { home, input: 'n\n' });
    expect([yes.exitCode, yes.stderr]).toEqual([0, '✓ Bought 10 kg for $0.40 (live mode).\n']);
  });
});

describe('a purchase above the review limit says it will wait for review', () => {
  test('in the prompt, the line and the card after it, and --dry-run', async () => {
    const home = await liveHome();
    await ok(['sandbox', 'review-limit', '100'], { home });
    const r = await carbonTty(['buy', '--kg', '3000', '--live'], { home, env: TTY, input: 'y\n' });
    expect(r.exitCode).toBe(0);
    const text = plain(r.output);
    expect(text).toContain('Buy 3,000 kg for $120.00 from the LIVE balance ($250.00)? It is above the review limit: it will wait for review before it is placed. [y/N]');
    expect(text).toContain('✓ Bought 3,000 kg for $120.00 (live mode). It is above the review limit: it will wait for review before it is placed.');
    expect(text).toMatch(/^status +processing · waiting for review \(above the review limit\)$/m);
    const dry = await carbon(['buy', '--kg', '3000', '--live', '--dry-run'], { home });
    expect(dry.stdout).toContain('requires_review\ttrue\n');
    expect(dry.stderr).toContain('it would wait for review');
    // Below the limit: not a word about review.
    const small = await carbonTty(['buy', '--kg', '10', '--live'], { home, env: TTY, input: 'y\n' });
    expect(plain(small.output)).not.toMatch(/review/);
  });
});

describe('live --wait on the local model', () => {
  test('says how long placement takes and that the clock ends it at once', async () => {
    const home = await liveHome();
    const r = await carbonTty(['buy', '--kg', '10', '--live', '--yes', '--wait', '--timeout', '1'], { home, env: TTY });
    expect(r.exitCode).toBe(8);
    expect(plain(r.output)).toContain('The local model places a live offset 60 s (model time) after its purchase; `carbon sandbox clock advance 1m --live` places it at once.');
    // Held for review, the clock does not place it: the hint says what does.
    await ok(['sandbox', 'review-limit', '0'], { home });
    const held = await carbonTty(['buy', '--kg', '10', '--live', '--yes', '--wait', '--timeout', '1'], { home, env: TTY });
    expect(plain(held.output)).toMatch(/off_\w+ waits for review \(above the review limit\): `carbon sandbox review approve off_\w+ --live` places it\./);
  });
});

describe('help', () => {
  test('a command\'s help is its own: usage, flags and examples first, the global flags named once at the end', async () => {
    const home = newHome();
    const help = (await ok(['help', 'balance'], { home })).stdout;
    expect(help.split('\n').length).toBeLessThan(20);
    expect(help.indexOf('Examples:')).toBeLessThan(help.indexOf('Inherited flags'));
    expect(help).toMatch(/Inherited flags \(what each does: carbon help\):\n {2}--json {2}--profile <name> {2}--live/);
    expect(help).not.toContain('print the API\'s JSON object');
    // The whole explanation is in `carbon help`, once.
    const root = (await ok(['help'], { home })).stdout;
    expect(root).toContain('print the API\'s JSON object');
    expect(root).not.toContain('Inherited flags');
  });

  test('carbon serve --help names the developer page; the banner gives the API address once', async () => {
    const home = newHome();
    expect((await ok(['serve', '--help'], { home })).stdout).toMatch(/developer page/);
    const server = await serve(home);
    const banner = server.stderr();
    expect(banner.split(server.url).length - 1).toBe(2); // the banner's first line, and the example command
    expect(banner).not.toContain('listening on');
    expect((await server.stop()).exitCode).toBe(0);
  });
});

describe('report on a terminal', () => {
  test('at 160 columns: placed kg and processing kg, as the README promises; at 60 they go first', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '100', '--reference', 'ops-a'], { home });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const wide = plain((await carbonTty(['report'], { home, env: TTY, columns: 160 })).output);
    expect(wide).toMatch(/^month +offsets +kg +placed kg +processing kg +amount/m);
    expect(wide).toMatch(/^total +1 +100 kg +100 kg +0 kg +\$4\.00$/m);
    const narrow = plain((await carbonTty(['report'], { home, env: TTY, columns: 50 })).output);
    expect(narrow).not.toContain('processing kg');
    expect(narrow).toMatch(/^total +1 +100 kg/m);
  });
});

test('sandbox status says "1 offset"', async () => {
  const home = newHome();
  await ok(['buy', '--kg', '5'], { home });
  const r = await carbonTty(['sandbox', 'status'], { home, env: TTY });
  expect(plain(r.output)).toMatch(/, 1 offset$/m);
  expect(plain(r.output)).toMatch(/, 0 offsets$/m);
});
