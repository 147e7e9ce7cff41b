import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, liveHomes, ok, plain, TTY } from '../support/cli.js';

/** Live purchases: none by accident (no --yes, no terminal: nothing bought), and one above the review limit says it will wait. */

const newHome = homes();
const liveHome = liveHomes(newHome);

describe('a live purchase cannot happen by accident', () => {
  test('echo n | carbon buy --kg 10 --live: exit 2, one line, nothing bought', async () => {
    const home = await liveHome();
    const r = await carbon(['buy', '--kg', '10', '--live'], { home, input: 'n\n' });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'error: A live purchase needs --yes when nobody can confirm it (stdin is not a terminal); nothing was bought. Add --yes to buy without being asked (the local sandbox asks as the API would; no real money is spent here).\n',
    );
    const asJson = await carbon(['buy', '--kg', '10', '--live', '--json'], { home, input: 'n\n' });
    expect([asJson.exitCode, JSON.parse(asJson.stderr).error.code]).toEqual([2, 'usage_error']);
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
    expect((await json<{ available_cents: number }>(['balance', '--live'], { home })).available_cents).toBe(25_000);
    // Against the API it is real money, and the hint says so (refused before any request: no server needed).
    const remote = await carbon(['buy', '--kg', '10', '--base-url', 'http://127.0.0.1:9/api/v1'], {
      home,
      env: { CARBON_API_KEY: `ck_live_${'a1'.repeat(8)}` },
      input: 'n\n',
    });
    expect([remote.exitCode, remote.stdout]).toEqual([2, '']);
    expect(remote.stderr).toMatch(/nothing was bought\. Add --yes to buy with real money without being asked\.\n$/);
    // A carbon sandbox's live key (a served sandbox) is no real money, and the hint says that instead.
    const served = await carbon(['buy', '--kg', '10', '--base-url', 'http://127.0.0.1:9/api/v1'], {
      home,
      env: { CARBON_API_KEY: `ck_live_sandbox${'a1'.repeat(12)}a` },
      input: 'n\n',
    });
    expect([served.exitCode, served.stdout]).toEqual([2, '']);
    expect(served.stderr).toMatch(
      /nothing was bought\. Add --yes to buy without being asked \(a carbon sandbox's live key, which asks as the API would; no real money is spent\)\.\n$/,
    );
    // --yes says so: bought, with no warning.
    const yes = await carbon(['buy', '--kg', '10', '--live', '--yes'], { home, input: 'n\n' });
    expect([yes.exitCode, yes.stderr]).toEqual([0, '✓ Bought 10 kg for $0.40 (live mode, sandbox: not a real purchase).\n']);
  });
});

describe('carbon api POST /offsets with the live key: the same rule', () => {
  test('nobody to ask: exit 2, one line, nothing sent; --yes sends it; a terminal is asked; quotes and the test key are not', async () => {
    const home = await liveHome();
    const body = ['-d', '{"kg": 5}'];
    const r = await carbon(['api', 'POST', '/offsets', ...body, '--live'], { home, input: 'n\n' });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'error: A live purchase needs --yes when nobody can confirm it (stdin is not a terminal); nothing was sent. Add --yes to buy without being asked (the local sandbox asks as the API would; no real money is spent here).\n',
    );
    // Its path written with the prefix, or a trailing slash, is the same purchase.
    for (const path of ['/api/v1/offsets', '/offsets/', '//offsets', '/api/v1//offsets']) {
      const spelled = await carbon(['api', 'POST', path, ...body, '--live'], { home, input: 'n\n' });
      expect([path, spelled.exitCode, spelled.stdout]).toEqual([path, 2, '']);
    }
    // The configured mode counts as --live does.
    await ok(['config', 'set', 'mode', 'live'], { home });
    const configured = await carbon(['api', 'POST', '/offsets', ...body], { home, input: 'n\n' });
    expect([configured.exitCode, configured.stdout]).toEqual([2, '']);
    // A person at a terminal is asked; no stops it as Ctrl-C does.
    const asked = await carbonTty(['api', 'POST', '/offsets', ...body], { home, env: TTY, input: 'n\n' });
    expect(asked.exitCode).toBe(130);
    // Its kg quoted first, so the question shows the cost, as `carbon buy`'s does.
    expect(plain(asked.output)).toContain(
      "POST /offsets with the LIVE key buys 5 kg for $0.20 from the sandbox's LIVE balance ($250.00). Send it? [y/N]",
    );
    expect(plain(asked.output)).toContain('Cancelled; nothing was sent.');
    // A body it cannot quote (the API will say what is wrong) is asked about without a cost.
    const unquoted = await carbonTty(['api', 'POST', '/offsets', '-d', '{"kg": "5"}'], { home, env: TTY, input: 'n\n' });
    expect([unquoted.exitCode, plain(unquoted.output)]).toEqual([
      130,
      expect.stringContaining('POST /offsets with the LIVE key buys with the live balance. Send it? [y/N]'),
    ]);
    // One the balance does not cover is refused before the question: exit 3, the top-up, nothing sent.
    const short = await carbonTty(['api', 'POST', '/offsets', '-d', '{"kg": 10000}'], { home, env: TTY, input: 'y\n' });
    expect(short.exitCode).toBe(3);
    expect(plain(short.output)).not.toContain('[y/N]');
    expect(plain(short.output)).toMatch(
      /^error: The live balance \(\$250\.00\) does not cover this purchase \(\$400\.00\); nothing was sent\. Top it up with `carbon sandbox topup 250 --live`\.$/m,
    );
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(25_000);
    // What spends nothing is not asked about: a quote, and the test key's purchase.
    expect((await carbon(['api', 'POST', '/quotes', ...body], { home, input: 'n\n' })).exitCode).toBe(0);
    expect((await carbon(['api', 'POST', '/offsets', ...body, '--test'], { home, input: 'n\n' })).exitCode).toBe(0);
    const yes = await carbon(['api', 'POST', '/offsets', ...body, '--yes'], { home, input: 'n\n' });
    expect([yes.exitCode, JSON.parse(yes.stdout).livemode, yes.stderr]).toEqual([0, true, '']);
    expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(24_980);
  });
});

describe('a live purchase the balance does not cover is refused before the question', () => {
  test('on a terminal: the 402 line and the top-up, exit 3, no [y/N], nothing bought (as a batch is)', async () => {
    const home = await liveHome();
    const r = await carbonTty(['buy', '--kg', '10000', '--live'], { home, env: TTY, input: 'y\n' });
    expect(r.exitCode).toBe(3);
    // The pty echoes the `y` typed ahead; nothing asked for it.
    expect(plain(r.output)).not.toContain('[y/N]');
    expect(plain(r.output)).toMatch(
      /^error: The live balance \(\$250\.00\) does not cover this purchase \(\$400\.00\); nothing was bought\. Top it up with `carbon sandbox topup 250 --live`\.$/m,
    );
    const asJson = await carbonTty(['buy', '--kg', '10000', '--live', '--json'], { home, env: TTY, input: 'y\n' });
    expect(asJson.exitCode).toBe(3);
    expect(JSON.parse(plain(asJson.output).trim().split('\n').at(-1)!)).toMatchObject({
      error: { type: 'invalid_request_error', code: 'insufficient_balance', balance_cents: 25_000, required_cents: 40_000 },
    });
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
  });
});

describe('a purchase above the review limit says it will wait for review', () => {
  test('in the prompt, the line and the card after it, and --dry-run', async () => {
    const home = await liveHome();
    await ok(['sandbox', 'review-limit', '100'], { home });
    const r = await carbonTty(['buy', '--kg', '3000', '--live'], { home, env: TTY, input: 'y\n' });
    expect(r.exitCode).toBe(0);
    const text = plain(r.output);
    expect(text).toContain(
      "Buy 3,000 kg for $120.00 from the sandbox's LIVE balance ($250.00)? It is above the review limit: it will wait for review before it is placed. [y/N]",
    );
    expect(text).toContain(
      '✓ Bought 3,000 kg for $120.00 (live mode, sandbox: not a real purchase). It is above the review limit: it will wait for review before it is placed.',
    );
    expect(text).toMatch(/^status +processing · waiting for review \(above the review limit\)$/m);
    // carbon show says it too, while it waits (the local model knows it is held), and not once it is approved.
    const id = /^id +(off_\w+)$/m.exec(text)![1]!;
    expect(plain((await carbonTty(['show', id, '--live'], { home, env: TTY })).output)).toMatch(
      /^status +processing · waiting for review \(above the review limit\)$/m,
    );
    await ok(['sandbox', 'review', 'approve', id], { home });
    expect(plain((await carbonTty(['show', id, '--live'], { home, env: TTY })).output)).not.toMatch(/review/);
    const dry = await carbon(['buy', '--kg', '3000', '--live', '--dry-run'], { home });
    expect(dry.stdout).toContain('requires_review\ttrue\n');
    expect(dry.stderr).toContain('it would wait for review');
    // A test purchase above the limit is never held: the dry run says so, as its quote card does.
    const test = await carbon(['buy', '--kg', '3000', '--test', '--dry-run'], { home });
    expect(test.stderr).toContain('it is above the review limit, but test offsets are not held for review');
    expect(test.stderr).not.toContain('would wait for review');
    // Below the limit: not a word about review.
    const small = await carbonTty(['buy', '--kg', '10', '--live'], { home, env: TTY, input: 'y\n' });
    expect(plain(small.output)).not.toMatch(/review/);
  });
});
