import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, pipeline, spawnCarbon } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * stderr whose reader goes away (`2>&1 | head`, a log shipper restarting) or whose disk is full:
 * nothing can be said about it, and the command ends as it would have, with its own exit code; a
 * server keeps serving. (An unhandled error on stderr ended every command with 1, and the server.)
 */

const newHome = homes();

describe('stderr that fails', () => {
  test(
    'carbon serve keeps serving when the readers of its log and of its ready line go away, and stops with 0 at SIGTERM',
    async () => {
      const child = spawnCarbon(newHome(), ['serve', '--port', '0']);
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
      while (!out.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 20));
      const { url } = JSON.parse(out.slice(0, out.indexOf('\n'))) as { url: string };
      const origin = new URL(url).origin;
      // Both pipes' read ends closed: every later write (the access log's lines) meets EPIPE.
      child.stdout!.destroy();
      child.stderr!.destroy();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        statuses.push((await fetch(`${origin}/healthz`)).status);
        // The access log is written at most every 50 ms: let it try, and fail, between requests.
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      expect(child.exitCode).toBe(null);
      child.kill('SIGTERM');
      expect((await child).exitCode).toBe(0);
    },
    limit(30_000),
  );

  test(
    'a command ends with its own exit code: a dry run its verdict (3), a missing offset 5, with stderr cut or full',
    async () => {
      const home = newHome();
      const csv = join(home, 'big.csv');
      // 3,000 rows of 100 kg: $12,000, more than the sandbox's $1,000, so the dry run's verdict is 3.
      writeFileSync(csv, `reference,kg\n${Array.from({ length: 3000 }, (_, i) => `v-${i},100`).join('\n')}\n`);
      const cut = await pipeline(`carbon buy --from-csv ${csv} --dry-run 2>&1 | head -1 >/dev/null`, { home });
      expect(cut.exitCode).toBe(3);
      const full = await pipeline('carbon show off_nothere 2>/dev/full', { home });
      expect([full.exitCode, full.stdout]).toEqual([5, '']);
      // The same with stderr whole, for comparison.
      expect((await carbon(['show', 'off_nothere'], { home })).exitCode).toBe(5);
    },
    limit(60_000),
  );
});
