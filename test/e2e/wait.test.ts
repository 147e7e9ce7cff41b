import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, carbonTty, homes, json, liveHomes, ok, plain, TTY } from '../support/cli.js';
import { limit } from '../support/load.js';

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

describe('--wait whose polling fails after its retries', () => {
  test('buy --wait: the offset bought is printed as last seen, one line names it and how to follow it, the failure its exit code', async () => {
    const home = newHome();
    const faults = (code: string) =>
      ok(['sandbox', 'faults', 'set', '--error-rate', '1', '--errors', code, '--retry-after', '0', '--route', 'GET /offsets/{id}'], {
        home,
      });
    await faults('500');
    const broken = await carbon(['buy', '--kg', '5', '--wait', '--max-retries', '1', '--json'], { home });
    expect(broken.exitCode).toBe(1);
    const offset = JSON.parse(broken.stdout) as { id: string; status: string };
    expect(offset).toMatchObject({ object: 'offset', kg: 5, status: 'processing' });
    expect(JSON.parse(broken.stderr).error).toEqual({
      type: 'api_error',
      code: 'internal_error',
      message: `The server failed to answer (a fault injected by carbon sandbox faults). Stopped waiting: ${offset.id} is processing. Follow it with \`carbon show ${offset.id} --wait\`.`,
    });
    await faults('429');
    const limited = await carbon(['buy', '--kg', '6', '--wait', '--max-retries', '1', '--quiet'], { home });
    expect(limited.exitCode).toBe(7);
    const id = limited.stdout.trim();
    expect(id).toMatch(/^off_\w+$/);
    expect(limited.stderr).toMatch(new RegExp(`^error: Too many requests .* Stopped waiting: ${id} is processing\\. .*\\n$`));
    // Each was bought once, and can be followed as the line says.
    await ok(['sandbox', 'faults', 'off'], { home });
    expect((await json<{ offsets: number }>(['impact'], { home })).offsets).toBe(2);
    expect((await json<{ kg: number }>(['show', id], { home })).kg).toBe(6);
  });

  test('a poll that does not answer ends at --timeout (and a second for it), exit 8 with the offset: not held by the poll', {
    timeout: limit(90_000),
  }, async () => {
    const home = newHome();
    // Every poll takes 40 s to be answered (the local engine sleeps a fault's latency as served).
    await ok(['sandbox', 'faults', 'set', '--latency', '40s', '--route', 'GET /offsets/{id}'], { home });
    const started = Date.now();
    const r = await carbon(['buy', '--kg', '5', '--wait', '--timeout', '1', '--json'], { home });
    expect(Date.now() - started).toBeLessThan(limit(20_000));
    expect(r.exitCode, r.stderr).toBe(8);
    expect(JSON.parse(r.stdout)).toMatchObject({ object: 'offset', kg: 5, status: 'processing' });
    expect(JSON.parse(r.stderr).error.code).toBe('wait_timeout');
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

describe('a signal during --wait, in a pipe', () => {
  /**
   * Runs carbon with --verbose and sends `signal` once the wait has read the offset: its GET of the
   * offset is on stderr (the wait listens for signals before that GET), an event, not a sleep.
   * `before` counts the GETs of the offset made before the wait (show reads it once first).
   */
  async function signalWhenWaiting(args: string[], home: string, signal: NodeJS.Signals, before = 0) {
    const child = execa(process.execPath, [BIN(), ...args, '--verbose'], {
      env: baseEnv(home),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: limit(20_000),
    });
    let stderr = '';
    let sent = false;
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      // Once: a second signal, after the wait has ended, would find nobody listening.
      const gets = stderr.match(/^http: GET \S+\/offsets\/off_\w+ 200/gm)?.length ?? 0;
      if (!sent && gets > before) sent = child.kill(signal);
    });
    const r = await child;
    return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
  }

  // A CI job that times out sends SIGTERM: its log must still show the offset bought, and how to follow it.
  test.each([
    ['SIGTERM', 'Stopped waiting (SIGTERM):'],
    ['SIGINT', 'Stopped waiting:'],
  ] as const)('%s stops buy --wait and show --wait: the offset on stdout, one plain line, exit 130', async (signal, said) => {
    const home = await liveHome();
    // Held for review (a limit of $0): the wait is still on when the signal comes, and the offset
    // processing for the second wait, however long the commands take (unheld, a minute places it).
    await ok(['sandbox', 'review-limit', '0'], { home });
    const bought = await signalWhenWaiting(['buy', '--kg', '10', '--live', '--yes', '--wait'], home, signal);
    expect(bought.exitCode).toBe(130);
    // The offset itself is on stdout (a script needs its id), as a pipe prints it: `id<TAB>off_…`.
    const id = /^id\t(off_\w+)$/m.exec(bought.stdout)?.[1];
    expect(id, bought.stdout).toBeDefined();
    const line = `${said} ${id} is processing. Follow it with \`carbon show ${id} --wait --live\`.`;
    expect(bought.stderr.trim().split('\n').at(-1)).toBe(line);
    expect(bought.stderr).not.toContain('error:');
    const shown = await signalWhenWaiting(['show', id!, '--wait', '--live'], home, signal, 1);
    expect(shown.exitCode).toBe(130);
    expect(shown.stdout).toMatch(new RegExp(`^id\\t${id}\\nstatus\\tprocessing$`, 'm'));
    expect(shown.stderr.trim().split('\n').at(-1)).toBe(line);
  });
});
