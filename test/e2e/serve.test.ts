import { hostname } from 'node:os';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, homes, json, leakedKeys, maskKey, ok, plain, sandboxKeys, serve, sh } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * `carbon serve` as a user runs it: one JSON line on stdout, a banner on stderr with masked keys,
 * the CLI's remote engine driven against it, state shared with the local engine of the same
 * CARBON_HOME, and a graceful exit 0 on SIGTERM or SIGINT.
 */

const newHome = homes();

interface Offset {
  id: string;
  kg: number;
  reference: string | null;
}

describe('carbon serve', () => {
  test('prints one JSON line and a masked banner, serves the CLI, shares state, exits 0 on SIGTERM', async () => {
    const home = newHome();
    const server = await serve(home);
    const keys = await sandboxKeys(home);

    expect(server.ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(Number(new URL(server.ready.url).port)).toBeGreaterThan(0);
    expect(server.ready).toEqual({
      url: server.ready.url,
      test_key: maskKey(keys.test),
      read_only_key: maskKey(keys.readOnly),
      live_key: maskKey(keys.live),
      // The one-time login link is a secret until used: masked, as the keys are.
      developer_page_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/login\?token=…[A-Za-z0-9_-]{4}$/),
      pid: expect.any(Number),
      instance: `${hostname()}:${server.ready.pid}`,
    });
    const banner = server.stderr();
    expect(banner).toContain(`instance       ${hostname()}:${server.ready.pid}`);
    expect(banner).toContain(`carbon sandbox API at ${server.url}`);
    expect(banner).toContain(`test key       ${maskKey(keys.test)}`);
    expect(banner).toContain(`read-only key  ${maskKey(keys.readOnly)}`);
    expect(banner).toContain(`developer page ${server.ready.developer_page_url}\n`);
    expect(banner).toContain('(a new link: `carbon sandbox login --print`)');
    expect(server.stdout() + banner).not.toMatch(/token=[A-Za-z0-9_-]{5}/);
    expect(banner).toMatch(
      new RegExp(`Try: CARBON_API_KEY=\\S.* CARBON_BASE_URL=${server.url.replace(/[./]/g, '\\$&')} carbon buy --kg 500`),
    );

    const remote = { home, env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test } };
    const bought = await json<Offset>(['buy', '--kg', '500', '--reference', 'through-serve'], remote);
    expect(bought).toMatchObject({ kg: 500, reference: 'through-serve' });
    expect((await json<{ data: Offset[] }>(['list'], remote)).data.map((o) => o.id)).toEqual([bought.id]);
    expect((await json<Offset>(['show', bought.id], remote)).id).toBe(bought.id);
    expect(await json(['balance'], remote)).toMatchObject({ object: 'balance', available_cents: 98_000 });
    expect(await json(['impact'], remote)).toMatchObject({ object: 'impact', offsets: 1 });
    const plain = await ok(['show', bought.id], remote);
    expect(plain.stdout).toContain(`id\t${bought.id}\n`);

    // The same ledger: the purchase shows on the local engine, and a local top-up is served.
    // Its status is settled by the model's clock (a minute on: placed), never by how long this took.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const local = await ok(['list', '--local'], { home, env: { CARBON_BASE_URL: server.url } });
    expect(local.stdout).toContain(`${bought.id}\tplaced\t500\t2000\tthrough-serve\t`);
    expect((await json<Offset & { status: string }>(['show', bought.id], remote)).status).toBe('placed');
    await ok(['sandbox', 'topup', '250'], { home });
    expect(await json(['balance'], remote)).toMatchObject({ available_cents: 123_000 });

    // The access log masks the key; no full key anywhere in what the server printed.
    expect(server.stderr()).toMatch(/POST \/api\/v1\/offsets 201 .* key=ck_test_\.\.\./);
    expect(
      leakedKeys(
        server.stderr() + server.stdout(),
        keys.all.map((k) => k.secret as string),
      ),
    ).toEqual([]);

    const stopped = await server.stop('SIGTERM');
    expect(stopped.exitCode).toBe(0);
    expect(server.stderr()).toContain('SIGTERM: closing');
    expect(server.stdout().split('\n').filter(Boolean)).toHaveLength(1);
  });

  test("the local engine's certificate_url is on the address the newest carbon serve on the ledger recorded", async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const bought = await json<{ id: string }>(['buy', '--kg', '10', '--live', '--yes'], { home });
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    // Before any server ran: carbon serve's default address (README: `carbon open` shows the page).
    const before = await json<{ certificate_url: string }>(['show', bought.id, '--live'], { home });
    expect(before.certificate_url).toMatch(/^http:\/\/127\.0\.0\.1:4010\/certificates\/cert_\w+$/);
    const server = await serve(home);
    try {
      const local = await json<{ certificate_url: string }>(['show', bought.id, '--live'], { home });
      expect(local.certificate_url).toBe(`${server.origin}${new URL(before.certificate_url).pathname}`);
      // The same address the server gives, and it answers there.
      const served = await json<{ certificate_url: string }>(['show', bought.id, '--live', '--base-url', server.url], {
        home,
        env: { CARBON_API_KEY: (await sandboxKeys(home)).live },
      });
      expect(served.certificate_url).toBe(local.certificate_url);
      const page = await fetch(local.certificate_url);
      expect([page.status, await page.text()]).toEqual([200, expect.stringContaining(bought.id)]);
    } finally {
      await server.stop();
    }
  });

  test('--show-keys prints the keys and the login link in full; SIGINT also exits 0', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const keys = await sandboxKeys(home);
    expect(server.ready).toMatchObject({ test_key: keys.test, read_only_key: keys.readOnly, live_key: keys.live });
    expect(server.stderr()).toContain(`CARBON_API_KEY=${keys.test} CARBON_BASE_URL=${server.url} carbon buy --kg 500`);
    const link = server.ready.developer_page_url;
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?token=[A-Za-z0-9_-]{32}$/);
    expect(server.stderr()).toContain(`developer page ${link}\n`);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303); // it signs in
    expect((await server.stop('SIGINT')).exitCode).toBe(0);
  });

  test('SIGHUP (the shell or ssh session it was started from went away) closes it as SIGTERM does: drained, exit 0', async () => {
    const server = await serve(newHome());
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
    const stopped = await server.stop('SIGHUP');
    expect(stopped).toEqual({ exitCode: 0, signal: undefined });
    expect(server.stderr()).toContain('SIGHUP: closing (send it again to stop at once)');
    expect(server.stderr().trimEnd().split('\n').at(-1)).toMatch(/closed$/);
  });

  test('on a terminal the banner shows the login link in full, and it signs in; the JSON line keeps it masked', async () => {
    const home = newHome();
    const command = `stty cols 120 rows 40; exec ${[process.execPath, BIN(), 'serve', '--port', '0'].map(sh).join(' ')}`;
    const env = baseEnv(home, { TERM: 'xterm-256color' });
    const child = execa('script', ['-qec', command, '/dev/null'], { env, extendEnv: false, reject: false, timeout: limit(20_000) });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        output = plain(output + d).replace(/\r\n/g, '\n');
        if (output.includes('Ctrl-C stops it.') && /^\{"url".*\}$/m.test(output)) resolve();
      });
      void child.then(() => reject(new Error(`carbon serve ended before its banner\n${output}`)));
    });
    const ready = JSON.parse(/^\{"url".*\}$/m.exec(output)![0]) as { developer_page_url: string; pid: number };
    expect(ready.developer_page_url).toMatch(/\/login\?token=…[A-Za-z0-9_-]{4}$/);
    const link = /developer page (\S+)/.exec(output)![1]!;
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?token=[A-Za-z0-9_-]{32}$/);
    expect(link.slice(-4)).toBe(ready.developer_page_url.slice(-4));
    expect(output).toContain('(keys masked: add --show-keys');
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    process.kill(ready.pid, 'SIGTERM');
    expect((await child).exitCode).toBe(0);
  });

  test('a revoked starting key is not advertised: the newest active key of the role is', async () => {
    const home = newHome();
    const keys = await sandboxKeys(home);
    const created = await json<{ secret: string }>(['sandbox', 'keys', 'create'], { home });
    await ok(['sandbox', 'keys', 'revoke', (keys.all.find((k) => k.default === 'test') as { id: string }).id], { home });
    const server = await serve(home, ['--show-keys']);
    expect(server.ready.test_key).toBe(created.secret);
    expect((await server.stop()).exitCode).toBe(0);
  });

  test('a port in use is exit 1 with one line; a bad port, public URL or host is exit 2', async () => {
    const home = newHome();
    const server = await serve(home);
    const port = new URL(server.url).port;
    const busy = await carbon(['serve', '--port', port], { home });
    expect(busy.exitCode).toBe(1);
    expect(busy.stdout).toBe('');
    expect(busy.stderr).toBe(`error: Port ${port} on 127.0.0.1 is already in use. Pick another with --port, or --port 0 for a free one.\n`);
    for (const bad of ['65536', 'http', '-1']) {
      const r = await carbon(['serve', '--port', bad], { home });
      expect(r.exitCode, bad).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect((await carbon(['serve', '--port', '0', '--public-url', 'ftp://x'], { home })).exitCode).toBe(2);
    // A password would be printed (the banner, every certificate_url); a query or fragment would swallow the paths after it.
    const userinfo = await carbon(['serve', '--port', '0', '--public-url', 'https://admin:hunter2pass@sandbox.example.com'], { home });
    expect([userinfo.exitCode, userinfo.stdout, userinfo.stderr.includes('hunter2pass')]).toEqual([2, '', false]);
    expect(userinfo.stderr).toBe(
      'error: --public-url must not carry a user name or password: it is printed, and in every certificate_url.\n',
    );
    for (const url of ['https://x/path?q=1', 'https://x/#f', 'https://x/?']) {
      const r = await carbon(['serve', '--port', '0', '--public-url', url], { home });
      expect([url, r.exitCode, r.stderr]).toEqual([
        url,
        2,
        "error: --public-url must not have a query (?) or a fragment (#): the login link's and certificates' paths follow it.\n",
      ]);
    }
    // A path: the login link and every certificate_url would be under it, and carbon serve answers at the root.
    for (const url of ['https://sandbox.example.com/base', 'https://x/a/b/']) {
      const r = await carbon(['serve', '--port', '0', '--public-url', url], { home });
      expect([url, r.exitCode, r.stdout]).toEqual([url, 2, '']);
      expect(r.stderr).toMatch(
        /^error: --public-url must be an origin such as https:\/\/sandbox\.example\.com, without a path \(\/.+\): carbon serve answers at the root\.\n$/,
      );
    }
    expect((await carbon(['serve', '--port', '0', '--public-url', 'https://x/a'], { home })).stderr).toContain('without a path (/a)');
    // An empty --host ("$HOST" unset) would listen on every interface, as Node reads ''; a space or brackets name no interface.
    for (const host of ['', ' ', 'a b', '[::1]']) {
      const r = await carbon(['serve', '--port', '0', '--host', host], { home });
      expect([host, r.exitCode, r.stdout, r.stderr]).toEqual([
        host,
        2,
        '',
        `error: --host must be an address or a host name, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface), not ${JSON.stringify(host)}.\n`,
      ]);
    }
    expect((await server.stop()).exitCode).toBe(0);
  });
});
