import { connect } from 'node:net';
import { expect, test } from 'vitest';
import { homes, ok, serve } from '../support/cli.js';
import { limit } from '../support/load.js';

/**
 * A burst the ledger keeps up with: every request answered is in the journal. Before, 1,000
 * connections each sending eight reads and a purchase at once left the journal's batches of a
 * hundred behind (each waiting its turn behind the purchases), 2,000 entries waited, and the rest
 * were dropped ("the ledger did not take"), with the ledger healthy.
 */

const newHome = homes();

test('1,000 connections, each eight reads and a purchase pipelined at once: every purchase in the journal, none dropped', {
  timeout: limit(120_000),
}, async () => {
  const home = newHome();
  const server = await serve(home, ['--show-keys']);
  try {
    const key = server.ready.test_key!;
    const { port } = new URL(server.origin);
    const head = (method: string, path: string, extra = '') =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${extra}\r\n`;
    const one = (c: number) =>
      new Promise<number>((resolve) => {
        const body = `{"kg":1,"reference":"burst-${c}"}`;
        let out = head('GET', '/api/v1/balance').repeat(8);
        out +=
          head(
            'POST',
            '/api/v1/offsets',
            `Idempotency-Key: burst-${c}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`,
          ) + body;
        let got = '';
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(out));
        socket.on('data', (d) => void (got += d));
        socket.on('close', () => resolve(got.split('HTTP/1.1 ').length - 1));
        socket.on('error', () => {});
      });
    const answers = await Promise.all(Array.from({ length: 1_000 }, (_, c) => one(c)));
    expect(answers.filter((n) => n !== 9)).toEqual([]);
  } finally {
    await server.stop();
  }
  expect(server.stderr()).not.toContain('journal dropped');
  const purchases = (await ok(['logs', '--method', 'POST', '--json', '--limit', '1000'], { home })).stdout.trim().split('\n');
  expect(purchases).toHaveLength(1_000);
});
