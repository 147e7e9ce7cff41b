import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { carbon, homes, json, ok, serve } from '../support/cli.js';

/**
 * `buy --max-cents` when the rate rises between the quote and the purchase: a proxy in front of a
 * `carbon serve` raises it (4000 to 8000 millicents a kg) as the purchase passes, so the quote
 * says 400 cents and the purchase would cost 800. A carbon sandbox checks the ceiling inside the
 * purchase; a service that does not (the proxy drops the header, and the sandbox's marker) charges
 * more, and the command says so.
 */

const newHome = homes();

/**
 * `sandbox`: the server as it is; `service`: one that ignores the ceiling and says nothing of a
 * sandbox; `older sandbox`: a sandbox that ignores the ceiling and does not say it checks it.
 */
type Kind = 'sandbox' | 'service' | 'older sandbox';

async function risingRate(target: string, home: string, kind: Kind, rise = true): Promise<{ url: string; close(): void }> {
  const to = new URL(target);
  const proxy = createServer((req, res) => {
    const forward = () => {
      const headers = { ...req.headers };
      if (kind !== 'sandbox') delete headers['carbon-max-amount-cents'];
      const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
        const { 'carbon-sandbox': marker, 'carbon-max-amount-cents': checked, ...rest } = answer.headers;
        const said = {
          ...(kind === 'service' ? {} : { 'carbon-sandbox': marker }),
          ...(kind === 'sandbox' && checked !== undefined ? { 'carbon-max-amount-cents': checked } : {}),
        };
        res.writeHead(answer.statusCode ?? 502, { ...rest, ...said });
        answer.pipe(res);
      });
      req.pipe(out);
    };
    if (rise && req.method === 'POST' && req.url?.endsWith('/offsets'))
      ok(['sandbox', 'rate', '8000'], { home }).then(forward, () => res.destroy());
    else forward();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${to.pathname}`, close: () => proxy.close() };
}

describe('buy --max-cents, the rate raised between the quote and the purchase', () => {
  test('a carbon sandbox refuses it inside the purchase: exit 2, nothing bought, nothing charged', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const proxy = await risingRate(server.url, home, 'sandbox');
    try {
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: server.ready.test_key! };
      const r = await carbon(['buy', '--kg', '100', '--max-cents', '400'], { home: newHome(), env });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        2,
        '',
        'error: This purchase would cost 800 cents ($8.00), more than --max-cents 400; nothing was bought.\n',
      ]);
      expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
      expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(100_000);
    } finally {
      proxy.close();
      await server.stop();
    }
  });

  test('a service that does not check it charges more: the offset is printed, one line says so, exit 1', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const proxy = await risingRate(server.url, home, 'service');
    try {
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: server.ready.test_key! };
      const r = await carbon(['buy', '--kg', '100', '--max-cents', '400', '--json'], { home: newHome(), env });
      expect(r.exitCode).toBe(1);
      const offset = JSON.parse(r.stdout) as { id: string; amount_cents: number };
      expect(offset.amount_cents).toBe(800);
      expect(JSON.parse(r.stderr.trim()).error).toMatchObject({
        code: 'max_cents_exceeded',
        offset_id: offset.id,
        message: `${offset.id} cost 800 cents ($8.00), more than --max-cents 400: the price rose after the quote, and the service does not check the ceiling inside the purchase. It was bought.`,
      });
    } finally {
      proxy.close();
      await server.stop();
    }
  });

  test('a batch: each row may cost only its quote, so the raised rate refuses the rows (amount_above_max, exit 10), nothing bought', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    const proxy = await risingRate(server.url, home, 'sandbox');
    try {
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: server.ready.test_key! };
      const client = newHome();
      const csv = join(client, 'rows.csv');
      writeFileSync(csv, 'kg\n100\n50\n');
      const r = await carbon(['buy', '--from-csv', csv, '--max-cents', '600', '--json'], { home: client, env });
      expect(r.exitCode).toBe(10);
      const rows = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { status?: string; error_code?: string });
      expect(rows.filter((row) => row.status !== undefined).map((row) => `${row.status}:${row.error_code}`)).toEqual([
        'failed:amount_above_max',
        'failed:amount_above_max',
      ]);
      expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    } finally {
      proxy.close();
      await server.stop();
    }
  });

  test('the same command run again with its --idempotency-key after the rate rose returns the purchase it made, not "nothing was bought"', async () => {
    const home = newHome();
    const bought = await json<{ id: string; amount_cents: number }>(
      ['buy', '--kg', '10', '--max-cents', '45', '--idempotency-key', 'retry-1'],
      { home },
    );
    expect(bought.amount_cents).toBe(40);
    await ok(['sandbox', 'rate', '5000'], { home });
    const again = await carbon(['buy', '--kg', '10', '--max-cents', '45', '--idempotency-key', 'retry-1', '--json'], { home });
    expect([again.exitCode, (JSON.parse(again.stdout) as { id: string }).id]).toEqual([0, bought.id]);
    expect(again.stderr).toContain('Already bought with this idempotency key');
    // A key that bought nothing yet is refused inside the purchase: nothing bought.
    const fresh = await carbon(['buy', '--kg', '10', '--max-cents', '45', '--idempotency-key', 'retry-2'], { home });
    expect([fresh.exitCode, fresh.stderr]).toEqual([
      2,
      'error: This purchase would cost 50 cents ($0.50), more than --max-cents 45; nothing was bought.\n',
    ]);
    expect((await json<{ data: unknown[] }>(['list'], { home })).data).toHaveLength(1);
    // A cap past what the header takes (15 digits) is the same as no cap: it buys, as --dry-run says.
    for (const args of [['--dry-run'], []]) {
      expect((await carbon(['buy', '--kg', '1', '--max-cents', '1000000000000000', ...args], { home })).exitCode).toBe(0);
    }
  });

  test('a quote above the cap with a key given: only a service that says it checks the ceiling is asked; one that does not, refused at the quote', async () => {
    const home = newHome();
    const server = await serve(home, ['--show-keys']);
    await ok(['sandbox', 'rate', '8000'], { home });
    const proxy = await risingRate(server.url, home, 'older sandbox', false);
    try {
      const env = { CARBON_BASE_URL: proxy.url, CARBON_API_KEY: server.ready.test_key! };
      const r = await carbon(['buy', '--kg', '100', '--max-cents', '400', '--idempotency-key', 'deploy-42'], { home: newHome(), env });
      expect([r.exitCode, r.stderr]).toEqual([
        2,
        'error: This purchase would cost 800 cents ($8.00), more than --max-cents 400; nothing was bought.\n',
      ]);
      expect((await json<{ data: unknown[] }>(['list'], { home })).data).toEqual([]);
    } finally {
      proxy.close();
      await server.stop();
    }
  });
});
