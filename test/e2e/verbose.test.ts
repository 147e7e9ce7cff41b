import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, serve } from '../support/cli.js';

/** `--verbose` and CARBON_DEBUG=http: a line per HTTP request on stderr, never the key. */

const newHome = homes();

describe('--verbose (or CARBON_DEBUG=http): a line per HTTP request on stderr', () => {
  test('through carbon serve: method, URL, status, time, Request-Id and attempt; never the key; stdout untouched', async () => {
    const home = newHome();
    const keys = await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home });
    const key = keys.find((k) => k.default === 'test')!.secret;
    const server = await serve(home);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: key };
      const r = await carbon(['buy', '--kg', '2', '--verbose', '--json'], { home, env });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ kg: 2 });
      const origin = new URL(server.url).origin;
      expect(r.stderr).toMatch(
        new RegExp(`^http: POST ${origin.replace(/[.]/g, '\\.')}/api/v1/offsets 201 \\d+\\.\\dms req_\\w+ attempt 1$`, 'm'),
      );
      expect(r.stderr).not.toContain(key);
      const debug = await carbon(['balance'], { home, env: { ...env, CARBON_DEBUG: 'http' } });
      expect(debug.stderr).toMatch(/^http: GET \S+\/api\/v1\/balance 200 /m);
      expect((await carbon(['balance'], { home, env })).stderr).toBe('');
    } finally {
      await server.stop();
    }
  });

  test('names the URL actually requested, as the server saw it, whatever the base URL', async () => {
    // A server that records the request line it was sent, and answers as the API would not (404).
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"type":"invalid_request_error","code":"route_missing","message":"no"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const key = `ck_test_${'V'.repeat(32)}`;
      for (const base of [origin, `${origin}/api/v1`, `${origin}/prefix/api/v1/`]) {
        seen.length = 0;
        const r = await carbon(['impact', '--base-url', base, '--verbose'], {
          home: newHome(),
          env: { CARBON_API_KEY: key, CARBON_MAX_RETRIES: '0' },
        });
        // route_missing: an address the API does not serve is exit 1 (README, "Exit codes").
        expect(r.exitCode, base).toBe(1);
        const path = seen[0]!.split(' ')[1]!;
        expect(r.stderr, base).toMatch(new RegExp(`^http: GET ${origin.replace(/[.]/g, '\\.')}${path.replace(/[.]/g, '\\.')} 404 `, 'm'));
      }
      expect(seen).toEqual(['GET /prefix/api/v1/impact']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('keys typed into a path or a query are masked, as carbon serve masks them', () => {
  const secret = `${'Zq9'.repeat(10)}Ab`;
  const spellings = [`ck_test_${secret}`, `ck-test-${secret}`, secret];

  test('in --verbose, in carbon api, and in errors, on the local engine and through carbon serve', async () => {
    const home = newHome();
    const server = await serve(home);
    try {
      const remote = {
        CARBON_BASE_URL: server.url,
        CARBON_API_KEY: (await json<Array<{ default: string | null; secret: string }>>(['sandbox', 'keys', '--reveal'], { home })).find(
          (k) => k.default === 'test',
        )!.secret,
      };
      for (const env of [{}, remote]) {
        for (const spelling of spellings) {
          for (const [args, code] of [
            [['api', 'GET', `/nope/${spelling}`, '--verbose'], 1],
            [['api', 'GET', `/offsets?reference=${spelling}`, '--verbose'], 0],
            [['show', spelling, '--verbose', '--json'], 5],
            [['list', '--reference', spelling, '--verbose'], 0],
          ] as Array<[string[], number]>) {
            const r = await carbon(args, { home, env });
            const what = `${args.join(' ')} ${JSON.stringify(env)}`;
            expect(r.exitCode, `${what}: ${r.stderr}`).toBe(code);
            expect(`${r.stdout}\n${r.stderr}`, what).not.toContain(secret.slice(0, 28));
            if (args.includes('--verbose')) expect(r.stderr, what).toMatch(/^http: GET \S*…q9Ab/m);
          }
        }
      }
    } finally {
      await server.stop();
    }
  });

  test('the values of secret-named query parameters are masked in --verbose, as `carbon logs` masks them', async () => {
    const home = newHome();
    const r = await carbon(['api', 'GET', '/balance?access_token=tok123secret&password=hunter2&limit=3', '--verbose'], { home });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^http: GET local\/api\/v1\/balance\?access_token=\*\*\*&password=\*\*\*&limit=3 200 /m);
    expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/tok123secret|hunter2/);
    const logged = await carbon(['logs', '--json', '--limit', '1'], { home });
    expect(JSON.parse(logged.stdout).query).toBe('access_token=***&password=***&limit=3');
  });

  test('when a server echoes a key unmasked, carbon masks it in the error it prints', async () => {
    // Not carbon serve: a server that repeats the path it was asked for, key and all.
    const server = createServer((req, res) => {
      const message = `No such route: ${decodeURIComponent(req.url ?? '')}`;
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'route_missing', message, param: req.url } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        CARBON_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
        CARBON_API_KEY: `ck_test_${'W'.repeat(32)}`,
        CARBON_MAX_RETRIES: '0',
      };
      for (const spelling of spellings) {
        for (const args of [
          ['show', spelling],
          ['show', spelling, '--json'],
        ]) {
          const r = await carbon(args, { home: newHome(), env });
          expect(r.exitCode).toBe(1);
          expect(r.stderr).toContain('No such route: /api/v1/offsets/');
          expect(r.stderr).toContain('…q9Ab');
          expect(r.stderr, args.join(' ')).not.toContain(secret.slice(0, 28));
        }
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
