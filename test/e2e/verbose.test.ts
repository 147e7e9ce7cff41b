import { describe, expect, test } from 'vitest';
import { carbon, homes, json } from '../support/cli.js';

/** `--verbose` and CARBON_DEBUG=http: a line per HTTP request on stderr, never the key. */

const newHome = homes();

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
});
