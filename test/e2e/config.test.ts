import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, carbonTty, fullKeys, homes, json, leakedKeys, maskKey, ok, sandboxKeys, sh, TTY } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * `carbon config`: profiles, precedence, masked keys, the 0600 file in a 0700 directory, and the
 * warning for a key given as a flag.
 */

const newHome = homes();
const FAKE_TEST = `ck_test_${'A1b2C3d4'.repeat(4)}`;
const FAKE_LIVE = `ck_live_${'Z9y8X7w6'.repeat(4)}`;

describe('set, get, unset, list, use', () => {
  test('a round trip on the default profile', async () => {
    const home = newHome();
    // From stdin, the quiet way: a key typed as an argument would draw a warning (ps, history).
    const set = await ok(['config', 'set', 'test-key', '-'], { home, input: `${FAKE_TEST}\n` });
    expect(set.stdout).toBe('');
    expect(set.stderr).toBe(`Set test-key of profile default to ${maskKey(FAKE_TEST)}.\n`);
    expect(set.stderr).not.toContain('warning');

    expect((await ok(['config', 'get', 'test-key'], { home })).stdout).toBe(`${maskKey(FAKE_TEST)}\n`);
    expect((await ok(['config', 'get', 'test-key', '--reveal'], { home })).stdout).toBe(`${FAKE_TEST}\n`);
    expect(await json(['config', 'get', 'test-key'], { home })).toEqual({ profile: 'default', key: 'test-key', value: maskKey(FAKE_TEST) });

    await ok(['config', 'set', 'mode', 'live'], { home });
    await ok(['config', 'set', 'base-url', 'https://api.example.com/api/v1/'], { home });
    expect((await ok(['config', 'get', 'base-url'], { home })).stdout).toBe('https://api.example.com/api/v1\n');

    await ok(['config', 'unset', 'base-url'], { home });
    const unset = await carbon(['config', 'get', 'base-url'], { home });
    expect(unset.exitCode).toBe(5);
    expect(unset.stdout).toBe('');
    expect(unset.stderr).toBe('error: base-url is not set in profile default. Set it with `carbon config set base-url VALUE`.\n');
    // A key's hint reads it from stdin, as `config set` advises (typed as an argument it stays in shell history).
    expect((await carbon(['config', 'get', 'live-key'], { home })).stderr).toBe(
      'error: live-key is not set in profile default. Set it with `carbon config set live-key -` (it asks for the key, or reads it from stdin).\n',
    );
    // Of a profile that is not the current one (--profile, CARBON_PROFILE), the command names it:
    // without --profile it would set the value in the current profile, not the one asked about.
    await ok(['config', 'set', '--profile', 'staging', 'base-url', 'https://staging.example.com/api/v1'], { home });
    for (const env of [{}, { CARBON_PROFILE: 'staging' }]) {
      const other = await carbon(['config', 'get', 'mode', ...('CARBON_PROFILE' in env ? [] : ['--profile', 'staging'])], { home, env });
      expect([other.exitCode, other.stderr]).toEqual([
        5,
        'error: mode is not set in profile staging. Set it with `carbon config set --profile staging mode VALUE`.\n',
      ]);
    }
  });

  test('a value from stdin with -', async () => {
    const home = newHome();
    await ok(['config', 'set', 'live-key', '-'], { home, input: `${FAKE_LIVE}\n` });
    expect((await ok(['config', 'get', 'live-key', '--reveal'], { home })).stdout).toBe(`${FAKE_LIVE}\n`);
  });

  test('a value that comes on stdin a while after carbon started is waited for, as from `pass show … |`', async () => {
    const home = newHome();
    const child = execa(process.execPath, [BIN(), 'config', 'set', 'test-key', '-'], {
      env: baseEnv(home),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
    });
    // Given time to reach its read of stdin, where it used to end at once: EAGAIN, exit 1, nothing set.
    const before = await Promise.race([child.then(() => 'ended'), new Promise((r) => setTimeout(r, limit(1_500), 'waiting'))]);
    child.stdin!.end(`${FAKE_TEST}\n`);
    const r = await child;
    expect({ before, exitCode: r.exitCode, stderr: r.stderr }).toEqual({
      before: 'waiting',
      exitCode: 0,
      stderr: `Set test-key of profile default to ${maskKey(FAKE_TEST)}.`,
    });
    expect((await ok(['config', 'get', 'test-key', '--reveal'], { home })).stdout).toBe(`${FAKE_TEST}\n`);
  });

  test('profiles: --profile and CARBON_PROFILE create and select; use switches; list masks every key', async () => {
    const home = newHome();
    await ok(['config', 'set', 'test-key', FAKE_TEST], { home });
    await ok(['config', 'set', '--profile', 'staging', 'base-url', 'http://127.0.0.1:9/api/v1'], { home });
    await ok(['config', 'set', 'live-key', FAKE_LIVE], { home, env: { CARBON_PROFILE: 'staging' } });

    const listing = await json<{ current_profile: string; profiles: Record<string, Record<string, string>> }>(['config', 'list'], { home });
    expect(listing.current_profile).toBe('default');
    expect(listing.profiles).toEqual({
      default: { test_key: maskKey(FAKE_TEST) },
      staging: { base_url: 'http://127.0.0.1:9/api/v1', live_key: maskKey(FAKE_LIVE) },
    });
    const plain = await ok(['config', 'list'], { home });
    expect(plain.stdout).toBe(
      `default\ttest-key\t${maskKey(FAKE_TEST)}\nstaging\tlive-key\t${maskKey(FAKE_LIVE)}\nstaging\tbase-url\thttp://127.0.0.1:9/api/v1\n`,
    );
    for (const out of [JSON.stringify(listing), plain.stdout, plain.stderr]) expect(leakedKeys(out, [FAKE_TEST, FAKE_LIVE])).toEqual([]);

    const typo = await carbon(['config', 'use', 'stagign'], { home });
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('No profile named "stagign"');
    // The way on is the form that keeps a key out of shell history and ps: `-`, asked for or piped.
    expect(typo.stderr).toContain('Create it with `carbon config set --profile stagign test-key -` (it asks for the key');

    await ok(['config', 'use', 'staging'], { home });
    expect((await json<{ current_profile: string }>(['config', 'list'], { home })).current_profile).toBe('staging');
    expect((await ok(['config', 'get', 'base-url'], { home })).stdout).toBe('http://127.0.0.1:9/api/v1\n');
    // The current profile points at a remote API (a closed port): commands now go there.
    const remote = await carbon(['balance', '--max-retries', '0'], { home });
    expect(remote.exitCode).toBe(4); // staging has no test key: refused before any request
    expect(remote.stderr).toContain('No test API key for http://127.0.0.1:9/api/v1');
    // --local forces the local model whatever the profile says.
    // (staging has no test key, so the sandbox's own key is used.)
    expect((await carbon(['balance', '--local'], { home })).exitCode).toBe(0);
    // Back on default, whose test key the sandbox never issued: the local model uses its own, and says so.
    const withForeign = await carbon(['balance', '--profile', 'default'], { home });
    expect(withForeign.exitCode).toBe(0);
    expect(withForeign.stderr).toContain('the test-key of profile default is not a key of the local sandbox');
    await ok(['config', 'use', 'default'], { home });
  });

  test('delete: a profile and its keys gone; the current one deleted, default is current again; an unknown one is exit 2', async () => {
    const home = newHome();
    await ok(['config', 'set', 'test-key', FAKE_TEST], { home });
    await ok(['config', 'set', '--profile', 'staging', 'live-key', FAKE_LIVE], { home });
    await ok(['config', 'use', 'staging'], { home });
    const deleted = await ok(['config', 'delete', 'staging'], { home });
    expect(deleted.stderr).toBe('Deleted profile staging and its keys; the current profile is default again.\n');
    const listing = await json<{ current_profile: string; profiles: Record<string, unknown> }>(['config', 'list'], { home });
    expect(listing).toMatchObject({ current_profile: 'default', profiles: { default: { test_key: maskKey(FAKE_TEST) } } });
    expect(Object.keys(listing.profiles)).toEqual(['default']);
    expect(readFileSync(join(home, 'config.json'), 'utf8')).not.toContain(FAKE_LIVE.slice(8));
    // Commands run on default again, not refused as naming a profile that is gone.
    expect((await carbon(['balance'], { home })).exitCode).toBe(0);
    const again = await carbon(['config', 'delete', 'staging'], { home });
    expect([again.exitCode, again.stdout, again.stderr]).toEqual([
      2,
      '',
      'error: No profile named "staging". List profiles with `carbon config list`.\n',
    ]);
  });

  test('a base URL holding a key shows it masked in set, get and list, as every key is; get --reveal shows it whole', async () => {
    const home = newHome();
    // In its path (a query is refused: every request's path follows the base URL).
    const url = `http://127.0.0.1:9/${FAKE_TEST}/api/v1`;
    const masked = `http://127.0.0.1:9/${maskKey(FAKE_TEST)}/api/v1`;
    const set = await ok(['config', 'set', 'base-url', url], { home });
    expect(set.stderr).toBe(`Set base-url of profile default to ${masked}.\n`);
    expect((await ok(['config', 'get', 'base-url'], { home })).stdout).toBe(`${masked}\n`);
    expect(await json(['config', 'get', 'base-url'], { home })).toMatchObject({ value: masked });
    expect((await ok(['config', 'list'], { home })).stdout).toBe(`default\tbase-url\t${masked}\n`);
    const listing = await json<{ profiles: Record<string, Record<string, string>> }>(['config', 'list'], { home });
    expect(listing.profiles).toEqual({ default: { base_url: masked } });
    expect((await ok(['config', 'get', 'base-url', '--reveal'], { home })).stdout).toBe(`${url}\n`);
  });

  test('an unknown profile named on an API command is a usage error', async () => {
    const home = newHome();
    const r = await carbon(['balance', '--profile', 'nope'], { home });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('No profile named "nope"');
  });

  test('a name every JavaScript object answers to (toString, constructor) names no profile: it is refused as unknown', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'staging', 'mode', 'live'], { home });
    for (const args of [
      ['balance', '--profile', 'toString'],
      ['impact', '--profile', 'constructor'],
      ['list', '--profile', 'hasOwnProperty'],
      ['config', 'use', 'constructor'],
    ]) {
      const r = await carbon(args, { home });
      expect({ args, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ args, exitCode: 2, stdout: '' });
      expect(r.stderr).toContain(`No profile named "${args.at(-1)}"`);
    }
    expect(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))).toEqual({ profiles: { staging: { mode: 'live' } } });
  });

  test('a new profile needs a name that fits a tab-separated row and a command line; __proto__ is refused as a usage error', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'ci.team_2-eu', 'mode', 'live'], { home });
    for (const name of ['__proto__', 'my team', 'a\tb', 'a\nb', '', '-x', 'a/b', '../x']) {
      const r = await carbon(['config', 'set', '--profile', name, 'mode', 'live'], { home });
      expect({ name, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ name, exitCode: 2, stdout: '' });
      expect(r.stderr).toBe(
        `error: ${JSON.stringify(name)} cannot name a profile: use letters, digits, '.', '-' and '_', starting with a letter or digit (at most 64).\n`,
      );
    }
    expect((await ok(['config', 'list'], { home })).stdout).toBe('ci.team_2-eu\tmode\tlive\n');
  });

  test('config use of a name no profile can have says so, and offers no command that would fail too', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'staging', 'mode', 'live'], { home });
    for (const name of ['my team', 'ci;rm -rf x', 'a/b', '../x', '']) {
      const r = await carbon(['config', 'use', name], { home });
      expect({ name, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ name, exitCode: 2, stdout: '' });
      expect(r.stderr).toBe(
        `error: ${JSON.stringify(name)} cannot name a profile: use letters, digits, '.', '-' and '_', starting with a letter or digit (at most 64).\n`,
      );
    }
    expect(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))).toEqual({ profiles: { staging: { mode: 'live' } } });
  });

  test('a key typed where a profile name goes is refused, masked, and no profile is named by it', async () => {
    const home = newHome();
    for (const key of [FAKE_TEST, 'A1b2C3d4'.repeat(4)]) {
      // Before, `config set --profile KEY` made the profile, and every line that named it showed the key whole.
      for (const args of [
        ['config', 'use', key],
        ['config', 'set', '--profile', key, 'base-url', 'https://api.example.com/api/v1'],
      ]) {
        const r = await carbon(args, { home });
        expect([r.exitCode, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toContain('cannot name a profile: it has the shape of a key');
        expect(r.stderr).not.toContain(key);
        expect(r.stderr).toContain(key.slice(-4));
      }
    }
    expect((await json<{ profiles: object }>(['config', 'list'], { home })).profiles).toEqual({});
    // A hand-edited file that names a profile by a key, or leaves one in a mode: shown masked.
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ profiles: { [FAKE_TEST]: { mode: FAKE_LIVE } }, current_profile: FAKE_TEST }),
    );
    for (const args of [
      ['config', 'list'],
      ['config', 'list', '--json'],
      ['config', 'get', 'mode', '--json'],
      ['__complete', '--', '--profile', ''],
    ]) {
      const r = await ok(args, { home });
      expect(r.stdout).not.toContain(FAKE_TEST);
      expect(r.stdout).not.toContain(FAKE_LIVE);
    }
    // The notes that name the profile it changed or chose mask it too (before: config set, unset and use printed it whole).
    for (const args of [
      ['config', 'set', '--profile', FAKE_TEST, 'mode', 'live'],
      ['config', 'unset', 'mode', '--profile', FAKE_TEST],
      ['config', 'use', FAKE_TEST],
    ]) {
      const r = await ok(args, { home });
      expect([args[1], r.stdout + r.stderr]).not.toEqual([args[1], expect.stringContaining(FAKE_TEST)]);
      expect(r.stderr).toContain(FAKE_TEST.slice(-4));
    }
  });

  test('a current profile that config.json names but does not hold is refused where it is used, not run on another engine', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'staging', 'mode', 'live'], { home });
    writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { staging: { mode: 'live' } }, current_profile: 'stageing' }));
    // Before, it bought on a new local sandbox in test mode, unsaid.
    const r = await carbon(['buy', '--kg', '5'], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'error: No profile named "stageing" (the current profile, in config.json). Choose one with `carbon config use NAME` (`carbon config list` shows them), or create it with `carbon config set --profile NAME ...`.\n',
    );
    // carbon config itself still works, so that it can mend it, and `config list` says what is wrong.
    const listed = await ok(['config', 'list'], { home });
    expect(listed.stdout).toBe('staging\tmode\tlive\n');
    expect(listed.stderr).toBe(
      `warning: profile "stageing" is selected, but ${join(home, 'config.json')} does not hold it: every command but \`carbon config\` stops on it (exit 2). Choose one with \`carbon config use NAME\`, or create it with \`carbon config set --profile NAME ...\`.\n`,
    );
    await ok(['config', 'use', 'staging'], { home });
    expect((await ok(['config', 'list'], { home })).stderr).toBe('');
    expect((await carbon(['balance', '--test'], { home })).exitCode).toBe(0);
    // Named by CARBON_PROFILE, which comes before the current one: `config use` would not mend it, and the warning says what does.
    const byEnv = await ok(['config', 'list'], { home, env: { CARBON_PROFILE: 'nope' } });
    expect(byEnv.stderr).toBe(
      `warning: profile "nope" is selected, but ${join(home, 'config.json')} does not hold it: every command but \`carbon config\` stops on it (exit 2). It is named by --profile or CARBON_PROFILE, which come before \`carbon config use\`: name one the file holds (or unset CARBON_PROFILE), or create it with \`carbon config set --profile NAME ...\`.\n`,
    );
  });

  test('bad keys and values are refused before they are stored', async () => {
    const home = newHome();
    for (const [args, message] of [
      [['config', 'set', 'colour', 'red'], 'Unknown config key "colour"; the keys are'],
      // Another spelling of a key, or a key named otherwise: the key it meant.
      [['config', 'set', 'base_url', 'http://x'], 'Unknown config key "base_url" (did you mean base-url?)'],
      [['config', 'set', 'api-key', FAKE_LIVE], 'Unknown config key "api-key" (did you mean test-key or live-key?)'],
      [['config', 'set', 'mode', 'sideways'], 'mode must be test or live'],
      [['config', 'set', 'test-key', FAKE_LIVE], 'test-key must be a test key, and this is a live key (set it as live-key).'],
      [
        ['config', 'set', 'test-key', 'nope'],
        'test-key must be a test key: your service prefix, _test_, then at least 12 letters or digits.',
      ],
      // Shaped right but short, or with a character no key has: said as what it is.
      [
        ['config', 'set', 'test-key', 'ck_test_abc'],
        'test-key is too short: 3 letters or digits after ck_test_, where a key has at least 12.',
      ],
      [
        ['config', 'set', 'live-key', 'ck_live_abc'],
        'live-key is too short: 3 letters or digits after ck_live_, where a key has at least 12.',
      ],
      [
        ['config', 'set', 'live-key', `${FAKE_LIVE}-x`],
        'live-key may hold only letters and digits after ck_live_, and this one holds other characters.',
      ],
      [['config', 'set', 'test-key', 'ck_test_abcdefghijkl mnop'], 'holds a space or line break.'],
      [['config', 'set', 'base-url', 'not a url'], 'base-url must be a URL'],
      // Every command refuses such a URL; set, it would be printed whole by `config list`.
      [
        ['config', 'set', 'base-url', `https://me:${FAKE_LIVE}@api.example.com/api/v1`],
        'error: base-url must not carry a user name or password (a key there would show wherever the URL is printed); nothing was set. Give the key with `carbon config set test-key -` (or live-key).\n',
      ],
      // Every command refuses it too: not stored, and its query (a token) not echoed.
      [
        ['config', 'set', 'base-url', `https://api.example.com/api/v1?token=${FAKE_LIVE}`],
        "error: base-url must not have a query (?) or a fragment (#): every request's path follows it; nothing was set.\n",
      ],
      [['config', 'set', 'base-url', 'https://api.example.com/api/v1#x'], 'must not have a query (?) or a fragment (#)'],
    ] as const) {
      const r = await carbon([...args], { home });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(message);
      // The refusal alone: no warning about a key on the command line that was not kept.
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(leakedKeys(r.stderr, [FAKE_LIVE])).toEqual([]);
    }
    expect(() => statSync(join(home, 'config.json'))).toThrow();
    // A key taken from the command line is warned about (the test sees what it should).
    const taken = await carbon(['config', 'set', 'live-key', FAKE_LIVE], { home });
    expect([taken.exitCode, taken.stderr.split('\n')[0]]).toEqual([
      0,
      'warning: an API key typed on the command line can be read by other users (ps) and stays in shell history; prefer `carbon config set live-key -` with the key on stdin.',
    ]);
  });

  test('config commands still work when CARBON_API_KEY is broken, so it can be inspected', async () => {
    const home = newHome();
    const r = await carbon(['config', 'list'], { home, env: { CARBON_API_KEY: 'garbage' } });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('CARBON_API_KEY is set in this environment');
    expect((await carbon(['balance'], { home, env: { CARBON_API_KEY: 'garbage' } })).exitCode).toBe(2);
  });
});

describe('config set KEY - on a terminal', () => {
  // Typed only once the question is on the screen: a terminal echoes what arrives before carbon reads.
  async function typeAfterQuestion(home: string, args: string[], typed: string): Promise<{ output: string; exitCode: number }> {
    const child = execa('script', ['-qec', `exec ${[process.execPath, BIN(), ...args].map(sh).join(' ')}`, '/dev/null'], {
      env: baseEnv(home, { TERM: 'xterm-256color', ...TTY }),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
      timeout: limit(20_000),
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      if (output.includes('then press Enter: ') && typed !== '') {
        child.stdin!.write(typed);
        typed = '';
      }
    });
    const r = await child;
    return { output, exitCode: r.exitCode ?? -1 };
  }

  test('asks, and what is pasted is not shown: neither echoed by the terminal nor printed', async () => {
    const home = newHome();
    const r = await typeAfterQuestion(home, ['config', 'set', 'test-key', '-'], `${FAKE_TEST}\r`);
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain('Paste or type the test-key (it will not be shown), then press Enter: ');
    expect(r.output).toContain(`Set test-key of profile default to ${maskKey(FAKE_TEST)}.`);
    expect(r.output).not.toContain(FAKE_TEST);
    expect((await ok(['config', 'get', 'test-key', '--reveal'], { home })).stdout).toBe(`${FAKE_TEST}\n`);
  });

  test('Ctrl-C at the question sets nothing: one plain line, exit 130', async () => {
    const home = newHome();
    const r = await typeAfterQuestion(home, ['config', 'set', 'live-key', '-'], '\u0003');
    expect(r.exitCode).toBe(130);
    expect(r.output).toContain('Cancelled; nothing was set.');
    expect(() => statSync(join(home, 'config.json'))).toThrow();
  });
});

describe('files', () => {
  test('a CARBON_HOME that is a file is said as one, for every command; nothing is made', async () => {
    const home = newHome();
    const file = join(home, 'not-a-dir');
    writeFileSync(file, 'x');
    for (const args of [['balance'], ['buy', '--kg', '5'], ['config', 'list'], ['config', 'set', 'mode', 'live']]) {
      const r = await carbon(args, { home, env: { CARBON_HOME: file } });
      expect({ args, ...r }).toEqual({
        args,
        exitCode: 1,
        stdout: '',
        stderr: `error: ${file} is not a directory: carbon keeps its config and its ledger in one. Set CARBON_HOME to a directory (carbon makes it if it is missing).\n`,
      });
    }
    expect(readFileSync(file, 'utf8')).toBe('x');
    // One longer than the system takes is said as the path to shorten, not a config file to fix.
    const long = join(home, ...Array.from({ length: 20 }, (_, i) => String.fromCharCode(97 + i).repeat(250)));
    const r = await carbon(['balance'], { home, env: { CARBON_HOME: long } });
    expect([r.exitCode, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toMatch(
      /^error: The path to carbon's config is longer than this system takes \(\d+ characters\)\. Set CARBON_HOME to a shorter path\.\n$/,
    );
  });

  test('the config file is 0600 in a 0700 directory created for it', async () => {
    const home = join(newHome(), 'fresh', 'carbon-home');
    await ok(['config', 'set', 'test-key', FAKE_TEST], { home });
    expect(statSync(join(home, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    // Still 0600 after a rewrite.
    await ok(['config', 'set', 'mode', 'test'], { home });
    expect(statSync(join(home, 'config.json')).mode & 0o777).toBe(0o600);
  });

  test('a directory made before (mkdir, 0755, as a CI job does) is 0700 once the config is written there, said once', async () => {
    const home = join(newHome(), 'made-by-ci');
    mkdirSync(home, { mode: 0o755 });
    chmodSync(home, 0o755);
    const set = await carbon(['config', 'set', 'base-url', 'http://127.0.0.1:9/api/v1'], { home });
    expect([set.exitCode, statSync(home).mode & 0o777]).toEqual([0, 0o700]);
    expect(set.stderr.split('\n')[0]).toBe(`carbon: ${home} was readable by others (mode 755); it holds API keys, so it is now 700.`);
    // The next command has nothing to say about it.
    expect((await carbon(['config', 'list'], { home })).stderr).toBe('');
  });

  test('nothing set: nothing on stdout; one line on stderr saying how to set a key, only when stderr is a terminal', async () => {
    const home = newHome();
    const said = `Nothing is set in ${join(home, 'config.json')}: carbon uses the local engine, in test mode. Set a key with \`carbon config set test-key -\` (it asks for the key, or reads it from stdin; or base-url, mode, live-key).`;
    // A script: nothing at all, exit 0; --json: the empty config.
    expect(await carbon(['config', 'list'], { home })).toEqual({ stdout: '', stderr: '', exitCode: 0 });
    expect(await json(['config', 'list'], { home })).toEqual({
      config_file: join(home, 'config.json'),
      current_profile: 'default',
      selected_profile: 'default',
      profiles: {},
    });
    // A person at a terminal (the last line end is dropped by execa).
    expect(await carbonTty(['config', 'list'], { home, env: TTY })).toEqual({ output: said, exitCode: 0 });
    // stdout into a file, stderr still the terminal: the file stays empty, the terminal gets the line.
    const out = join(home, 'out.txt');
    const piped = await execa(
      'script',
      ['-qec', `exec ${[process.execPath, BIN(), 'config', 'list'].map(sh).join(' ')} > ${sh(out)}`, '/dev/null'],
      {
        env: baseEnv(home, TTY),
        extendEnv: false,
        reject: false,
        input: '',
        timeout: limit(20_000),
      },
    );
    expect([piped.exitCode, String(piped.stdout).replace(/\r\n/g, '\n'), readFileSync(out, 'utf8')]).toEqual([0, said, '']);
    // A profile with nothing left in it is nothing set too, for a script.
    await ok(['config', 'set', 'mode', 'test'], { home });
    await ok(['config', 'unset', 'mode'], { home });
    expect(await carbon(['config', 'list'], { home })).toEqual({ stdout: '', stderr: '', exitCode: 0 });
  });

  test('unsetting what is not set writes nothing: no config file is made, a kept one is left as it was', async () => {
    const home = newHome();
    const r = await ok(['config', 'unset', 'mode'], { home });
    expect(r.stderr).toBe('mode was not set in profile default; nothing to remove.\n');
    expect(readdirSync(home)).toEqual([]);
    // A file as a person wrote it (their spacing, no trailing newline) is not rewritten.
    const text = '{"profiles":{"default":{"mode":"test"}}}';
    writeFileSync(join(home, 'config.json'), text);
    await ok(['config', 'unset', 'base-url'], { home });
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe(text);
  });

  test('get and unset of a profile that does not exist: refused as every command refuses it (exit 2), not read as a key not set', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'ci', 'mode', 'live'], { home });
    const before = readFileSync(join(home, 'config.json'), 'utf8');
    const said =
      'error: No profile named "cl". List profiles with `carbon config list`; create one with `carbon config set --profile NAME ...`.\n';
    for (const args of [
      ['config', 'get', 'mode', '--profile', 'cl'],
      ['config', 'unset', 'mode', '--profile', 'cl'],
    ])
      expect(await carbon(args, { home })).toEqual({ stdout: '', stderr: said, exitCode: 2 });
    expect(await carbon(['config', 'get', 'mode'], { home, env: { CARBON_PROFILE: 'cl' } })).toEqual({
      stdout: '',
      stderr: said,
      exitCode: 2,
    });
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe(before);
    expect((await ok(['config', 'get', 'mode', '--profile', 'ci'], { home })).stdout).toBe('live\n');
  });

  test('a misspelt top-level field is refused as an unknown field in a profile is: no command runs on the default profile unsaid', async () => {
    const home = newHome();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ curent_profile: 'prod', profiles: { prod: { mode: 'live' } } }));
    for (const args of [['balance'], ['config', 'list']]) {
      const r = await carbon(args, { home });
      expect([r.exitCode, r.stdout], args.join(' ')).toEqual([1, '']);
      expect(r.stderr).toBe(
        `error: The config file ${join(home, 'config.json')} cannot be used: it has an unknown field "curent_profile" (carbon reads current_profile and profiles). Fix it by hand, or move it aside and set your keys again with \`carbon config set\`.\n`,
      );
    }
  });

  test('a hand-broken config is reported, not thrown', async () => {
    const home = newHome();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { default: { test_key: 5 } } }));
    const r = await carbon(['config', 'list'], { home });
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('field "test_key" is not a string');
  });

  test('a config that is not JSON is said where, without the text around it: it holds keys', async () => {
    const home = newHome();
    const key = `ck_live_${'Ab3'.repeat(8)}`;
    for (const [text, said] of [
      [`{"profiles":{"default":{"live_key":${key}}}}`, "it is not valid JSON (unexpected 'c')"],
      [`{"profiles":{"default":{"live_key":"${key}",}}}`, 'it is not valid JSON (Expected double-quoted property name in JSON at position'],
      // A character nobody sees (a zero-width space pasted in) is named by its code, not quoted.
      ['\u200b{"profiles":{}}', 'it is not valid JSON (unexpected U+200B)'],
    ] as const) {
      writeFileSync(join(home, 'config.json'), text);
      const r = await carbon(['config', 'list'], { home });
      expect([r.exitCode, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toContain(said);
      // Not the key, nor any eight characters of it.
      expect(r.stderr).not.toContain(key.slice(8, 16));
    }
    // A byte-order mark, as Notepad saves one, is read past: the file is used.
    writeFileSync(join(home, 'config.json'), `\ufeff{"profiles":{"default":{"mode":"live"}}}`, { mode: 0o600 });
    expect((await json<{ profiles: object }>(['config', 'list'], { home })).profiles).toEqual({ default: { mode: 'live' } });
    await ok(['config', 'set', 'mode', 'test'], { home });
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toMatch(/^\{\n {2}"profiles"/);
    expect((await json<{ profiles: object }>(['config', 'list'], { home })).profiles).toEqual({ default: { mode: 'test' } });
  });
});

describe('keys in use', () => {
  test("a hand-edited profile whose test-key is a live key is refused before anything is sent: a 'test' purchase would spend real money", async () => {
    const home = newHome();
    // config set refuses this; a hand edit (keys swapped) does not go through it.
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ profiles: { default: { test_key: FAKE_LIVE, live_key: FAKE_TEST, base_url: 'http://127.0.0.1:9/api/v1' } } }),
      { mode: 0o600 },
    );
    const line = (mode: string, other: string) =>
      `error: The ${mode}-key of profile default is a ${other} key: nothing was sent, as this ${mode}-mode call would have been made in ${other} mode. Put each key in its place: \`carbon config set ${other}-key -\` for this one, and \`carbon config set ${mode}-key -\` for a ${mode} key.\n`;
    for (const [args, mode, other] of [
      [['buy', '--kg', '5'], 'test', 'live'],
      [['balance'], 'test', 'live'],
      [['impact', '--local'], 'test', 'live'],
      [['buy', '--kg', '5', '--live', '--yes'], 'live', 'test'],
    ] as const) {
      const r = await carbon([...args], { home });
      expect({ args, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({
        args,
        exitCode: 2,
        stdout: '',
        stderr: line(mode, other),
      });
    }
    // The command that is there to fix it still reads it.
    expect((await ok(['config', 'list'], { home })).stdout).toContain(`default\ttest-key\t${maskKey(FAKE_LIVE)}\n`);
    // One key misplaced stops the calls of the other mode too, on the local model as on a remote API: not only those that would send it.
    const other = (mode: string, wrong: string) =>
      `error: The ${wrong}-key of profile default is a ${mode} key: nothing was sent, as a ${wrong}-mode call would be made in ${mode} mode. Put each key in its place: \`carbon config set ${mode}-key -\` for this one, and \`carbon config set ${wrong}-key -\` for a ${wrong} key.\n`;
    for (const [profile, args, mode, wrong] of [
      [{ test_key: FAKE_LIVE }, ['buy', '--kg', '5', '--live', '--yes'], 'live', 'test'],
      [{ live_key: FAKE_TEST }, ['buy', '--kg', '5'], 'test', 'live'],
      [{ live_key: FAKE_TEST, base_url: 'http://127.0.0.1:9/api/v1' }, ['balance'], 'test', 'live'],
    ] as const) {
      writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { default: profile } }), { mode: 0o600 });
      const r = await carbon([...args], { home });
      expect({ args, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({
        args,
        exitCode: 2,
        stdout: '',
        stderr: other(mode, wrong),
      });
    }
    // Nothing was bought: the local model's ledger was never made.
    expect(existsSync(join(home, 'data', 'ledger.db'))).toBe(false);
  });

  test('a hand-edited profile key that is no test or live key is refused before anything is sent, as CARBON_API_KEY is', async () => {
    const home = newHome();
    // A server that records what reaches it: nothing must.
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
      writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { default: { test_key: 'SuperSecret123', base_url: base } } }), {
        mode: 0o600,
      });
      const r = await carbon(['balance'], { home });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        2,
        '',
        "error: The test-key of profile default is not a test or live key (expected a prefix, then _test_… or _live_…, as in the sandbox's ck_test_…); nothing was sent. Set it again: `carbon config set test-key -`.\n",
      ]);
      // Shaped as a key, with what no bearer token holds (a space): not sent either.
      writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { default: { test_key: 'ck_test_abc def', base_url: base } } }));
      const spaced = await carbon(['balance'], { home });
      expect([spaced.exitCode, spaced.stderr]).toEqual([
        2,
        'error: The API key from the test-key of profile default holds a character no bearer token has (a space, or a letter outside ASCII); nothing was sent.\n',
      ]);
      // A key pasted with its line's end: named as such.
      writeFileSync(
        join(home, 'config.json'),
        JSON.stringify({ profiles: { default: { test_key: `ck_test_${'a'.repeat(32)}\n`, base_url: base } } }),
      );
      const newline = await carbon(['balance'], { home });
      expect([newline.exitCode, newline.stderr]).toEqual([
        2,
        'error: The test-key of profile default has white space at an end, or a control character (a newline pasted with it?): nothing was sent. Set it again: `carbon config set test-key -`.\n',
      ]);
      expect(asked).toEqual([]);
    } finally {
      server.close();
    }
  });

  test('a command printed to fix a profile names it when it is not the current one, default included', async () => {
    const home = newHome();
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({
        current_profile: 'staging',
        profiles: { default: { base_url: 'http://127.0.0.1:9/api/v1' }, staging: { base_url: 'http://127.0.0.1:9/api/v1' } },
      }),
      { mode: 0o600 },
    );
    const missing = async (args: string[], env: Record<string, string> = {}) => (await carbon(args, { home, env })).stderr;
    // The current profile: `config set` goes there without --profile.
    expect(await missing(['balance'])).toContain('or run `carbon config set test-key -`.');
    // Another, by --profile or CARBON_PROFILE: without it, the command would set the current one's key.
    expect(await missing(['balance', '--profile', 'default'])).toContain('or run `carbon config set --profile default test-key -`.');
    expect(await missing(['balance', '--live'], { CARBON_PROFILE: 'default' })).toContain(
      'or run `carbon config set --profile default live-key -`.',
    );
    // A key of the other mode in that profile: each fix names it too.
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ current_profile: 'staging', profiles: { default: { test_key: FAKE_LIVE }, staging: {} } }),
      { mode: 0o600 },
    );
    expect(await missing(['balance', '--profile', 'default'])).toContain(
      'Put each key in its place: `carbon config set --profile default live-key -` for this one, and `carbon config set --profile default test-key -` for a test key.',
    );
  });

  test('a configured key is used (it survives revoking the sandbox default), and is never printed in full', async () => {
    const home = newHome();
    const created = await json<{ id: string; secret: string }>(['sandbox', 'keys', 'create'], { home });
    await ok(['config', 'set', 'test-key', created.secret], { home });
    const keys = await sandboxKeys(home);
    const defaultId = (keys.all.find((k) => k.default === 'test') as { id: string }).id;
    await ok(['sandbox', 'keys', 'revoke', defaultId], { home });
    expect((await ok(['balance'], { home })).exitCode).toBe(0);

    const all = await fullKeys(home);
    const outputs = [
      await ok(['config', 'list'], { home }),
      await ok(['config', 'list', '--json'], { home }),
      await ok(['config', 'get', 'test-key'], { home }),
      await ok(['sandbox', 'keys'], { home }),
      await ok(['sandbox', 'keys', '--json'], { home }),
    ];
    for (const r of outputs) expect(leakedKeys(r.stdout + r.stderr, all)).toEqual([]);
  });

  test('--api-key works with a warning; errors never echo the key', async () => {
    const home = newHome();
    const keys = await sandboxKeys(home);
    const r = await ok(['balance', '--api-key', keys.test], { home });
    expect(r.stderr).toMatch(/^warning: an API key given with --api-key can be read by other users/m);
    expect(r.stderr).toContain('CARBON_API_KEY');
    expect(leakedKeys(r.stdout + r.stderr, [keys.test])).toEqual([]);

    // The env var gets no warning.
    expect((await ok(['balance'], { home, env: { CARBON_API_KEY: keys.test } })).stderr).toBe('');

    // A well-formed key the sandbox does not know: the local model uses its own (exit 0, said on
    // stderr); something that is no key at all: a usage error. Neither echoes what was given.
    const unknown = `ck_test_${'Q'.repeat(32)}`;
    for (const [key, code] of [
      [unknown, 0],
      ['not-a-key-at-all-but-secret', 2],
    ] as const) {
      for (const extra of [[], ['--json']]) {
        const r = await carbon(['balance', '--api-key', key, ...extra], { home });
        expect(r.exitCode).toBe(code);
        if (code !== 0) expect(r.stdout).toBe('');
        expect(r.stdout + r.stderr).not.toContain(key);
      }
    }
    const id = (keys.all.find((k) => k.default === 'test') as { id: string }).id;
    await ok(['sandbox', 'keys', 'revoke', id], { home });
    const revoked = await carbon(['balance', '--api-key', keys.test], { home });
    expect(revoked.exitCode).toBe(4);
    expect(leakedKeys(revoked.stderr, [keys.test])).toEqual([]);
  });
});
