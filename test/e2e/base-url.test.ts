import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, leakedKeys, sandboxKeys } from '../support/cli.js';
import { limit } from '../support/load.js';
import { TLS_CERT, TLS_KEY } from '../support/tls-proxy.js';

/** A base URL that misses /api/v1 is warned about, with the likely fix; one that is no http(s) URL is a usage error. */

const newHome = homes();

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
      expect(wrong.stderr).toContain(
        `warning: the base URL ${origin} does not end in /api/v1, where the API's paths are; did you mean ${origin}/api/v1?`,
      );
      // The server's 404 route_missing is a wrong setting, exit 1: not 5, which a script reads as "no such offset".
      expect(wrong.exitCode).toBe(1);
      const show = await carbon(['show', 'off_x', '--base-url', `${origin}/api/v2`], { home, env });
      expect([show.exitCode, show.stderr]).toEqual([
        1,
        expect.stringMatching(/^warning: .*\nerror: Unrecognized request URL \(GET \/api\/v2\/offsets\/off_x\)/),
      ]);
      // Another version, or /api alone, is corrected in place rather than appended to.
      for (const path of ['/api/v2', '/api']) {
        const other = await carbon(['balance', '--base-url', `${origin}${path}`], { home, env });
        expect(other.stderr).toContain(
          `the base URL ${origin}${path} does not end in /api/v1, where the API's paths are; did you mean ${origin}/api/v1?`,
        );
      }
      const right = await carbon(['balance', '--base-url', server.url], { home, env });
      expect([right.exitCode, right.stderr]).toEqual([0, '']);
    } finally {
      await server.stop();
    }
  });

  test('a key in its path is masked in the warning, as in the error that follows it', async () => {
    const home = newHome();
    const key = (await sandboxKeys(home)).test;
    // Port 1: nothing answers, so the warning and one refused connection are all there is.
    const r = await carbon(['balance', '--base-url', `http://127.0.0.1:1/${key}`, '--max-retries', '0'], {
      home,
      env: { CARBON_API_KEY: key },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^warning: the base URL http:\/\/127\.0\.0\.1:1\/ck_test_…\w{4} does not end in \/api\/v1/m);
    expect(leakedKeys(r.stderr, [key])).toEqual([]);
  });
});

describe('a base URL that is no http(s) URL, or has a query or a fragment', () => {
  const KEY = { CARBON_API_KEY: 'ck_test_abcdefghijklmnop' };
  test.each<[string, string[], Record<string, string>, boolean, RegExp]>([
    [
      '--base-url',
      ['--base-url', 'not-a-url'],
      {},
      false,
      /^error: The base URL from --base-url is not a URL; expected one such as https:\/\//,
    ],
    ['CARBON_BASE_URL', [], { CARBON_BASE_URL: 'not-a-url' }, false, /^error: The base URL from CARBON_BASE_URL is not a URL; /],
    ['the profile', [], {}, true, /^error: The base URL from the base-url of profile default is not a URL; /],
    [
      'CARBON_BASE_URL, ftp',
      [],
      { CARBON_BASE_URL: 'ftp://x/api/v1' },
      false,
      /^error: The base URL from CARBON_BASE_URL must use https:\/\/ .*not ftp:/,
    ],
    [
      '--base-url, a query',
      ['--base-url', 'http://127.0.0.1:9/api/v1?x=1'],
      {},
      false,
      /^error: The base URL from --base-url must not have a query \(\?\) or a fragment \(#\): every request's path follows it; /,
    ],
    [
      'CARBON_BASE_URL, a fragment',
      [],
      { CARBON_BASE_URL: 'http://127.0.0.1:9/api/v1#x' },
      false,
      /must not have a query \(\?\) or a fragment/,
    ],
  ])('from %s: one line naming it, exit 2, with a key or without one', async (_name, args, env, inProfile, message) => {
    const home = newHome();
    if (inProfile)
      writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { default: { base_url: 'http://[x' } } }), { mode: 0o600 });
    for (const extra of [KEY, {}]) {
      const r = await carbon(['balance', ...args], { home, env: { ...env, ...extra } });
      expect([r.exitCode, r.stdout], JSON.stringify(extra)).toEqual([2, '']);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });
});

describe('an offset id that is no path segment', () => {
  test("carbon show '', '.' and '..' ask no URL (they would resolve to /offsets/ or /api/v1/): '' a usage error, the others 404, as on the local model", async () => {
    const home = newHome();
    // A server that answers 200 to anything, as many would to /api/v1/ or /offsets/: what carbon asked is recorded.
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[],"has_more":false}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const env = { CARBON_API_KEY: 'ck_test_abcdefghijklmnop', CARBON_BASE_URL: `http://127.0.0.1:${port}/api/v1` };
      for (const [id, exitCode, stderr] of [
        ['', 2, 'error: The <id> given is empty: give the offset id (off_…); nothing was done.\n'],
        ['.', 5, "error: No such offset: '.'. (param: id)\n"],
        ['..', 5, "error: No such offset: '..'. (param: id)\n"],
      ] as const) {
        const remote = await carbon(['show', id], { home, env });
        const local = await carbon(['show', id], { home });
        expect({ id, exitCode: remote.exitCode, stdout: remote.stdout, stderr: remote.stderr }).toEqual({
          id,
          exitCode,
          stdout: '',
          stderr,
        });
        expect([local.exitCode, local.stderr]).toEqual([exitCode, stderr]);
      }
      expect(asked).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('an answer that is not the object the API answers there', () => {
  test('is refused in one line that asks whether the base URL is right, never read as that object: exit 1, nothing on stdout', async () => {
    const home = newHome();
    // Another JSON service at the base URL: a balance wherever it is asked, or a list of things that are not offsets.
    let body = '{"object":"balance","available_cents":"lots"}';
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const env = { CARBON_API_KEY: 'ck_test_abcdefghijklmnop', CARBON_BASE_URL: `http://127.0.0.1:${port}/api/v1`, CARBON_MAX_RETRIES: '0' };
    try {
      const cases: Array<[string[], string]> = [
        [['show', 'off_1'], 'The API answered GET /offsets/{id} with 200 and an object "balance", where the API answers an offset'],
        [['impact'], 'The API answered GET /impact with 200 and an object "balance", where the API answers an impact'],
        [['list'], 'The API answered GET /offsets with 200 and an object "balance", where the API answers a list'],
        [['quote', '--kg', '5'], 'The API answered POST /quotes with 200 and an object "balance", where the API answers a quote'],
      ];
      for (const [args, said] of cases) {
        const r = await carbon(args, { home, env });
        expect([args[0], r.exitCode, r.stdout]).toEqual([args[0], 1, '']);
        expect(r.stderr).toBe(`error: ${said}; is the base URL right?\n`);
      }
      // The balance it answers is read as one, and shown (the test sees what it should).
      body = '{"object":"balance","livemode":false,"available_cents":5,"currency":"usd","rate_millicents_per_kg":4000}';
      expect((await carbon(['balance', '--json'], { home, env })).exitCode).toBe(0);
      // A balance whose cents are not a whole number is not shown as a figure ($0.1.5).
      for (const [cents, shown] of [
        ['0.15', '0.15'],
        ['"12"', '"12"'],
        ['null', 'null'],
      ]) {
        body = `{"object":"balance","livemode":false,"available_cents":${cents},"currency":"usd"}`;
        const r = await carbon(['balance'], { home, env });
        expect([r.exitCode, r.stdout, r.stderr]).toEqual([
          1,
          '',
          `error: The API answered GET /balance with 200 and a balance whose available_cents is ${shown}, where the API answers a whole number; is the base URL right?\n`,
        ]);
      }
      // A list whose rows are not offsets.
      body = '{"object":"list","data":[{"id":"off_1"}],"has_more":false}';
      for (const args of [['list'], ['list', '--all'], ['report']]) {
        const r = await carbon(args, { home, env });
        expect([args.join(' '), r.exitCode, r.stderr]).toEqual([
          args.join(' '),
          1,
          'error: The API answered GET /offsets with 200 and an object "list" whose data are not all offsets, where the API answers a list; is the base URL right?\n',
        ]);
      }
      const json = await carbon(['list', '--json'], { home, env });
      expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'connection_error' });
      // watch, which polls on through an outage, stops: another service answers the same way every time.
      const watch = await carbon(['watch', '--interval', '50ms'], { home, env, timeout: limit(15_000) });
      expect([watch.exitCode, watch.stderr]).toEqual([
        1,
        'error: The API answered GET /offsets with 200 and an object "list" whose data are not all offsets, where the API answers a list; is the base URL right?\n',
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("a 404 or 405 without the API's error envelope (another server at the base URL)", () => {
  test('is refused as a wrong base URL, exit 1, not as an offset that does not exist (exit 5); a purchase says nothing was bought', async () => {
    const home = newHome();
    // A web server's page, or another JSON service's own 404, wherever it is asked.
    let answer: [number, string, string] = [404, 'text/html', '<html><body>Not Found</body></html>'];
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(answer[0], { 'content-type': answer[1] }).end(answer[2]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const env = { CARBON_API_KEY: 'ck_test_abcdefghijklmnop', CARBON_BASE_URL: `http://127.0.0.1:${port}/api/v1`, CARBON_MAX_RETRIES: '0' };
    try {
      for (const status of [404, 405]) {
        for (const [type, body] of [
          ['text/html', '<html><body>Not Found</body></html>'],
          ['application/json', '{"message":"Not Found"}'],
        ] as const) {
          answer = [status, type, body];
          const cases: Array<[string[], string]> = [
            [['show', 'off_1'], 'GET /offsets/{id}'],
            [['balance'], 'GET /balance'],
            [['list'], 'GET /offsets'],
          ];
          for (const [args, what] of cases) {
            const r = await carbon(args, { home, env });
            expect([args[0], status, type, r.exitCode, r.stdout, r.stderr]).toEqual([
              args[0],
              status,
              type,
              1,
              '',
              `error: The server answered ${what} with ${status} without the API's error envelope; is the base URL right?\n`,
            ]);
          }
          const buy = await carbon(['buy', '--kg', '5'], { home, env });
          expect([buy.exitCode, buy.stderr]).toEqual([
            1,
            `error: The server answered POST /offsets with ${status} without the API's error envelope; is the base URL right? Nothing was bought.\n`,
          ]);
          const json = await carbon(['show', 'off_1', '--json'], { home, env });
          expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'connection_error' });
          // `carbon api` too, whatever the body it prints.
          const api = await carbon(['api', 'GET', '/balance'], { home, env });
          expect([api.exitCode, api.stderr]).toEqual([
            1,
            `error: The server answered GET /balance with ${status} without the API's error envelope; is the base URL right?\n`,
          ]);
          const posted = await carbon(['api', 'POST', '/offsets', '-d', '{"kg":5}'], { home, env });
          expect([posted.exitCode, posted.stderr]).toEqual([
            1,
            `error: The server answered POST /offsets with ${status} without the API's error envelope; is the base URL right? Nothing was bought.\n`,
          ]);
        }
      }
      // Another status without the envelope (a proxy's 403) is not read as a wrong base URL.
      answer = [403, 'text/html', '<html>Forbidden</html>'];
      const forbidden = await carbon(['balance'], { home, env });
      expect([forbidden.exitCode, forbidden.stderr]).toEqual([4, 'error: The server answered 403 without an error envelope.\n']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('carbon api HEAD', () => {
  test('prints nothing and exits by the status, on the local engine and through a carbon serve alike', async () => {
    const home = newHome();
    const keys = await sandboxKeys(home);
    const { serve } = await import('../support/cli.js');
    const server = await serve(home);
    try {
      const local = await carbon(['api', 'HEAD', '/balance'], { home });
      // Before: the served answer (200, no body, as a HEAD's is) was "a body that is not JSON; is the base URL right?", exit 1.
      const served = await carbon(['api', 'HEAD', '/balance'], { home, env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test } });
      expect([local.exitCode, local.stdout, local.stderr]).toEqual([0, '', '']);
      expect([served.exitCode, served.stdout, served.stderr]).toEqual([0, '', '']);
      const missing = await carbon(['api', 'HEAD', '/offsets/off_000000000000000000000000'], {
        home,
        env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test },
      });
      expect([missing.exitCode, missing.stdout]).toEqual([5, '']);
      // The local engine's answer to a HEAD is said as the served one is: its status alone.
      const locally = await carbon(['api', 'HEAD', '/offsets/off_000000000000000000000000', '--json'], { home });
      const served404 = await carbon(['api', 'HEAD', '/offsets/off_000000000000000000000000', '--json'], {
        home,
        env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test },
      });
      expect([locally.exitCode, JSON.parse(locally.stderr).error.code]).toEqual([5, JSON.parse(served404.stderr).error.code]);
      const options = await carbon(['api', 'OPTIONS', '/balance'], { home });
      expect([options.exitCode, options.stderr]).toEqual([
        2,
        'error: The method is GET, POST or HEAD (the API\'s), or PUT, PATCH or DELETE (which it answers 405), not "OPTIONS".\n',
      ]);
    } finally {
      await server.stop();
    }
  });
});

describe('a server that does not answer in the HTTP or TLS asked for', () => {
  const listening = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };

  test("says what it answered in, or why its certificate was refused, not only a parser's or OpenSSL's code", async () => {
    const home = newHome();
    // Another service on the port (an SSH server's greeting), a plain-HTTP server asked in TLS, and
    // a server whose certificate is its own (self-signed, for db.carbon.invalid).
    const ssh = createTcpServer((socket) => socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.2\r\n')));
    const plain = createServer((_req, res) => res.end('{}'));
    const tls = createHttpsServer({ key: readFileSync(TLS_KEY), cert: readFileSync(TLS_CERT) }, (_req, res) => res.end('{}'));
    const [sshPort, plainPort, tlsPort] = [await listening(ssh), await listening(plain), await listening(tls)];
    const env = { CARBON_API_KEY: 'ck_test_abcdefghijklmnop', CARBON_MAX_RETRIES: '0', CARBON_ALLOW_INSECURE_HTTP: '1' };
    const run = (url: string, args: string[], extra: Record<string, string> = {}) =>
      carbon([...args, '--base-url', `${url}/api/v1`], { home, env: { ...env, ...extra } });
    try {
      const notHttp = `http://127.0.0.1:${sshPort} answered in something other than HTTP (HPE_INVALID_CONSTANT); is the base URL right?`;
      const notTls = `https://127.0.0.1:${plainPort} did not answer in TLS (EPROTO); is it http:// rather than https://?`;
      const untrusted = `Could not reach https://127.0.0.1:${tlsPort}: its TLS certificate (DEPTH_ZERO_SELF_SIGNED_CERT) is not signed by a CA this machine trusts; if your own CA signed it, name that CA's file in NODE_EXTRA_CA_CERTS.`;
      for (const [url, said] of [
        [`http://127.0.0.1:${sshPort}`, notHttp],
        [`https://127.0.0.1:${plainPort}`, notTls],
        [`https://127.0.0.1:${tlsPort}`, untrusted],
      ] as const) {
        const balance = await run(url, ['balance']);
        expect([balance.exitCode, balance.stdout, balance.stderr]).toEqual([1, '', `error: ${said}\n`]);
        const json = await run(url, ['balance', '--json']);
        expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'connection_error', message: said });
      }
      // A TLS handshake that failed sent nothing of the purchase; a server that answered in another
      // protocol was sent it, so the key to retry with is given.
      const refusedTls = await run(`https://127.0.0.1:${tlsPort}`, ['buy', '--kg', '5']);
      expect([refusedTls.exitCode, refusedTls.stderr]).toEqual([
        1,
        `error: ${untrusted} Nothing was sent, so nothing was bought. Check the base URL and that the server is running, then run the command again.\n`,
      ]);
      const sent = await run(`http://127.0.0.1:${sshPort}`, ['buy', '--kg', '5']);
      expect(sent.exitCode).toBe(1);
      expect(sent.stderr).toMatch(
        new RegExp(
          `^error: ${notHttp.replace(/[.?()]/g, '\\$&')} The purchase may or may not have been made\\. Retry safely with --idempotency-key [0-9a-f-]{36}`,
        ),
      );
      // With the CA trusted, the certificate is read on: it is for another host.
      const named = await run(`https://127.0.0.1:${tlsPort}`, ['balance'], { NODE_EXTRA_CA_CERTS: TLS_CERT });
      expect(named.stderr).toBe(
        `error: Could not reach https://127.0.0.1:${tlsPort}: its TLS certificate (ERR_TLS_CERT_ALTNAME_INVALID) is for another host name.\n`,
      );
    } finally {
      await Promise.all([ssh, plain, tls].map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });
});
