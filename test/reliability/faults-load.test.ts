import { describe, expect, test } from 'vitest';
import { homes, json, ok, pipeline, sandboxKeys, serve } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * The point of `carbon sandbox faults`: purchases under 30 % faults through `carbon serve` end as
 * exactly one offset each, charged once, because the client retries with the same Idempotency-Key.
 */

const newHome = homes();

interface Status {
  balances: { test: number };
  impact: { test: { offsets: number } };
}

describe('carbon sandbox faults under load', () => {
  test(
    'under 30 % faults through carbon serve: 1,000 purchases are exactly 1,000 offsets, each charged once',
    async () => {
      const home = newHome();
      const server = await serve(home);
      const keys = await sandboxKeys(home);
      await ok(['sandbox', 'faults', 'set', '--error-rate', '0.3', '--seed', '7', '--retry-after', '0'], { home });
      const start = (await json<Status>(['sandbox', 'status'], { home })).balances.test;

      // All through the CLI, as CI jobs would buy: 24 `carbon buy --from-csv` runs of 40 rows at
      // once, and 40 `carbon buy` runs 8 at a time. A batch cut off by a fault that outlived its
      // retries exits 10 and is run again, as its README says: it resumes under the same keys.
      const batches = await pipeline(
        `for b in $(seq 0 23); do { echo kg,reference; for r in $(seq 0 39); do echo "1,csv-$b-$r"; done; } > "$CARBON_HOME/b$b.csv"; done
       seq 0 23 | xargs -P 24 -I{} sh -c 'for try in 1 2 3 4 5; do carbon buy --from-csv "$CARBON_HOME/b{}.csv" --max-retries 10 > "$CARBON_HOME/out{}.csv" 2>/dev/null; code=$?; [ $code -eq 10 ] || exit $code; done; exit 10' &&
       cat "$CARBON_HOME"/out*.csv | grep ',csv-' | wc -l; cat "$CARBON_HOME"/out*.csv | grep ',csv-' | awk -F, '$7 == "true"' | wc -l`,
        { home, env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test }, timeout: limit(150_000) },
      );
      const cli = await pipeline(
        'seq 40 | xargs -P 8 -I{} carbon buy --kg 1 --reference cli-{} --max-retries 10 -q > "$CARBON_HOME/ids.txt" && sort -u "$CARBON_HOME/ids.txt" | wc -l',
        { home, env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test }, timeout: limit(60_000) },
      );
      const [rows] = batches.stdout
        .trim()
        .split('\n')
        .map((n) => Number(n.trim()));
      expect([batches.exitCode, rows, batches.stderr]).toEqual([0, 960, '']);
      expect([cli.exitCode, cli.stdout.trim(), cli.stderr]).toEqual([0, '40', '']);

      const status = await json<Status>(['sandbox', 'status'], { home });
      expect(status.impact.test.offsets).toBe(1000);
      expect(start - status.balances.test).toBe(1000 * 4); // 1 kg at $0.04: each charged once
      // Every reference once (read through the local engine, still under the faults: it retries too).
      const refs = await pipeline(
        'carbon list --all --json --max-retries 10 | jq -r .reference | sort | uniq -d | wc -l; carbon list --all -q --max-retries 10 | wc -l',
        { home },
      );
      expect(refs.stdout.split('\n').map((l) => l.trim())).toEqual(['0', '1000', '']);
      // The faults happened: refusals, and answers lost after the purchase committed (the retry's
      // replay is the command's own purchase, so a row is not reported as replayed for it).
      for (const status of [429, 500, 503]) expect(server.stderr()).toMatch(new RegExp(`POST /api/v1/offsets ${status} `));
      // The connections a fault cut say so in the access log, after the purchase with its status and Request-Id.
      expect(server.stderr()).toMatch(/POST \/api\/v1\/offsets - \(cut: drop-before\)/);
      expect(server.stderr()).toMatch(/POST \/api\/v1\/offsets 201 \(cut: drop-after\) [\d.]+ms key=\S+ req_\w+/);
      await server.stop();
    },
    limit(240_000),
  );
});
