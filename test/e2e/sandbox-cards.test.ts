import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, ok, plain, type Served, serve } from '../support/cli.js';
import { headerless } from '../support/headerless-proxy.js';

/**
 * What a person reads on a terminal (and screenshots, pastes) says when it is the sandbox's:
 * the cards of balance, impact, quote and an offset say `live · sandbox: not real` beside the
 * mode, a purchase's ✓ line says it too, in words, not only in the colour of "live", and a list's
 * table (a page, or --all) has the card's mode row under it (on stderr, as report's note). On the
 * local engine and through a carbon serve (its answers say Carbon-Sandbox: true); a service that
 * does not say it is a sandbox is the service, and nothing is added. Pipes and --json are left
 * as they were: the API's values.
 */

const newHome = homes();
const CARD = /^mode +live · sandbox: not real$/m;
/** The text without the sandbox's offset ids, which say so themselves (`off_sandbox…`): what is checked is what carbon adds. */
const noIds = (text: string) => text.replace(/\boff_sandbox[A-Za-z0-9]{17}\b/g, 'off_…');
let home: string;
let server: Served;
let offsetId: string;

beforeAll(async () => {
  home = newHome();
  await ok(['sandbox', 'topup', '250', '--live'], { home });
  offsetId = (await ok(['buy', '--kg', '100', '--live', '--yes', '-q'], { home })).stdout.trim();
  server = await serve(home, ['--show-keys']);
});
afterAll(async () => {
  await server?.stop();
});

const CARDS = () => [
  ['balance', '--live'],
  ['impact', '--live'],
  ['quote', '--kg', '10', '--live'],
  ['show', offsetId, '--live'],
];
/** Not cards, but read the same way: a table has no mode column, so the card's row is under it. */
const TABLES = [
  ['list', '--live'],
  ['list', '--live', '--all'],
];

describe('on a terminal, the sandbox says so beside the mode', () => {
  test('the local engine: every card, a list, and a purchase', async () => {
    for (const args of [...CARDS(), ...TABLES]) {
      const r = await carbonTty(args, { home, env: { NO_COLOR: '1' } });
      expect(r.exitCode, args.join(' ')).toBe(0);
      expect(plain(r.output), args.join(' ')).toMatch(CARD);
    }
    const bought = await carbonTty(['buy', '--kg', '1', '--live', '--yes'], { home, env: { NO_COLOR: '1' } });
    expect(plain(bought.output)).toContain('✓ Bought 1 kg for $0.04 (live mode, sandbox: not a real purchase).');
    expect(plain(bought.output)).toMatch(CARD);
    // A pipe keeps the API's values: nothing is added to a script's rows.
    expect((await ok(['balance', '--live'], { home })).stdout).not.toMatch(/sandbox/);
    for (const args of TABLES) {
      const piped = await ok(args, { home });
      expect(noIds(piped.stdout + piped.stderr), args.join(' ')).not.toMatch(/sandbox/);
    }
    // A table asked for in a pipe is the same table: the note is on stderr, not in the rows.
    for (const args of TABLES.map((a) => [...a, '--format', 'table'])) {
      const piped = await ok(args, { home });
      expect(noIds(piped.stdout), args.join(' ')).not.toMatch(/sandbox/);
      expect(piped.stderr, args.join(' ')).toMatch(CARD);
    }
  });

  test('through carbon serve too; a service that does not say it is a sandbox: the mode alone', async () => {
    const env = { NO_COLOR: '1', CARBON_BASE_URL: server.url, CARBON_API_KEY: server.ready.live_key! };
    for (const args of [...CARDS(), ...TABLES]) expect(plain((await carbonTty(args, { home, env })).output), args.join(' ')).toMatch(CARD);
    const other = await headerless(server.url);
    try {
      const elsewhere = { ...env, CARBON_BASE_URL: other.url };
      for (const args of CARDS()) {
        const r = await carbonTty(args, { home, env: elsewhere });
        expect(r.exitCode, args.join(' ')).toBe(0);
        expect(plain(r.output), args.join(' ')).toMatch(/^mode +live$/m);
        expect(noIds(plain(r.output)), args.join(' ')).not.toMatch(/sandbox/i);
      }
      // The clock past the live placement (60 s) first: the row's status is then placed however
      // long the commands since the purchase took.
      await ok(['sandbox', 'clock', 'advance', '1m'], { home });
      for (const args of TABLES) {
        const r = await carbonTty(args, { home, env: elsewhere });
        expect(r.exitCode, args.join(' ')).toBe(0);
        expect(plain(r.output), args.join(' ')).toMatch(/^off_\S+ +placed /m);
        expect(noIds(plain(r.output)), args.join(' ')).not.toMatch(/sandbox|^mode/im);
      }
      const bought = await carbon(['buy', '--kg', '1', '--yes'], { home, env: elsewhere });
      expect([bought.exitCode, bought.stderr]).toEqual([0, '✓ Bought 1 kg for $0.04 (live mode).\n']);
    } finally {
      other.close();
    }
  });
});
