import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok } from '../support/cli.js';

/** How options are read: a value that is itself an option, and numbers read the same way in every option. */

const newHome = homes();

describe('an option value that is another option', () => {
  test('--reference --wait is a usage error (exit 2) and buys nothing; --reference=--wait is that reference', async () => {
    const home = newHome();
    const r = await carbon(['buy', '--kg', '5', '--reference', '--wait'], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      'error: --reference needs a value, but "--wait" is an option. Give the value after --reference (or write --reference=--wait if that is the value).',
    );
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    expect((await json<{ reference: string }>(['buy', '--kg', '5', '--reference=--wait'], { home })).reference).toBe('--wait');
  });

  test('after --, --json is an argument: the error stays a line for a person, and --json before -- still makes it JSON', async () => {
    const home = newHome();
    const after = await carbon(['show', '--', '--json'], { home });
    expect([after.exitCode, after.stdout, after.stderr]).toEqual([5, '', "error: No such offset: '--json'. (param: id)\n"]);
    const before = await carbon(['show', '--json', '--', '--json'], { home });
    expect(before.exitCode).toBe(5);
    expect(JSON.parse(before.stderr).error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });
});

describe('a flag that says what is bought or what it may cost, given twice', () => {
  test('with two values is refused, exit 2, nothing bought (--kg, a --max-cents cap, the key, the batch, api -d); other flags take the last', async () => {
    const home = newHome();
    const csv = join(home, 'rows.csv');
    writeFileSync(csv, 'kg\n5\n');
    const cases = [
      { args: ['buy', '--kg', '5', '--kg', '6'], flag: '--kg' },
      { args: ['buy', '--amount', '1', '--amount=100'], flag: '--amount' },
      { args: ['quote', '--amount-cents', '100', '--amount-cents', '200'], flag: '--amount-cents' },
      { args: ['buy', '--kg', '5', '--max-cents', '100', '--max-cents', '100000'], flag: '--max-cents' },
      { args: ['buy', '--kg', '5', '--idempotency-key', 'a', '--idempotency-key', 'b'], flag: '--idempotency-key' },
      { args: ['buy', '--from-csv', csv, '--batch-id', 'a', '--batch-id=b'], flag: '--batch-id' },
      { args: ['buy', '--from-csv', csv, '--from-csv', join(home, 'other.csv')], flag: '--from-csv' },
      { args: ['api', 'POST', '/offsets', '-d', '{"kg": 5}', '--data', '{"kg": 6}'], flag: '--data' },
    ];
    for (const { args, flag } of cases) {
      const r = await carbon(args, { home });
      expect([args, r.exitCode, r.stdout, r.stderr]).toEqual([
        args,
        2,
        '',
        `error: ${flag} is given twice, with two values; give it once.\n`,
      ]);
      const asJson = await carbon([...args, '--json'], { home });
      expect([args, asJson.exitCode, JSON.parse(asJson.stderr).error.code]).toEqual([args, 2, 'usage_error']);
    }
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    // The same value twice says one thing; after --, a word is not a flag.
    expect((await json<{ kg: number }>(['buy', '--kg', '5', '--kg=5'], { home })).kg).toBe(5);
    const after = await carbon(['show', '--timeout', '5', '--', '--timeout'], { home });
    expect([after.exitCode, after.stderr]).toEqual([5, "error: No such offset: '--timeout'. (param: id)\n"]);
    // Any other flag takes the last, as git's and gh's do: a script's defaults can be overridden.
    await ok(['buy', '--kg', '6'], { home });
    expect((await json<{ data: unknown[] }>(['list', '--limit', '1', '--limit', '2'], { home })).data).toHaveLength(2);
  });
});

describe('numbers read the same way in every option', () => {
  test('1,000 is a thousand for --kg, --max-cents and a top-up; 1e3 is refused by each, saying why, and nothing changes', async () => {
    const home = newHome();
    const bought = await json<{ kg: number; amount_cents: number }>(['buy', '--kg', '1,000', '--max-cents', '4,000', '--json'], { home });
    expect(bought).toMatchObject({ kg: 1000, amount_cents: 4000 });
    expect((await ok(['sandbox', 'topup', '1,000.50'], { home })).stderr).toContain('$1,000.50');
    const before = (await ok(['balance', '--json'], { home })).stdout;
    for (const args of [
      ['buy', '--kg', '1e3'],
      ['buy', '--amount', '1e3'],
      ['buy', '--kg', '5', '--max-cents', '1e3'],
      ['sandbox', 'topup', '1e3'],
      ['list', '--limit', '1e3'],
    ]) {
      const r = await carbon(args, { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .* not "1e3" \(write the digits out: no exponents\)\.$/m);
    }
    expect((await ok(['balance', '--json'], { home })).stdout).toBe(before);
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toHaveLength(1);
  });
});

describe('a bad value from the environment names its variable', () => {
  test('CARBON_TIMEOUT=abc and CARBON_MAX_RETRIES=x: the variable, exit 2 (balance, through the quick start, and buy); the flag when it is given', async () => {
    const home = newHome();
    for (const args of [['balance'], ['buy', '--kg', '5']]) {
      const timeout = await carbon(args, { home, env: { CARBON_TIMEOUT: 'abc' } });
      expect([timeout.exitCode, timeout.stderr], args.join(' ')).toEqual([
        2,
        'error: CARBON_TIMEOUT must be a whole number from 1 to 86400, not "abc".\n',
      ]);
      const retries = await carbon(args, { home, env: { CARBON_MAX_RETRIES: 'x' } });
      expect([retries.exitCode, retries.stderr], args.join(' ')).toEqual([
        2,
        'error: CARBON_MAX_RETRIES must be a whole number from 0 to 10, not "x".\n',
      ]);
    }
    const flag = await carbon(['balance', '--timeout', '0'], { home, env: { CARBON_TIMEOUT: 'abc' } });
    expect([flag.exitCode, flag.stderr]).toEqual([2, 'error: --timeout must be a whole number from 1 to 86400, not "0".\n']);
  });
});

describe('an empty --idempotency-key', () => {
  test("is the API's to judge, as any other: its 400 names the header (exit 2), nothing bought", async () => {
    const home = newHome();
    const r = await carbon(['buy', '--kg', '1', '--idempotency-key', ''], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain('Idempotency-Key');
    expect(r.stderr).not.toContain('idempotencyKey');
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
  });
});

describe("a flag of a group's default command given to another of its commands", () => {
  test('says whose flag it is (exit 2, nothing read), not "Did you mean" the flag itself', async () => {
    const home = newHome();
    for (const [args, flag, owner, given] of [
      [['logs', 'show', 'req_x', '--follow'], '--follow', 'carbon logs list', 'carbon logs show'],
      [['logs', 'show', 'req_x', '--status=4xx'], '--status', 'carbon logs list', 'carbon logs show'],
      [['sandbox', 'keys', 'create', '--reveal'], '--reveal', 'carbon sandbox keys list', 'carbon sandbox keys create'],
    ] as const) {
      const r = await carbon([...args], { home });
      // Before: "error: unknown option '--follow' (Did you mean --follow?) (add --help for usage)".
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        2,
        '',
        `error: unknown option '${flag}': it is an option of \`${owner}\`, not of \`${given}\`. (add --help for usage)\n`,
      ]);
    }
    // A flag no command of the group has keeps commander's suggestion.
    expect((await carbon(['logs', 'show', 'req_x', '--jsn'], { home })).stderr).toBe(
      "error: unknown option '--jsn' (Did you mean --json?) (add --help for usage)\n",
    );
  });
});
