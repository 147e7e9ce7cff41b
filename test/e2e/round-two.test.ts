import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, coloured, homes, json, ok } from '../support/cli.js';

/** What a new user tripped on, fixed: a wait that ends refunded, and TERM=dumb. */

const newHome = homes();

describe('--wait that ends refunded', () => {
  test('show --wait on an offset whose order could not be placed: the offset on stdout, one line on stderr, exit 9', async () => {
    // A live offset held for review (a limit of $0): still processing when it is failed, however long that took.
    const home = newHome();
    await ok(['config', 'set', 'mode', 'live'], { home });
    await ok(['sandbox', 'topup', '250'], { home });
    await ok(['sandbox', 'review-limit', '0'], { home });
    const bought = await json<{ id: string }>(['buy', '--kg', '3', '--yes'], { home });
    await ok(['sandbox', 'fail', bought.id], { home });
    const r = await carbon(['show', bought.id, '--wait', '--json'], { home });
    expect(r.exitCode).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: bought.id, status: 'refunded' });
    expect(JSON.parse(r.stderr.trim()).error).toMatchObject({ code: 'offset_refunded' });
    // Without --wait a refunded offset is just shown: exit 0.
    expect((await carbon(['show', bought.id], { home })).exitCode).toBe(0);
  });

  test('carbon --help lists exit code 9', async () => {
    expect((await ok(['--help'], { home: newHome() })).stdout).toMatch(/^ {2}9 {2}--wait ended with the offset refunded/m);
  });
});

describe('TERM=dumb', () => {
  test('a terminal that says it is dumb gets no colour', async () => {
    const home = newHome();
    const colourful = await carbonTty(['balance'], { home, env: { FORCE_COLOR: undefined } });
    expect(colourful.exitCode).toBe(0);
    expect(coloured(colourful.output)).toBe(true);
    const dumb = await carbonTty(['balance'], { home, env: { TERM: 'dumb', FORCE_COLOR: undefined } });
    expect(dumb.exitCode).toBe(0);
    expect(coloured(dumb.output)).toBe(false);
    expect(dumb.output).not.toMatch(/\u001b\[/);
  });
});

describe('an option value that is another option', () => {
  test('--reference --wait is a usage error (exit 2) and buys nothing; --reference=--wait is that reference', async () => {
    const home = newHome();
    const r = await carbon(['buy', '--kg', '5', '--reference', '--wait'], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('error: --reference needs a value, but "--wait" is an option. Give the value after --reference (or write --reference=--wait if that is the value).');
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ reference: string }>(['buy', '--kg', '5', '--reference=--wait'], { home })).reference).toBe('--wait');
  });
});

describe('a refused connection says plainly that nothing was bought', () => {
  test('no server on the port: one line, exit 1, "nothing was bought", no retry key offered', async () => {
    const home = newHome();
    // A port nobody listens on: taken from a server that is started and stopped again.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const r = await carbon(['buy', '--kg', '1', '--base-url', `http://127.0.0.1:${port}/api/v1`, '--max-retries', '1'], { home, env: { CARBON_API_KEY: `ck_test_${'A'.repeat(32)}` } });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('connection refused (is the server running?). Nothing was sent, so nothing was bought.');
    expect(r.stderr).not.toContain('may or may not');
  });
});

describe('-q, --quiet: ids only, one a line', () => {
  test('buy, list (a page and --all) and show print ids alone; with --json it is a usage error', async () => {
    const home = newHome();
    const ids: string[] = [];
    for (const kg of [1, 2, 3]) {
      const r = await ok(['buy', '--kg', String(kg), '-q'], { home });
      expect(r.stdout).toMatch(/^off_[A-Za-z0-9]{24}\n$/);
      expect(r.stderr).toBe('');
      ids.push(r.stdout.trim());
    }
    expect((await ok(['list', '-q'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['list', '--all', '--quiet', '--page-size', '1'], { home })).stdout).toBe(`${[...ids].reverse().join('\n')}\n`);
    expect((await ok(['show', ids[0]!, '-q'], { home })).stdout).toBe(`${ids[0]}\n`);
    const both = await carbon(['list', '-q', '--json'], { home });
    expect([both.exitCode, both.stdout]).toEqual([2, '']);
  });
});

describe('hints and empty lists say what the user was doing', () => {
  test('the next-page hint keeps --reference, --limit and --live; an empty filtered list says what was filtered', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    for (let i = 0; i < 3; i++) await ok(['buy', '--kg', '1', '--live', '--yes', '--reference', 'team trip'], { home });
    const page = await carbonTty(['list', '--live', '--reference', 'team trip', '--limit', '2'], { home });
    const hint = /More offsets: (.*) {2}\(or --all\)/.exec(page.output)?.[1];
    expect(hint).toMatch(/^carbon list --live --reference 'team trip' --limit 2 --starting-after off_\w+$/);
    // The hint, run as printed (its words as a shell would split them), gives the rest.
    const words = hint!.replace(/^carbon /, '').match(/'[^']*'|\S+/g)!.map((w) => w.replace(/^'|'$/g, ''));
    expect((await json<{ data: unknown[]; has_more: boolean }>(words, { home })).data).toHaveLength(1);
    const empty = await carbonTty(['list', '--reference', 'nowhere'], { home });
    expect(empty.output).toContain('No test offsets with reference "nowhere".');
  });
});

describe('buy --dry-run: every check, the exit code the purchase would get, nothing bought', () => {
  test('passes, 402, --max-cents and a read-only key, and never buys', async () => {
    const home = newHome();
    const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const readOnly = keys.find((k) => k.default === 'read_only')!.secret;
    const ok1 = await carbon(['buy', '--kg', '500', '--dry-run'], { home });
    expect(ok1.exitCode).toBe(0);
    expect(ok1.stdout).toMatch(/^kg\t500$/m);
    expect(ok1.stderr).toMatch(/Dry run: 500 kg for \$20\.00 would be bought from the test balance \(\$1,000\.00\); the key may buy\. Nothing was bought\./);
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [['buy', '--kg', '30000', '--dry-run'], {}, 3, /402 insufficient_balance/],
      [['buy', '--kg', '500', '--max-cents', '100', '--dry-run'], {}, 2, /more than --max-cents 100/],
      [['buy', '--kg', '5', '--dry-run'], { CARBON_API_KEY: readOnly }, 4, /403 insufficient_permissions/],
      [['buy', '--kg', '0', '--dry-run'], {}, 2, /kg/],
    ];
    for (const [args, env, code, says] of cases) {
      const r = await carbon(args, { home, env });
      expect(r.exitCode, r.stderr).toBe(code);
      expect(r.stderr).toMatch(says);
    }
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(100_000);
  });
});

describe('--verbose (or CARBON_DEBUG=http): a line per HTTP request on stderr', () => {
  test('through carbon serve: method, URL, status, time, Request-Id and attempt; never the key; stdout untouched', async () => {
    const home = newHome();
    const { serve } = await import('../support/cli.js');
    const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const key = keys.find((k) => k.default === 'test')!.secret;
    const server = await serve(home);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
      const r = await carbon(['buy', '--kg', '2', '--verbose', '--json'], { home, env });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ kg: 2 });
      const origin = new URL(server.url).origin;
      expect(r.stderr).toMatch(new RegExp(`^http: POST ${origin.replace(/[.]/g, '\\.')}/api/v1/offsets 201 \\d+\\.\\dms req_\\w+ attempt 1$`, 'm'));
      expect(r.stderr).not.toContain(key);
      const debug = await carbon(['balance'], { home, env: { ...env, CARBON_DEBUG: 'http' } });
      expect(debug.stderr).toMatch(/^http: GET \S+\/api\/v1\/balance 200 /m);
      expect((await carbon(['balance'], { home, env })).stderr).toBe('');
    } finally {
      await server.stop();
    }
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
    const ndjson = (await ok(['list', '--all', '--json', '--until', earlyDay], { home })).stdout.trim().split('\n').map((l) => JSON.parse(l).id);
    expect(ndjson).toEqual([failed.id, early.id]);
    expect((await ok(['list', '--all', '--format', 'csv', '--status', 'refunded'], { home })).stdout.trim().split('\r\n')).toHaveLength(2);
    const none = await carbonTty(['list', '--status', 'refunded', '--since', lateDay], { home });
    expect(none.output).toContain(`No live offsets with status refunded and since ${lateDay}.`);
    const bad = await carbon(['list', '--since', 'yesterday'], { home });
    expect([bad.exitCode, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/--since must be a day such as 2026-01-31 or an age such as 7d/);
  });
});

describe('carbon completion --install', () => {
  test.each([
    ['/bin/bash', 'bash', '.local/share/bash-completion/completions/carbon'],
    ['/usr/bin/zsh', 'zsh', '.zfunc/_carbon'],
    ['/usr/bin/fish', 'fish', '.config/fish/completions/carbon.fish'],
  ])('SHELL=%s: the %s script written where that shell looks, and said so', async (shellPath, shell, where) => {
    const home = newHome();
    const r = await carbon(['completion', '--install'], { home, env: { SHELL: shellPath } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Installed the ${shell} completion script in ${home}/${where}.`);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(`${home}/${where}`, 'utf8')).toBe((await ok(['completion', shell], { home })).stdout);
  });

  test('an unknown $SHELL: a usage error naming it, nothing written', async () => {
    const r = await carbon(['completion', '--install'], { home: newHome(), env: { SHELL: '/bin/tcsh' } });
    expect([r.exitCode, r.stderr]).toEqual([2, expect.stringContaining('$SHELL is /bin/tcsh')]);
  });
});

describe('a base URL without /api/v1', () => {
  test('gets one warning with the likely fix; with /api/v1 there is none', async () => {
    const home = newHome();
    const { serve } = await import('../support/cli.js');
    const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const env = { CARBON_API_KEY: keys.find((k) => k.default === 'test')!.secret };
    const server = await serve(home);
    try {
      const origin = new URL(server.url).origin;
      const wrong = await carbon(['balance', '--base-url', origin], { home, env });
      expect(wrong.stderr).toContain(`warning: the base URL ${origin} does not end in /api/v1, where the API's paths are; did you mean ${origin}/api/v1?`);
      const right = await carbon(['balance', '--base-url', server.url], { home, env });
      expect([right.exitCode, right.stderr]).toEqual([0, '']);
    } finally {
      await server.stop();
    }
  });
});

describe('numbers read the same way in every option', () => {
  test('1,000 is a thousand for --kg, --max-cents and a top-up; 1e3 is refused by each, saying why, and nothing changes', async () => {
    const home = newHome();
    const bought = await json<{ kg: number; amount_cents: number }>(['buy', '--kg', '1,000', '--max-cents', '4,000', '--json'], { home });
    expect(bought).toMatchObject({ kg: 1000, amount_cents: 4000 });
    expect((await ok(['sandbox', 'topup', '1,000.50'], { home })).stderr).toContain('$1,000.50');
    const before = (await ok(['balance', '--json'], { home })).stdout;
    for (const args of [['buy', '--kg', '1e3'], ['buy', '--amount', '1e3'], ['buy', '--kg', '5', '--max-cents', '1e3'], ['sandbox', 'topup', '1e3'], ['list', '--limit', '1e3']]) {
      const r = await carbon(args, { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .* not "1e3" \(write the digits out: no exponents\)\.$/m);
    }
    expect((await ok(['balance', '--json'], { home })).stdout).toBe(before);
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toHaveLength(1);
  });
});
