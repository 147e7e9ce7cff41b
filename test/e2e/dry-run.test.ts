import { describe, expect, test } from 'vitest';
import { carbon, homes, json } from '../support/cli.js';

/** `carbon buy --dry-run`: every check a purchase gets, its exit code, and nothing bought. */

const newHome = homes();

describe('buy --dry-run: every check, the exit code the purchase would get, nothing bought', () => {
  test('passes, 402, --max-cents and a read-only key, and never buys', async () => {
    const home = newHome();
    const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const readOnly = keys.find((k) => k.default === 'read_only')!.secret;
    const ok1 = await carbon(['buy', '--kg', '500', '--dry-run'], { home });
    expect(ok1.exitCode).toBe(0);
    expect(ok1.stdout).toMatch(/^kg\t500$/m);
    expect(ok1.stderr).toMatch(
      /Dry run: 500 kg for \$20\.00 would be bought from the test balance \(\$1,000\.00\); the key may buy\. Nothing was bought\./,
    );
    // -q prints offset ids, one a line: a dry run makes none, so stdout stays empty for xargs.
    const quiet = await carbon(['buy', '--kg', '500', '--dry-run', '-q'], { home });
    expect([quiet.exitCode, quiet.stdout]).toEqual([0, '']);
    expect(quiet.stderr).toMatch(/^Dry run: 500 kg for \$20\.00 would be bought .*Nothing was bought\.\n$/);
    const short = await carbon(['buy', '--kg', '30000', '--dry-run', '--quiet'], { home });
    expect([short.exitCode, short.stdout]).toEqual([3, '']);
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
    // With --json, each refusal is typed as the API would type the status it names.
    const typed: Array<[string[], Record<string, string>, string, string]> = [
      [['buy', '--kg', '30000', '--dry-run', '--json'], {}, 'invalid_request_error', 'insufficient_balance'],
      [['buy', '--kg', '5', '--dry-run', '--json'], { CARBON_API_KEY: readOnly }, 'permission_error', 'insufficient_permissions'],
    ];
    for (const [args, env, type, code] of typed) {
      const r = await carbon(args, { home, env });
      expect(JSON.parse(r.stderr).error, r.stderr).toMatchObject({ type, code });
    }
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(100_000);
  });

  test('--dry-run --wait is a usage error naming both flags, not a dry run that ignored --wait', async () => {
    const home = newHome();
    for (const args of [
      ['buy', '--kg', '5', '--dry-run', '--wait'],
      ['buy', '--wait', '--kg', '5', '--dry-run', '--live'],
    ]) {
      const r = await carbon(args, { home });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        2,
        '',
        'error: --dry-run buys nothing, so --wait would wait for nothing; leave out --wait.\n',
      ]);
    }
    const r = await carbon(['buy', '--kg', '5', '--dry-run', '--wait', '--json'], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(JSON.parse(r.stderr).error).toMatchObject({ type: 'invalid_request_error', code: 'usage_error' });
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
  });

  test('short of balance: names the mode whose balance it read and gives the top-up the purchase itself would give', async () => {
    const home = newHome();
    // A fresh sandbox: $1,000.00 of test balance, none of live.
    for (const [mode, balance, short] of [
      ['test', '$1,000.00', 250],
      ['live', '$0.00', 1200],
    ] as const) {
      const live = mode === 'live' ? ['--live'] : [];
      const dry = await carbon(['buy', '--kg', '30000', ...live, '--dry-run'], { home });
      const topUp = `Top it up with \`carbon sandbox topup ${short}${mode === 'live' ? ' --live' : ''}\`.`;
      expect([dry.exitCode, dry.stderr]).toEqual([
        3,
        `error: Dry run: the ${mode} balance (${balance}) does not cover 30,000 kg for $1,200.00; the purchase would get 402 insufficient_balance. ${topUp}\n`,
      ]);
      const real = await carbon(['buy', '--kg', '30000', ...live, '--yes'], { home });
      expect([real.exitCode, real.stderr]).toEqual([
        3,
        `error: The ${mode} balance (${balance}) does not cover this purchase ($1,200.00). ${topUp}\n`,
      ]);
      const json = await carbon(['buy', '--kg', '30000', ...live, '--dry-run', '--json'], { home });
      expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'insufficient_balance', required_cents: 120_000 });
    }
  });
});
