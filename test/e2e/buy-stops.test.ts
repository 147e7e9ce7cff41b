import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { homes, json, pipeline, spawnCarbon } from '../support/cli.js';

/**
 * A single purchase stopped, or its output lost, after the request went out: the purchase may have
 * been made, so carbon never ends in silence; it names what lets the user find it or retry it safely.
 */

const newHome = homes();

/** A server that takes every request and never answers: the purchase's outcome stays unknown. */
const held: ServerResponse[] = [];
const keys: string[] = [];
const quotes: string[] = [];
const silent = createServer((req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  if (req.method === 'POST' && req.url === '/api/v1/offsets') keys.push(String(req.headers['idempotency-key']));
  if (req.method === 'POST' && req.url === '/api/v1/quotes') quotes.push(req.url);
  held.push(res);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

const KEY = `ck_test_${'a1'.repeat(8)}`;

/** The silent server's base URL, listening once. */
async function silentUrl(): Promise<string> {
  if (!silent.listening) await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/v1`;
}

/** `carbon …` against the silent server, sent `signal` once `held()` says its request is held there; what it printed and its exit code. */
async function stoppedWhen(args: string[], held: () => boolean, signal: NodeJS.Signals) {
  const child = spawnCarbon(newHome(), args, { CARBON_API_KEY: KEY });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  while (!held()) await new Promise((resolve) => setTimeout(resolve, 20));
  child.kill(signal);
  return { exitCode: (await child).exitCode, stdout, stderr };
}

describe('Ctrl-C or SIGTERM while a purchase waits for its answer', () => {
  test.each<[NodeJS.Signals, string]>([
    ['SIGINT', ''],
    ['SIGTERM', ' (SIGTERM)'],
  ])('%s: exit 130, one plain line that it may have been bought, and the key to retry with', async (signal, named) => {
    const url = await silentUrl();
    // `carbon api POST /offsets` too (before, it ended in silence, the key it made lost).
    const commands = [
      ['buy', '--kg', '10'],
      ['api', 'POST', '/offsets', '-d', '{"kg":10}'],
    ];
    for (const [command, format] of commands.flatMap((c) => [[], ['--json']].map((f) => [c, f] as const))) {
      const sent = keys.length;
      // The purchase is on the wire (the server holds it): only then is the signal sent.
      const r = await stoppedWhen([...command, '--base-url', url, ...format], () => keys.length > sent, signal);
      const { stderr } = r;
      const key = keys.at(-1)!;
      expect([r.exitCode, r.stdout]).toEqual([130, '']);
      if (format.length === 0) {
        expect(stderr).toBe(
          `Stopped${named} before the purchase was answered. The purchase may or may not have been made. Retry safely with --idempotency-key ${key}: a key that bought once returns that purchase and never buys again.\n`,
        );
      } else {
        expect(JSON.parse(stderr).error).toMatchObject({ code: 'interrupted', idempotency_key: key });
      }
    }
  });
});

describe('Ctrl-C or SIGTERM while the quote before a purchase waits (--max-cents)', () => {
  test.each<[NodeJS.Signals, string]>([
    ['SIGINT', ''],
    ['SIGTERM', ' (SIGTERM)'],
  ])('%s: exit 130, one plain line that nothing was bought, and no purchase sent', async (signal, named) => {
    const url = await silentUrl();
    for (const format of [[], ['--json']]) {
      const [quoted, bought] = [quotes.length, keys.length];
      // The quote is on the wire (the server holds it): only then is the signal sent.
      const args = ['buy', '--kg', '10', '--max-cents', '500', '--base-url', url, ...format];
      const r = await stoppedWhen(args, () => quotes.length > quoted, signal);
      const { stderr } = r;
      expect([r.exitCode, r.stdout, keys.length]).toEqual([130, '', bought]);
      if (format.length === 0) expect(stderr).toBe(`Stopped${named} before buying; nothing was bought.\n`);
      else
        expect(JSON.parse(stderr).error).toMatchObject({
          code: 'interrupted',
          message: `Stopped${named} before buying; nothing was bought.`,
        });
    }
  });
});

describe('a purchase whose stdout fails (a full disk under > offset.json)', () => {
  test.each([
    ['carbon buy --kg 5', /^✓ Bought 5 kg for \$0\.20 \(test mode, sandbox: not a real purchase\)\.\nerror: /],
    ['carbon buy --kg 5 -q', /^error: /],
    ['carbon buy --kg 5 --json', /^\{"error":/],
    // Before, `carbon api` named neither the offset nor the key.
    ['carbon api POST /offsets -d \'{"kg":5}\'', /^error: /],
    ['carbon api POST /offsets -d \'{"kg":5}\' --json', /^\{"error":/],
  ])('%s > /dev/full: exit 1, and the line names the offset bought and how to show it', async (command, start) => {
    const home = newHome();
    const r = await pipeline(`${command} > /dev/full`, { home });
    const [offset] = (await json<{ data: Array<{ id: string }> }>(['list'], { home })).data;
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(start);
    const said = `Could not write to stdout (ENOSPC): what was printed there is incomplete. ${offset!.id} was bought (5 kg for $0.20): \`carbon show ${offset!.id}\` shows it.`;
    if (command.endsWith('--json')) {
      expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'output_error', message: said, offset_id: offset!.id });
    } else {
      expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`error: ${said} Free some space, or send the output elsewhere.`);
    }
  });
});

describe('a top-up whose stdout fails (a full disk under > balance.json)', () => {
  test('carbon sandbox topup 250 --json > /dev/full: exit 1, and the line says the top-up was made and the balance now', async () => {
    const home = newHome();
    const r = await pipeline('carbon sandbox topup 250 --json > /dev/full', { home });
    expect(r.exitCode).toBe(1);
    // Before: only "Could not write to stdout": a script would top up again.
    expect(JSON.parse(r.stderr).error).toMatchObject({
      code: 'output_error',
      message:
        'Could not write to stdout (ENOSPC): what was printed there is incomplete. The top-up of $250.00 was made: the test balance is $1,250.00.',
      available_cents: 125_000,
    });
    expect((await json<{ available_cents: number }>(['balance'], { home })).available_cents).toBe(125_000);
  });
});

describe('a batch whose results cannot be written (stdout on a full disk)', () => {
  test('stops buying, as when its reader goes away: the rest skipped, exit 10, the line names the batch; nothing bought unseen', async () => {
    const home = newHome();
    const csv = join(home, 'rows.csv');
    writeFileSync(csv, `reference,kg\n${Array.from({ length: 50 }, (_, i) => `f-${i},1`).join('\n')}\n`);
    const text = await pipeline(`carbon buy --from-csv ${csv} > /dev/full`, { home });
    expect(text.exitCode).toBe(10);
    expect(text.stderr).not.toContain('✓');
    expect(text.stderr).toMatch(
      /^error: Batch incomplete: 0 of 50 rows bought .*50 skipped \(stdout could not be written: ENOSPC\)\. Run the same command again to resume \(batch default\)/m,
    );
    const asJson = await pipeline(`carbon buy --from-csv ${csv} --json > /dev/full`, { home });
    expect(asJson.exitCode).toBe(10);
    const error = JSON.parse(asJson.stderr.trim().split('\n').at(-1)!).error;
    expect(error).toMatchObject({ code: 'batch_incomplete', batch_id: 'default' });
    // At most the row whose result could not be written was bought, not the whole file.
    const bought = await json<{ offsets: number }>(['impact'], { home });
    expect(bought.offsets).toBeLessThanOrEqual(1);
  });
});
