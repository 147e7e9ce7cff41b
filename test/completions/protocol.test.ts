import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, FORMATS, makeFixture, TOP_COMMANDS } from '../support/completion-fixture.js';
import { limit } from '../support/load.js';
import { carbon, makeSandbox, SCRIPT, values } from '../support/shells.js';

/** The built binary's side: `carbon completion SHELL` and the `carbon __complete` protocol. */

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
}, 180_000);
afterAll(() => fx?.sandbox.cleanup());

describe('carbon completion SHELL', () => {
  it.each(['bash', 'zsh', 'fish'] as const)('prints completions/ for %s byte for byte, and nothing on stderr', async (shell) => {
    const r = await carbon(fx.sandbox, ['completion', shell]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    // execa strips the final newline; the files end with exactly one.
    expect(`${r.stdout}\n`).toBe(readFileSync(SCRIPT[shell], 'utf8'));
  });

  it('refuses an unknown shell with a usage error (exit 2), nothing on stdout', async () => {
    const r = await carbon(fx.sandbox, ['completion', 'powershell']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bash, zsh, fish, not "powershell"/);
    const missing = await carbon(fx.sandbox, ['completion']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stdout).toBe('');
  });

  it('explains how to install each script', async () => {
    const r = await carbon(fx.sandbox, ['completion', '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('carbon completion bash > ~/.local/share/bash-completion/completions/carbon');
    expect(r.stdout).toContain('_carbon');
    expect(r.stdout).toContain('carbon completion fish > ~/.config/fish/completions/carbon.fish');
  });

  it('is listed in carbon --help; the helper is not', async () => {
    const r = await carbon(fx.sandbox, ['--help']);
    expect(r.stdout).toMatch(/^\s+completion \[options\] \[shell\]/m);
    expect(r.stdout).not.toContain('__complete');
  });
});

describe('carbon __complete', () => {
  it('prints VALUE<TAB>DESCRIPTION lines for the commands', async () => {
    const r = await carbon(fx.sandbox, ['__complete', '--', '']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(values(r.stdout)).toEqual(expect.arrayContaining(TOP_COMMANDS));
    expect(r.stdout).toMatch(/^buy\tbuy offsets, charged to the balance$/m);
  });

  it('describes --timeout by all it bounds: watch --until-settled too, not only requests and --wait', async () => {
    const r = await carbon(fx.sandbox, ['__complete', '--', 'watch', '--']);
    expect(r.stdout).toMatch(
      /^--timeout\tper request timeout, and how long --wait \(or watch --until-settled\) waits \(env CARBON_TIMEOUT\)$/m,
    );
  });

  it('offers --format values and profiles from the config file', async () => {
    expect(values((await carbon(fx.sandbox, ['__complete', '--', 'list', '--format', ''])).stdout)).toEqual(FORMATS);
    const profiles = await carbon(fx.sandbox, ['__complete', '--', '--profile', '']);
    expect(values(profiles.stdout)).toEqual(['default', 'staging']);
    // With no config file at all, `default` is still there to use (`carbon config use default`).
    const empty = join(fx.sandbox.home, 'no-config');
    for (const words of [
      ['config', 'use', ''],
      ['--profile', ''],
    ])
      expect(values((await carbon(fx.sandbox, ['__complete', '--', ...words], { CARBON_HOME: empty })).stdout)).toEqual(['default']);
    // `config delete` offers only what the file holds: an unwritten `default` has nothing to delete.
    expect(values((await carbon(fx.sandbox, ['__complete', '--', 'config', 'delete', ''])).stdout)).toEqual(['default', 'staging']);
    expect(values((await carbon(fx.sandbox, ['__complete', '--', 'config', 'delete', ''], { CARBON_HOME: empty })).stdout)).toEqual([]);
    // Where a profile points, never its keys.
    expect(profiles.stdout).toMatch(/^staging\tlive · https:\/\/api\.example\.com\/api\/v1$/m);
  });

  it('offers the newest offset ids for show, from the local model, quickly', async () => {
    const started = Date.now();
    const r = await carbon(fx.sandbox, ['__complete', '--', 'show', '']);
    expect(Date.now() - started).toBeLessThan(limit(5_000));
    expect(r.exitCode).toBe(0);
    expect(values(r.stdout)).toEqual(fx.offsetIds);
    expect(r.stdout).toMatch(new RegExp(`^${fx.offsetIds[0]}\\t20 kg · \\w+ · \\d{4}-\\d\\d-\\d\\d$`, 'm'));
  });

  it('offers sandbox review what waits for review, and sandbox fail what is processing, of either mode', async () => {
    const sandbox = makeSandbox();
    try {
      const ok = async (args: string[]) => {
        const r = await carbon(sandbox, args);
        expect(r.exitCode, r.stderr).toBe(0);
        return r.stdout;
      };
      // A test offset placed (the model's clock moved on), and a live one held for review above $1.
      const placed = await ok(['buy', '--kg', '5', '-q']);
      await ok(['sandbox', 'clock', 'advance', '1m']);
      await ok(['sandbox', 'topup', '250', '--live']);
      await ok(['sandbox', 'review-limit', '1']);
      const held = await ok(['buy', '--kg', '100', '--live', '--yes', '-q']);
      const review = await carbon(sandbox, ['__complete', '--', 'sandbox', 'review', 'approve', '']);
      expect(values(review.stdout)).toEqual([held]);
      expect(review.stdout).toMatch(new RegExp(`^${held}\\t100 kg · live · \\d{4}-\\d\\d-\\d\\d$`, 'm'));
      expect(values((await carbon(sandbox, ['__complete', '--', 'sandbox', 'fail', ''])).stdout)).toEqual([held]);
      // Once decided, it waits for nothing and is no longer processing: neither offers it.
      await ok(['sandbox', 'review', 'approve', held]);
      expect((await carbon(sandbox, ['__complete', '--', 'sandbox', 'review', 'reject', ''])).stdout).toBe('');
      expect((await carbon(sandbox, ['__complete', '--', 'sandbox', 'fail', ''])).stdout).toBe('');
      expect(placed).not.toBe('');
    } finally {
      sandbox.cleanup();
    }
  });

  it('leaves no trace in the request journal: carbon logs shows what was sent, not what was completed', async () => {
    const sandbox = makeSandbox();
    try {
      const bought = await carbon(sandbox, ['buy', '--kg', '5', '--json']);
      expect(bought.exitCode, bought.stderr).toBe(0);
      const journal = async () => (await carbon(sandbox, ['logs'])).stdout;
      const before = await journal();
      expect(before).toContain('POST\t/api/v1/offsets');
      for (const words of [
        ['show', ''],
        ['sandbox', 'fail', ''],
        ['sandbox', 'review', 'approve', ''],
        ['sandbox', 'keys', 'revoke', ''],
      ]) {
        expect(await carbon(sandbox, ['__complete', '--', ...words])).toMatchObject({ exitCode: 0, stderr: '' });
      }
      expect(values((await carbon(sandbox, ['__complete', '--', 'show', ''])).stdout)).toEqual([JSON.parse(bought.stdout).id]);
      expect(await journal()).toBe(before);
    } finally {
      sandbox.cleanup();
    }
  });

  it('leaves a config file readable by others as it is, for the next command to tighten and say so', async () => {
    const sandbox = makeSandbox();
    try {
      const config = join(sandbox.home, 'config.json');
      writeFileSync(config, JSON.stringify({ profiles: { default: {}, ci: {} } }));
      chmodSync(config, 0o644);
      chmodSync(sandbox.home, 0o755);
      expect(await carbon(sandbox, ['buy', '--kg', '5', '-q'])).toMatchObject({ exitCode: 0 });
      chmodSync(config, 0o644);
      chmodSync(sandbox.home, 0o755);
      for (const words of [
        ['--profile', ''],
        ['show', ''],
      ]) {
        const r = await carbon(sandbox, ['__complete', '--', ...words]);
        expect(r).toMatchObject({ exitCode: 0, stderr: '' });
        expect(r.stdout).not.toBe('');
      }
      expect([statSync(config).mode & 0o777, statSync(sandbox.home).mode & 0o777]).toEqual([0o644, 0o755]);
      // A TAB's stderr goes nowhere: the command the user runs next is the one to tell them.
      const next = await carbon(sandbox, ['balance']);
      expect(next.stderr).toContain('config.json was readable by others (mode 644); it holds API keys, so it is now 600.');
      expect(statSync(config).mode & 0o777).toBe(0o600);
    } finally {
      sandbox.cleanup();
    }
  });

  it('prints nothing and exits 0 when anything goes wrong', async () => {
    // A profile that does not exist, a key that is not a key, an API nobody answers.
    for (const [args, env] of [
      [['--profile', 'nope', 'show', ''], {}],
      [['show', ''], { CARBON_API_KEY: 'not-a-key' }],
      [['show', ''], { CARBON_BASE_URL: 'http://127.0.0.1:9/api/v1', CARBON_API_KEY: 'ck_test_0123456789abcdef' }],
      [['--profile', 'staging', 'show', ''], {}],
    ] as const) {
      const r = await carbon(fx.sandbox, ['__complete', '--', ...args], env);
      expect({ args, ...r }).toEqual({ args, stdout: '', stderr: '', exitCode: 0 });
    }
  });

  it('offers nothing, and ends, when the API takes the connection and never answers', { timeout: limit(30_000) }, async () => {
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as import('node:net').AddressInfo;
      const env = { CARBON_BASE_URL: `http://127.0.0.1:${port}/api/v1`, CARBON_API_KEY: 'ck_test_0123456789abcdef' };
      const r = await carbon(fx.sandbox, ['__complete', '--', 'show', ''], env);
      expect(r).toEqual({ stdout: '', stderr: '', exitCode: 0 });
      // It was asked (the request reached the server): the lookup gave up on it, not on a refused connection.
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('prints nothing and exits 0 on a broken config file, and creates no local model', async () => {
    const sandbox = makeSandbox();
    try {
      expect((await carbon(sandbox, ['__complete', '--', 'show', ''])).stdout).toBe('');
      expect(existsSync(join(sandbox.home, 'data'))).toBe(false);
      writeFileSync(join(sandbox.home, 'config.json'), '{ not json');
      for (const words of [
        ['show', ''],
        ['--profile', ''],
      ]) {
        const r = await carbon(sandbox, ['__complete', '--', ...words]);
        expect(r).toEqual({ stdout: '', stderr: '', exitCode: 0 });
      }
      // Commands still complete: they come from the command tree, not the config.
      expect(values((await carbon(sandbox, ['__complete', '--', 'sh'])).stdout)).toContain('show');
    } finally {
      sandbox.cleanup();
    }
  });
});
