import { describe, expect, test } from 'vitest';
import { carbon, homes, json } from '../support/cli.js';

/** A base URL that misses /api/v1 is warned about, with the likely fix. */

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
      const right = await carbon(['balance', '--base-url', server.url], { home, env });
      expect([right.exitCode, right.stderr]).toEqual([0, '']);
    } finally {
      await server.stop();
    }
  });
});
