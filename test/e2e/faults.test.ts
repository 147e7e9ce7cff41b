import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok, sandboxKeys, serve } from '../support/cli.js';

/**
 * `carbon sandbox faults` through the built binary: the setting shown, refused and cleared; the
 * local engine rehearsing them. The point of it all, 1,000 purchases under 30 % faults through
 * `carbon serve`, is test/reliability/faults-load.test.ts.
 */

const newHome = homes();

interface Status {
  balances: { test: number };
  impact: { test: { offsets: number } };
  faults: Record<string, unknown> | null;
}

describe('carbon sandbox faults', () => {
  test('set, show (also in status), refuse bad input without changing anything, off', async () => {
    const home = newHome();
    expect((await ok(['sandbox', 'faults'], { home })).stdout).toBe('faults\toff\n');
    expect((await json<Status>(['sandbox', 'status'], { home })).faults).toBeNull();

    const set = await carbon(
      ['sandbox', 'faults', 'set', '--error-rate', '0.3', '--seed', '7', '--latency', '50ms-400ms', '--route', 'post /offsets'],
      { home },
    );
    expect(set.exitCode).toBe(0);
    expect(set.stdout).toBe(
      'error_rate\t0.3\nerrors\t429,500,503,drop-before,drop-after\nlatency_ms\t50-400\nroute\tPOST /offsets\nmode\t\nseed\t7\nretry_after_seconds\t1\n',
    );
    expect(set.stderr).toContain(
      'Faults on: 30% of requests: 429, 500, 503, drop-before, drop-after; latency 50ms-400ms; POST /offsets; seed 7.',
    );
    const shown = {
      error_rate: 0.3,
      errors: ['429', '500', '503', 'drop-before', 'drop-after'],
      latency_ms: { min: 50, max: 400 },
      route: 'POST /offsets',
      mode: null,
      seed: 7,
      retry_after_seconds: 1,
    };
    expect(await json(['sandbox', 'faults', 'show'], { home })).toEqual(shown);
    expect((await json<Status>(['sandbox', 'status'], { home })).faults).toEqual(shown);
    expect((await ok(['sandbox', 'status'], { home })).stdout).toContain('faults.route\tPOST /offsets\n');

    for (const [args, message] of [
      [['--seed', '7'], 'Say what to inject'],
      [['--error-rate', '30%'], '--error-rate is a share from 0 to 1'],
      [['--error-rate', '0.3', '--errors', '429,404'], 'not "404"'],
      [['--latency', '400ms-50ms'], '--latency is a duration or a range'],
      [['--error-rate', '0.3', '--route', 'DELETE /offsets'], "The route is one of the API's"],
      [['--error-rate', '0.3', '--mode', 'prod'], 'The mode is test or live'],
      [['--error-rate', '0.3', '--seed', '-1'], '--seed'],
    ] as const) {
      const r = await carbon(['sandbox', 'faults', 'set', ...args], { home });
      expect([r.exitCode, r.stdout, r.stderr.split('\n').length]).toEqual([2, '', 2]);
      expect(r.stderr).toContain(message);
    }
    expect(await json(['sandbox', 'faults'], { home })).toEqual(shown);

    const off = await ok(['sandbox', 'faults', 'off'], { home });
    expect(off.stdout).toBe('faults\toff\n');
    expect(off.stderr).toContain('Faults off');
    expect((await json<Status>(['sandbox', 'status'], { home })).faults).toBeNull();
    // --json: the setting as `sandbox status --json` has it, null when off, and nothing else on stdout.
    const offJson = await ok(['sandbox', 'faults', 'off', '--json'], { home });
    expect([offJson.stdout, offJson.stderr]).toEqual(['null\n', '']);
    // With a base URL set, the setting is refused as every sandbox command is: it acts on this machine's ledger.
    const remote = await carbon(['sandbox', 'faults', 'off'], { home, env: { CARBON_BASE_URL: 'http://127.0.0.1:9/api/v1' } });
    expect(remote.exitCode).toBe(2);
  });

  test('the local engine rehearses them: a 503 after retries, and a purchase whose answer was lost', async () => {
    const home = newHome();
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', '503', '--retry-after', '0'], { home });
    const failed = await carbon(['balance', '--max-retries', '1', '--verbose'], { home });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr.match(/GET local\/api\/v1\/balance 503 /g)).toHaveLength(2);
    expect(failed.stderr).toContain('error: The service is unavailable (a fault injected by carbon sandbox faults)');

    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', 'drop-after', '--route', 'POST /offsets'], { home });
    const lost = await carbon(['buy', '--kg', '5', '--idempotency-key', 'rehearse-1', '--max-retries', '2'], { home });
    expect([lost.exitCode, lost.stdout]).toEqual([1, '']);
    expect(lost.stderr).toContain('connection was dropped');
    expect(lost.stderr).toContain('--idempotency-key rehearse-1');
    expect(await json(['balance'], { home })).toMatchObject({ available_cents: 99_980 }); // GET /balance is left alone: charged once
    await ok(['sandbox', 'faults', 'off'], { home });
    const again = await json<{ kg: number }>(['buy', '--kg', '5', '--idempotency-key', 'rehearse-1'], { home });
    expect(again.kg).toBe(5);
    expect((await json<Status>(['sandbox', 'status'], { home })).impact.test.offsets).toBe(1);
  });

  test("an answer lost after the purchase names the caller's own key whole, however long its run of letters: retried with it, one purchase", async () => {
    const home = newHome();
    // A key of the caller's own, 39 letters and digits: before, shown `…try1`, and retried with that, a second purchase.
    const mine = 'AcmeCorpQuarterlyOffsetPurchaseQ4Retry1';
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', 'drop-after', '--route', 'POST /offsets'], { home });
    const lost = await carbon(['buy', '--kg', '2', '--idempotency-key', mine, '--max-retries', '0', '--json'], { home });
    expect(lost.exitCode).toBe(1);
    const given = (JSON.parse(lost.stderr) as { error: { idempotency_key: string } }).error.idempotency_key;
    expect(given).toBe(mine);
    const line = await carbon(['buy', '--kg', '2', '--idempotency-key', mine, '--max-retries', '0'], { home });
    expect(line.stderr).toContain(`--idempotency-key ${mine}`);
    await ok(['sandbox', 'faults', 'off'], { home });
    const again = await carbon(['buy', '--kg', '2', '--idempotency-key', given, '--json'], { home });
    expect(again.stderr).toContain('Already bought');
    expect((await json<Status>(['sandbox', 'status'], { home })).impact.test.offsets).toBe(1);
    // The journal shows the key as it was sent.
    const sent = (await ok(['logs', '--method', 'POST', '--json'], { home })).stdout.trim().split('\n');
    expect(new Set(sent.map((l) => (JSON.parse(l) as { idempotency_key: string }).idempotency_key))).toEqual(new Set([mine]));
  });

  test('a 429 says the service did nothing: refused every time, nothing was bought; a replay after one is still said', async () => {
    const home = newHome();
    await ok(['buy', '--kg', '5', '--idempotency-key', 'ci-7'], { home });
    // Every attempt answered 429: nothing can have been bought, so no key to retry with is offered.
    await ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', '429', '--retry-after', '0', '--route', 'POST /offsets'], {
      home,
    });
    const limited = await carbon(['buy', '--kg', '6', '--max-retries', '2', '--verbose'], { home });
    expect([limited.exitCode, limited.stdout]).toEqual([7, '']);
    expect(limited.stderr.match(/POST local\/api\/v1\/offsets 429 /g)).toHaveLength(3);
    expect(limited.stderr).not.toContain('may or may not');
    expect(limited.stderr).not.toContain('--idempotency-key');
    const envelope = await carbon(['buy', '--kg', '6', '--max-retries', '2', '--json'], { home });
    expect(envelope.exitCode).toBe(7);
    expect(JSON.parse(envelope.stderr).error).toEqual({
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: 'Too many requests (a fault injected by carbon sandbox faults). Retry after the time given.',
    });
    // Seed 8 at half the requests: the first attempt is refused 429, the second answered. The
    // replay it gets is the purchase of the run before (the 429 bought nothing): said on stderr.
    await ok(
      [
        'sandbox',
        'faults',
        'set',
        '--error-rate',
        '0.5',
        '--errors',
        '429',
        '--retry-after',
        '0',
        '--seed',
        '8',
        '--route',
        'POST /offsets',
      ],
      { home },
    );
    const replay = await carbon(['buy', '--kg', '5', '--idempotency-key', 'ci-7', '--quiet', '--verbose'], { home });
    expect(replay.exitCode).toBe(0);
    expect(replay.stderr).toMatch(/attempt 1\n.*201 .*attempt 2\n/);
    expect(replay.stderr).toContain('↺ Already bought with this idempotency key');
    expect((await json<Status>(['sandbox', 'status'], { home })).impact.test.offsets).toBe(1);
  });

  test('latency through carbon serve: every answer takes at least the least delay set, and carbon logs says so', async () => {
    const home = newHome();
    const server = await serve(home);
    const keys = await sandboxKeys(home);
    await ok(['sandbox', 'faults', 'set', '--latency', '300ms-350ms', '--route', 'GET /balance'], { home });
    const r = await ok(['balance', '--verbose'], { home, env: { CARBON_BASE_URL: server.url, CARBON_API_KEY: keys.test } });
    const ms = Number(/GET http:\S+\/balance 200 ([\d.]+)ms/.exec(r.stderr)?.[1]);
    expect(ms).toBeGreaterThanOrEqual(295);
    // The journal's duration is what the caller waited, as for a fault's 429/500/503 (the access log's too).
    const served = /(req_[A-Za-z0-9]{14})/.exec(r.stderr)![1]!;
    await server.stop();
    expect((await json<{ duration_ms: number }>(['logs', 'show', served], { home })).duration_ms).toBeGreaterThanOrEqual(295);
    // The local engine sleeps it too, and notes it the same way.
    await ok(['balance'], { home });
    const [local] = (await ok(['logs', '--json', '--limit', '1'], { home })).stdout.trim().split('\n');
    expect(JSON.parse(local!)).toMatchObject({ path: '/api/v1/balance', status: 200 });
    expect(JSON.parse(local!).duration_ms).toBeGreaterThanOrEqual(295);
  });
});
