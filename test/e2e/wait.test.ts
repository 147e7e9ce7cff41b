import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, liveHomes, ok, plain, TTY } from '../support/cli.js';

/** `--wait` that ends other than placed: refunded (exit 9), and a live wait on the local model that says how it ends. */

const newHome = homes();
const liveHome = liveHomes(newHome);

describe('--wait that ends refunded', () => {
  test('show --wait on an offset whose order could not be placed: the offset on stdout, one line on stderr, exit 9', async () => {
    // A live offset held for review (a limit of $0): still processing when it is failed, however long that took.
    const home = newHome();
    await ok(['config', 'set', 'mode', 'live'], { home });
    await ok(['sandbox', 'topup', '250'], { home });
    await ok(['sandbox', 'review-limit', '0'], { home });
    const bought = await json<{ id: string }>(['buy', '--kg', '3', '--yes'], { home });
    await ok(['sandbox', 'fail', bought.id], { home });
    const r = await carbon(['show', bought.id, '--wait', '--json'], { home });
    expect(r.exitCode).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: bought.id, status: 'refunded' });
    expect(JSON.parse(r.stderr.trim()).error).toMatchObject({ code: 'offset_refunded' });
    // Without --wait a refunded offset is just shown: exit 0.
    expect((await carbon(['show', bought.id], { home })).exitCode).toBe(0);
  });

  test('carbon --help lists exit code 9', async () => {
    expect((await ok(['--help'], { home: newHome() })).stdout).toMatch(/^ +9 {2}--wait ended with the offset refunded/m);
  });
});

describe('live --wait on the local model', () => {
  test('says how long placement takes and that the clock ends it at once', async () => {
    const home = await liveHome();
    const r = await carbonTty(['buy', '--kg', '10', '--live', '--yes', '--wait', '--timeout', '1'], { home, env: TTY });
    expect(r.exitCode).toBe(8);
    expect(plain(r.output)).toContain(
      'The local model places a live offset 60 s (model time) after its purchase; `carbon sandbox clock advance 1m --live` places it at once.',
    );
    // Held for review, the clock does not place it: the hint says what does.
    await ok(['sandbox', 'review-limit', '0'], { home });
    const held = await carbonTty(['buy', '--kg', '10', '--live', '--yes', '--wait', '--timeout', '1'], { home, env: TTY });
    expect(plain(held.output)).toMatch(
      /off_\w+ waits for review \(above the review limit\): `carbon sandbox review approve off_\w+ --live` places it\./,
    );
  });
});
