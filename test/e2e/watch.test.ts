import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { carbon, carbonTty, homes, json, leakedKeys, ok, plain, sandboxKeys, serve, spawnCarbon } from '../support/cli.js';
import { headerless } from '../support/headerless-proxy.js';
import { limit } from '../support/load.js';
import { repeatingServer } from '../support/repeating-server.js';

/**
 * Issue 25, item 2: `carbon watch`, through the built binary. Time moves on the model's clock
 * (`carbon sandbox clock advance`); the poll interval is 20 ms, so a test waits for events, never
 * for wall time.
 */
const newHome = homes();

interface Event {
  id: string;
  object: string;
  type: string;
  created: string;
  data: { object: { id: string; status: string; reference: string | null } };
}

/** `carbon watch …` left running, its events read as they come. */
function watch(home: string, args: string[], env: Record<string, string> = {}) {
  const child = spawnCarbon(home, ['watch', '--interval', '20ms', ...args], env);
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const events = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event);
  return {
    events,
    stderr: () => err,
    /** Resolves once `n` events are out (the test's own timeout bounds it). */
    async until(n: number): Promise<Event[]> {
      while (events().length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return events();
    },
    async stop(signal: NodeJS.Signals = 'SIGINT') {
      child.kill(signal);
      return (await child).exitCode;
    },
    done: async () => (await child).exitCode,
  };
}

/** Resolves once `file` exists: the watcher wrote its cursor, so its first poll is done (the test's limit bounds it). */
/** Until `file` holds a poll's state, not only where a first run started (its --since: written before its first poll). */
async function written(file: string): Promise<void> {
  while (!existsSync(file) || startOnly(file)) await new Promise((resolve) => setTimeout(resolve, 20));
}
/** Whether the cursor holds only where a first run started: none of its first poll was kept. */
const startOnly = (file: string) => {
  const state = JSON.parse(readFileSync(file, 'utf8')) as { newest: unknown; pending: object; start?: string };
  return state.newest === null && Object.keys(state.pending).length === 0 && typeof state.start === 'string';
};

const buy = async (home: string, args: string[], env?: Record<string, string>) =>
  (await json<{ id: string }>(['buy', ...args], { home, ...(env ? { env } : {}) })).id;

/**
 * Where a test needs an offset to stay processing across several commands, it is a live one: a
 * test offset places itself 3 s after its purchase, which a busy machine can let pass between two
 * commands; a live one waits a minute of model time, which `sandbox clock advance` brings, and
 * real time only after a minute, far beyond the seconds a test here takes.
 */
const LIVE = ['--live', '--yes'];
async function liveHome(): Promise<string> {
  const home = newHome();
  await ok(['sandbox', 'topup', '250', '--live'], { home });
  return home;
}
const placeLive = (home: string) => ok(['sandbox', 'clock', 'advance', '1m', '--live'], { home });

describe('in a pipe', () => {
  test('what exists at the start is not news; a purchase and its placement are, one NDJSON event each', async () => {
    const home = await liveHome();
    const before = await buy(home, ['--kg', '5', ...LIVE]);
    const cursor = join(home, 'cursor.json');
    const w = watch(home, ['--cursor', cursor, '--live']);
    await written(cursor);
    const bought = await buy(home, ['--kg', '6', '--reference', 'r-1', ...LIVE]);
    const [created] = await w.until(1);
    expect(created).toMatchObject({
      object: 'event',
      type: 'offset.created',
      data: { object: { id: bought, status: 'processing', reference: 'r-1' } },
    });
    // The sandbox's event says it is one, as its offset does.
    expect(created!.id).toMatch(/^evt_sandbox[\w-]{17}$/);
    await placeLive(home);
    const events = await w.until(3);
    expect(
      events
        .slice(1)
        .map((e) => [e.type, e.data.object.id])
        .sort(),
    ).toEqual(
      [
        ['offset.placed', before],
        ['offset.placed', bought],
      ].sort(),
    );
    expect(await w.stop()).toBe(130);
    // A pipe: no banner, no progress; one plain line (the user's Ctrl-C is no error) says what was
    // done and where the cursor is.
    expect(w.stderr()).toBe(`Stopped watching (Ctrl-C) after 3 events; ${cursor} holds where it stopped.\n`);
    expect(statSync(cursor).mode & 0o777).toBe(0o600);
  });

  test('--cursor in a directory that does not exist is refused before the first poll: exit 2, one line, nothing asked of the API', async () => {
    const home = newHome();
    const cursor = join(home, 'missing', 'cursor.json');
    const r = await carbon(['watch', '--cursor', cursor], { home });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `error: Cannot keep the cursor in ${join(home, 'missing')}: there is no such directory. Give --cursor a file in a directory you can write.\n`,
    );
    // No poll was made: the journal holds no request.
    expect((await ok(['logs', '--json'], { home })).stdout).toBe('');
    // An empty name ("$CURSOR" unset) is no file.
    expect(await carbon(['watch', '--cursor', '', '--since', '1d', '--until-settled'], { home })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'error: --cursor needs a file (it is made on the first run), and was given an empty name.\n',
    });
    // A directory where the file should be: said in words, not as an errno code.
    expect(await carbon(['watch', '--cursor', home], { home })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `error: Cannot read the cursor ${home}: it is a directory. Give --cursor a file (it is made on the first run).\n`,
    });
    const plain = join(home, 'plain');
    writeFileSync(plain, 'x');
    expect(await carbon(['watch', '--cursor', join(plain, 'cursor.json')], { home })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `error: Cannot read the cursor ${join(plain, 'cursor.json')}: ${plain} is a file, not a directory. Give --cursor a file (it is made on the first run).\n`,
    });
  });

  test('--cursor resumes: changes made while stopped come out once, nothing twice', async () => {
    const home = await liveHome();
    const cursor = join(home, 'cursor.json');
    const first = await buy(home, ['--kg', '5', ...LIVE]);
    const w1 = watch(home, ['--cursor', cursor, '--since', '1h', '--live']);
    expect((await w1.until(1))[0]).toMatchObject({ type: 'offset.created', data: { object: { id: first } } });
    expect(await w1.stop('SIGTERM')).toBe(130);
    // While nobody watches: the first is placed, a second bought and placed, a third bought.
    const second = await buy(home, ['--kg', '6', ...LIVE]);
    await placeLive(home);
    const third = await buy(home, ['--kg', '7', ...LIVE]);
    const w2 = watch(home, ['--cursor', cursor, '--since', '1h', '--live']);
    const events = await w2.until(4);
    expect(events.map((e) => `${e.type} ${e.data.object.id}`)).toEqual([
      `offset.placed ${first}`,
      `offset.created ${second}`,
      `offset.placed ${second}`,
      `offset.created ${third}`,
    ]);
    expect(await w2.stop()).toBe(130);
    // Another mode or reference cannot use this cursor.
    const other = await carbon(['watch', '--cursor', cursor, '--reference', 'x'], { home });
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain('follows live offsets, not test offsets with reference "x".');
    // The same mode, another reference: said as the reference, not the mode.
    const another = await carbon(['watch', '--cursor', cursor, '--live', '--reference', 'x'], { home });
    expect([another.exitCode, another.stderr]).toEqual([
      2,
      `error: The cursor ${cursor} follows live offsets, not live offsets with reference "x". Give the same --live/--test and --reference, or another --cursor file.\n`,
    ]);
  });

  test('--cursor across a snapshot loaded (the clock back): the offsets made after it are sent, not passed by as older than the newest seen, and it is said', async () => {
    const home = newHome();
    const cursor = join(home, 'cursor.json');
    const snapshot = join(home, 's0.ndjson');
    await ok(['sandbox', 'snapshot', 'save', snapshot], { home });
    // A minute past the snapshot's clock: whatever is bought after the load is older than this.
    await ok(['sandbox', 'clock', 'advance', '1m'], { home });
    const before = await buy(home, ['--kg', '10']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const settledRun = await carbon(['watch', '--since', '1h', '--until-settled', '--cursor', cursor], { home });
    expect(settledRun.exitCode).toBe(0);
    // The clock goes back with the load: the offset bought after it is older than the one seen.
    await ok(['sandbox', 'snapshot', 'load', snapshot], { home });
    const after = await buy(home, ['--kg', '11']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const resumed = await carbon(['watch', '--until-settled', '--cursor', cursor], { home });
    expect(resumed.exitCode).toBe(0);
    expect(
      resumed.stdout
        .trim()
        .split('\n')
        .map((l) => `${(JSON.parse(l) as Event).type} ${(JSON.parse(l) as Event).data.object.id}`),
    ).toEqual([`offset.created ${after}`, `offset.placed ${after}`]);
    expect(resumed.stderr).toContain(
      'warning: the ledger went back (a sandbox reset or a snapshot loaded): the events of every offset in it are sent again.',
    );
    expect(after).not.toBe(before);
  });

  test('--cursor across a reset: an offset it followed, gone, is let go and said, not waited on run after run (exit 8)', async () => {
    const home = await liveHome();
    const cursor = join(home, 'cursor.json');
    const gone = await buy(home, ['--kg', '12', ...LIVE]);
    const waiting = await carbon(['watch', '--since', '1h', '--until-settled', '--timeout', '1', '--cursor', cursor, '--live'], { home });
    expect(waiting.exitCode).toBe(8);
    await ok(['sandbox', 'reset', '--yes'], { home });
    const after = await carbon(['watch', '--until-settled', '--timeout', '5', '--cursor', cursor, '--live'], { home });
    expect([after.exitCode, after.stdout]).toEqual([0, '']);
    expect(after.stderr).toContain(
      `warning: ${gone} is no longer in the ledger (a sandbox reset or a snapshot loaded): it is not followed any more.`,
    );
  });

  test("on the local engine, across a sandbox reset in another process: it goes on with the sandbox's new key, and prints what comes after", async () => {
    const home = newHome();
    const cursor = join(home, 'cursor.json');
    const w = watch(home, ['--interval', '50ms', '--status', 'processing', '--cursor', cursor]);
    await written(cursor);
    const first = await buy(home, ['--kg', '2']);
    expect((await w.until(1)).map((e) => e.data.object.id)).toEqual([first]);
    await ok(['sandbox', 'reset', '--yes'], { home });
    const after = await buy(home, ['--kg', '3']);
    expect((await w.until(2)).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([`offset.created ${first}`, `offset.created ${after}`]);
    expect(w.stderr()).not.toContain('Invalid API key');
    expect(await w.stop()).toBe(130);
  });

  test('through carbon serve, across a restart of the server: one warning, tried again at the interval, then what comes after', async () => {
    const home = newHome();
    const first = await serve(home, ['--show-keys']);
    const key = first.ready.test_key!;
    const port = new URL(first.url).port;
    const cursor = join(newHome(), 'cursor.json');
    const env = { CARBON_BASE_URL: first.url, CARBON_API_KEY: key, CARBON_MAX_RETRIES: '0' };
    // With --json too: the outage and the recovery are both said on stderr, a CI log's record of them.
    const w = watch(newHome(), ['--interval', '50ms', '--status', 'processing', '--cursor', cursor, '--json'], env);
    await written(cursor);
    await first.stop();
    while (!w.stderr().includes('Trying again every 50ms')) await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await serve(home, ['--port', port]);
    try {
      const bought = await json<{ id: string }>(['buy', '--kg', '4'], { home: newHome(), env });
      expect((await w.until(1)).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([`offset.created ${bought.id}`]);
      // On stderr, a pipe of its own: read when it comes (the test's limit bounds the wait).
      while (!w.stderr().includes('Reached again: watching on.')) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(w.stderr().match(/Trying again/g)).toHaveLength(1);
      expect(await w.stop()).toBe(130);
    } finally {
      await second.stop();
    }
  });

  // A CI job reruns the same command line (`--since 1h --cursor f --until-settled`): by the time it
  // does, an offset its cursor follows may be older than --since. It was followed (its
  // offset.created went out), so its placement is news still; before, the poll stopped at --since,
  // the event was never printed and --until-settled said it was still processing, run after run.
  test('--cursor with --since: an offset the cursor follows is followed to its end, however old it has become', async () => {
    const home = await liveHome();
    const cursor = join(home, 'cursor.json');
    const id = await buy(home, ['--kg', '5', ...LIVE]);
    const w1 = watch(home, ['--cursor', cursor, '--since', '1h', '--live']);
    expect((await w1.until(1))[0]).toMatchObject({ type: 'offset.created', data: { object: { id } } });
    expect(await w1.stop('SIGTERM')).toBe(130);
    // Two hours later (the model's), it is placed, and now older than --since 1h.
    await ok(['sandbox', 'clock', 'advance', '2h', '--live'], { home });
    const r = await carbon(
      ['watch', '--cursor', cursor, '--since', '1h', '--live', '--until-settled', '--interval', '20ms', '--timeout', '10'],
      {
        home,
      },
    );
    expect([r.exitCode, r.stderr]).toEqual([0, '✓ Every offset followed has settled (1 placed, 0 refunded).\n']);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'offset.placed', data: { object: { id, status: 'placed' } } });
  });

  test('--until-settled: exit 0 once all are placed, --status and --reference filter', async () => {
    const home = newHome();
    const a = await buy(home, ['--kg', '5', '--reference', 'a']);
    await buy(home, ['--kg', '6', '--reference', 'b']);
    const w = watch(home, ['--until-settled', '--since', '1h', '--reference', 'a', '--status', 'placed']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    expect(await w.done()).toBe(0);
    expect(w.events().map((e) => `${e.type} ${e.data.object.id}`)).toEqual([`offset.placed ${a}`]);
    expect(w.stderr()).toBe('✓ Every offset followed has settled (1 placed, 0 refunded).\n');
  });

  test('--until-settled: exit 9 when one is refunded; exit 8 when time runs out first', async () => {
    const home = await liveHome();
    const kept = await buy(home, ['--kg', '5', ...LIVE]);
    // Failed while still processing: live, so no second of real time can place it first.
    const failed = await buy(home, ['--kg', '6', ...LIVE]);
    await ok(['sandbox', 'fail', failed], { home });
    const w = watch(home, ['--until-settled', '--since', '1h', '--live']);
    await placeLive(home);
    expect(await w.done()).toBe(9);
    const settled = w
      .events()
      .filter((e) => e.type !== 'offset.created')
      .map((e) => `${e.type} ${e.data.object.id}`);
    expect(settled.sort()).toEqual([`offset.placed ${kept}`, `offset.refunded ${failed}`].sort());
    expect(w.stderr()).toMatch(/^error: Every offset followed has settled \(1 placed, 1 refunded\): some were refunded/);

    const other = await liveHome();
    // Held for review (a limit of $0): still processing when the watch ends, however long it takes to start.
    await ok(['sandbox', 'review-limit', '0'], { home: other });
    const live = await buy(other, ['--kg', '5', ...LIVE]);
    const late = await carbon(['watch', '--live', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1'], {
      home: other,
    });
    expect(late.exitCode).toBe(8);
    // The way on names the cursor only where there is one (without, a run starts from --since again).
    expect(late.stderr).toBe(`error: 1 offset is still processing after 1 s (${live}). Run it again to go on waiting.\n`);
    const cursor = join(other, 'watch.cursor');
    const again = await carbon(
      ['watch', '--live', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--cursor', cursor],
      {
        home: other,
      },
    );
    expect([again.exitCode, again.stderr]).toEqual([
      8,
      `error: 1 offset is still processing after 1 s (${live}). Run it again with --cursor ${cursor} to go on waiting.\n`,
    ]);
    expect(JSON.parse(late.stdout)).toMatchObject({ type: 'offset.created', data: { object: { id: live } } });
  });

  test('works the same on the remote engine, through carbon serve', async () => {
    const home = newHome();
    const server = await serve(home);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: (await sandboxKeys(home)).test };
      const id = await buy(home, ['--kg', '5'], env);
      const w = watch(home, ['--until-settled', '--since', '1h'], env);
      await ok(['sandbox', 'clock', 'advance', '5s'], { home });
      expect(await w.done()).toBe(0);
      expect(w.events().map((e) => `${e.type} ${e.data.object.id}`)).toEqual([`offset.created ${id}`, `offset.placed ${id}`]);
    } finally {
      await server.stop();
    }
  });

  test('bad options are usage errors (exit 2), nothing printed on stdout', async () => {
    const home = newHome();
    for (const args of [
      ['--interval', 'soon'],
      ['--interval', '1ms'],
      ['--forward-to', 'ftp://x'],
      ['--since', 'last week'],
      ['--status', 'lost'],
    ]) {
      const r = await carbon(['watch', ...args], { home });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
  });

  // A carbon serve stuck (a debugger, a held database lock) takes a poll: Ctrl-C went unheard until
  // the request's three 30 s attempts were spent, and the run then ended 1, "could not reach".
  test('Ctrl-C or SIGTERM while a poll waits on a server that does not answer: exit 130 at once, the cursor as it was', async () => {
    const asked: IncomingMessage[] = [];
    const stuck = createServer((req) => void asked.push(req));
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    const home = newHome();
    const cursor = join(home, 'cursor.json');
    writeFileSync(cursor, `${JSON.stringify({ version: 1, mode: 'test', reference: null, newest: null, pending: {} })}\n`);
    const env = {
      CARBON_BASE_URL: `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/api/v1`,
      CARBON_API_KEY: `ck_test_${'a'.repeat(32)}`,
    };
    try {
      for (const [signal, name] of [
        ['SIGINT', 'Ctrl-C'],
        ['SIGTERM', 'SIGTERM'],
      ] as const) {
        const child = spawnCarbon(home, ['watch', '--interval', '20ms', '--cursor', cursor], env);
        let err = '';
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
        try {
          const before = asked.length;
          while (asked.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
          child.kill(signal);
          // Bounded well below the 90 s the poll's attempts would take.
          const r = await Promise.race([child, new Promise<null>((resolve) => setTimeout(() => resolve(null), limit(10_000)))]);
          expect([r?.exitCode, err]).toEqual([130, `Stopped watching (${name}) after 0 events; ${cursor} holds where it stopped.\n`]);
        } finally {
          child.kill('SIGKILL');
        }
      }
      expect(JSON.parse(readFileSync(cursor, 'utf8'))).toEqual({ version: 1, mode: 'test', reference: null, newest: null, pending: {} });
    } finally {
      stuck.closeAllConnections();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });

  test("--until-settled's --timeout bounds a poll a server takes and never answers: exit 1 a second past it, saying so", async () => {
    const stuck = createServer(() => {});
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/api/v1`;
    try {
      // Before: each of the poll's three attempts waited the 2 s, then the backoff: "Could not reach …" after about 7.5 s.
      const r = await carbon(['watch', '--until-settled', '--timeout', '2'], {
        home: newHome(),
        env: { CARBON_BASE_URL: base, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` },
      });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        1,
        '',
        `error: No answer from ${base} by --timeout (2 s): the poll under way was given up.\n`,
      ]);
    } finally {
      stuck.closeAllConnections();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });

  test("--until-settled's --timeout ends a run whose server answered every poll with a 500 by saying so, not as no answer", async () => {
    const failing = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', code: 'internal_error', message: 'Something went wrong.' } }));
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/api/v1`;
    try {
      const r = await carbon(['watch', '--until-settled', '--timeout', '2', '--interval', '20ms'], {
        home: newHome(),
        env: { CARBON_BASE_URL: base, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}`, CARBON_MAX_RETRIES: '0' },
      });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([
        1,
        '',
        'warning: Something went wrong. Trying again every 20ms.\n' +
          `error: The polls of ${base} failed until --timeout (2 s); the last was answered 500: Something went wrong.\n`,
      ]);
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  test('stops with exit 1 naming the cursor when the server repeats a page', async () => {
    const stub = await repeatingServer('ignore');
    try {
      const r = await carbon(['watch', '--interval', '20ms'], {
        home: newHome(),
        env: { CARBON_BASE_URL: stub.url, CARBON_API_KEY: `ck_test_${'a'.repeat(32)}` },
      });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('starting_after=off_stub0003');
      expect(stub.requests).toHaveLength(2);
    } finally {
      await stub.close();
    }
  });
});

describe('--forward-to', () => {
  /** The README's verifier, as a reader would copy it into their app. */
  async function readmeVerifier(home: string): Promise<(body: string, header: string, secret: string) => boolean> {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const code = /```js\n(\/\/ verify-carbon-signature\.mjs\n[\s\S]*?)```/.exec(readme)![1]!;
    const file = join(home, 'verify-carbon-signature.mjs');
    writeFileSync(file, code);
    return ((await import(pathToFileURL(file).href)) as { verifyCarbonSignature: (b: string, h: string, s: string) => boolean })
      .verifyCarbonSignature;
  }

  const apps: Server[] = [];
  afterAll(async () => {
    for (const app of apps) await new Promise((resolve) => app.close(resolve));
  });

  /** A local app that answers 500 to its first `failFirst` requests, then 200. */
  async function app(failFirst: number) {
    const received: Array<{ body: string; signature: string; sandbox: string | undefined }> = [];
    let seen = 0;
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req
        .setEncoding('utf8')
        .on('data', (d: string) => (body += d))
        .on('end', () => {
          seen++;
          if (seen <= failFirst) return void res.writeHead(500).end();
          received.push({
            body,
            signature: String(req.headers['carbon-signature']),
            sandbox: req.headers['carbon-sandbox'] as string | undefined,
          });
          res.writeHead(204).end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apps.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, received, attempts: () => seen };
  }

  test("POSTs each event, signed; retries a failed delivery; keeps each offset's events in order", async () => {
    const home = newHome();
    const verify = await readmeVerifier(home);
    const local = await app(2);
    const ids = [await buy(home, ['--kg', '5']), await buy(home, ['--kg', '6'])];
    const w = watch(home, ['--until-settled', '--since', '1h', '--forward-to', local.url]);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    expect(await w.done()).toBe(0);
    // The secret: never in full on a stderr that is not a terminal (a CI log keeps it); one line
    // says how to print it. Kept in the profile (0600), printed on stdout when asked for by name.
    const secret = (await ok(['watch', '--print-secret'], { home })).stdout.trim();
    // 43 letters and digits (base62): not the older base64url, whose `-` and `_` the masking treats apart.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
    expect(w.stderr()).not.toContain(secret);
    expect(w.stderr()).toContain(
      `A signing secret whsec_…${secret.slice(-4)} was made and kept in profile default; \`carbon watch --print-secret\` writes it to stdout.`,
    );
    const config = readFileSync(join(home, 'config.json'), 'utf8');
    expect(config).toContain(secret);
    expect(statSync(join(home, 'config.json')).mode & 0o777).toBe(0o600);
    expect((await ok(['config', 'list', '--json'], { home })).stdout).not.toContain(secret);
    // A profile that holds only the secret is not shown empty: its row, masked, in the plain listing and on a terminal.
    expect((await ok(['config', 'list'], { home })).stdout).toBe(`default\twebhook-secret\twhsec_…${secret.slice(-4)}\n`);
    const shown = plain((await carbonTty(['config', 'list'], { home })).output);
    expect([shown.includes('(empty)'), shown.includes(`webhook-secret  whsec_…${secret.slice(-4)}`), shown.includes(secret)]).toEqual([
      false,
      true,
      false,
    ]);
    // With --json, a JSON document a script can read with jq, as `sandbox keys create --json` gives a key.
    expect(JSON.parse((await ok(['watch', '--print-secret', '--json'], { home })).stdout)).toEqual({ profile: 'default', secret });
    // config reads it (masked, unless asked for by name) and never sets it; unsetting it rotates it: the next run makes another.
    expect((await ok(['config', 'get', 'webhook-secret'], { home })).stdout).toBe(`whsec_…${secret.slice(-4)}\n`);
    expect((await ok(['config', 'get', 'webhook-secret', '--reveal'], { home })).stdout).toBe(`${secret}\n`);
    expect((await carbon(['config', 'set', 'webhook-secret', 'whsec_x'], { home })).exitCode).toBe(2);

    // Every event arrived, after two refused attempts, each body as printed and signed with the secret.
    expect(local.attempts()).toBe(w.events().length + 2);
    expect(local.received.map((r) => r.body)).toEqual(w.events().map((e) => JSON.stringify(e)));
    for (const r of local.received) {
      expect(r.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verify(r.body, r.signature, secret)).toBe(true);
      expect(verify(r.body.replace('"object":"event"', '"object":"evil"'), r.signature, secret)).toBe(false);
      expect(verify(r.body, r.signature, 'whsec_wrong')).toBe(false);
    }
    for (const id of ids) {
      const types = local.received
        .map((r) => JSON.parse(r.body) as Event)
        .filter((e) => e.data.object.id === id)
        .map((e) => e.type);
      expect(types).toEqual(['offset.created', 'offset.placed']);
    }

    // A second run uses the same secret and does not show it again.
    const again = watch(home, ['--until-settled', '--since', '1h', '--forward-to', local.url]);
    expect(await again.done()).toBe(0);
    expect(again.stderr()).not.toContain('whsec_');
    expect(verify(local.received.at(-1)!.body, local.received.at(-1)!.signature, secret)).toBe(true);

    // Rotated: unset, the next run makes and says a new one, and signs with it.
    await ok(['config', 'unset', 'webhook-secret'], { home });
    const rotated = watch(home, ['--until-settled', '--since', '1h', '--forward-to', local.url]);
    expect(await rotated.done()).toBe(0);
    expect(rotated.stderr()).toContain('A signing secret whsec_…');
    const fresh = (await ok(['watch', '--print-secret'], { home })).stdout.trim();
    expect(fresh).not.toBe(secret);
    expect(verify(local.received.at(-1)!.body, local.received.at(-1)!.signature, fresh)).toBe(true);
  });

  test('what the sandbox made says so (Carbon-Sandbox: true), on the local engine and through carbon serve; a service that does not say so: no marker', async () => {
    const home = newHome();
    const id = await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const expected = [`offset.created ${id}`, `offset.placed ${id}`];
    /** The run's events at a receiver of its own: what each was, and its Carbon-Sandbox header. */
    const forwarded = async (env: Record<string, string> = {}) => {
      const receiver = await app(0);
      const w = watch(home, ['--until-settled', '--since', '1h', '--forward-to', receiver.url], env);
      expect(await w.done()).toBe(0);
      const events = receiver.received.map((r) => JSON.parse(r.body) as Event);
      expect(events.map((e) => `${e.type} ${e.data.object.id}`)).toEqual(expected);
      return receiver.received.map((r) => r.sandbox);
    };
    expect(await forwarded()).toEqual(['true', 'true']);

    const server = await serve(home);
    const other = await headerless(server.url);
    try {
      const env = { CARBON_BASE_URL: server.url, CARBON_API_KEY: (await sandboxKeys(home)).test };
      expect(await forwarded(env)).toEqual(['true', 'true']);
      expect(await forwarded({ ...env, CARBON_BASE_URL: other.url })).toEqual([undefined, undefined]);
    } finally {
      other.close();
      await server.stop();
    }
  });

  test('Ctrl-C while a delivery is retried: the cursor stays where the poll began, and the next run delivers it', async () => {
    const home = await liveHome();
    const cursor = join(home, 'cursor.json');
    const down = await app(1000);
    const id = await buy(home, ['--kg', '5', ...LIVE]);
    const w = watch(home, ['--since', '1h', '--cursor', cursor, '--forward-to', down.url, '--live']);
    await w.until(1);
    while (down.attempts() < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await w.stop()).toBe(130);
    // Stopped before the poll's events were all delivered: nothing of it was kept, and the one
    // plain line says so.
    expect(startOnly(cursor)).toBe(true);
    expect(w.stderr()).toContain(
      `Stopped watching (Ctrl-C) after 1 event (0 delivered); 1 event not delivered to ${down.url}: the next run with --cursor ${cursor} sends it.\n`,
    );
    expect(w.stderr()).not.toContain('error:');
    const up = await app(0);
    const again = watch(home, ['--since', '1h', '--cursor', cursor, '--forward-to', up.url, '--live']);
    await again.until(1);
    await written(cursor);
    expect(await again.stop()).toBe(130);
    expect(up.received.map((r) => JSON.parse(r.body) as Event).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([
      `offset.created ${id}`,
    ]);
  });

  // `| head -1` ends a listing quietly (exit 0); events left undelivered are not a success. The
  // reader goes away as head's does (it closes its end of the pipe) once it has the first line,
  // while the app holds that first delivery, so the next line written meets the closed pipe.
  test('a reader that goes away (| head -1) stops the run: the delivery under way finishes, the rest counted, exit 12; the next run with the cursor delivers them', async () => {
    const home = newHome();
    const cursor = join(home, 'cursor.json');
    const ids = [await buy(home, ['--kg', '5']), await buy(home, ['--kg', '6'])];
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const received: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', async () => {
        if (received.length === 0) await held;
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apps.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const child = spawnCarbon(home, ['watch', '--interval', '20ms', '--since', '1h', '--cursor', cursor, '--forward-to', url]);
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve();
      });
    });
    child.stdout!.destroy();
    release();
    const exitCode = (await child).exitCode;
    expect([exitCode, err]).toEqual([
      12,
      `A signing secret ${err.match(/whsec_…[\w-]{4}/)?.[0]} was made and kept in profile default; \`carbon watch --print-secret\` writes it to stdout.\n` +
        `error: Stopped watching: stdout's reader went away after 2 events (2 delivered); 2 events not delivered to ${url} (found, not printed yet): the next run with --cursor ${cursor} sends them.\n`,
    ]);
    expect(received).toHaveLength(2);
    expect(startOnly(cursor)).toBe(true);

    const again = watch(home, ['--until-settled', '--since', '1h', '--cursor', cursor, '--forward-to', url]);
    expect(await again.done()).toBe(0);
    const types = new Set(received.map((b) => JSON.parse(b) as Event).map((e) => `${e.type} ${e.data.object.id}`));
    expect([...types].sort()).toEqual(ids.flatMap((id) => [`offset.created ${id}`, `offset.placed ${id}`]).sort());
  });

  test('an app that refuses, then accepts: the event is retried with backoff until it is taken, never passed by', async () => {
    const home = newHome();
    // More refusals than the six attempts an event used to get before it was skipped for good.
    const local = await app(7);
    const id = await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const w = watch(home, ['--until-settled', '--since', '1h', '--forward-to', local.url]);
    expect(await w.done()).toBe(0);
    expect(local.received.map((r) => JSON.parse(r.body) as Event).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([
      `offset.created ${id}`,
      `offset.placed ${id}`,
    ]);
    expect(local.attempts()).toBe(2 + 7);
    // Each refused attempt is a warning naming what the app answered and when the next one is.
    expect(
      w.stderr().match(/^warning: offset\.created evt_\S+ for off_\w+ was not delivered to \S+ \(HTTP 500\), attempt \d+; retrying in /gm),
    ).toHaveLength(7);
    expect(w.stderr()).toContain('✓ Every offset followed has settled (1 placed, 0 refunded).');
  });

  test('--until-settled stopped by --timeout with events undelivered: exit 12, how many; the next run with the cursor delivers them', async () => {
    const home = newHome();
    const cursor = join(home, 'cursor.json');
    const down = await app(1000);
    const id = await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const first = await carbon(
      ['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--cursor', cursor, '--forward-to', down.url],
      { home },
    );
    expect(first.exitCode).toBe(12);
    expect(first.stderr).toMatch(/^warning: offset\.created evt_\S+ for off_\w+ was not delivered to \S+ \(HTTP 500\), attempt 1; /m);
    expect(first.stderr).toContain(
      `error: Stopped at --timeout (1 s) after 1 event (0 delivered); 2 events not delivered to ${down.url} (1 of them found, not printed yet): the next run with --cursor ${cursor} sends them.\n`,
    );
    expect(first.stderr).not.toMatch(/settled/);
    // The first poll was not all delivered: the cursor holds where that run started (its --since), nothing past it.
    expect(startOnly(cursor)).toBe(true);

    // As the line says: the next run with the cursor (no --since this time) sends them.
    const up = await app(0);
    const again = watch(home, ['--until-settled', '--cursor', cursor, '--forward-to', up.url]);
    expect(await again.done()).toBe(0);
    expect(up.received.map((r) => JSON.parse(r.body) as Event).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([
      `offset.created ${id}`,
      `offset.placed ${id}`,
    ]);
    // --json: the envelope counts them for a script.
    const json = await carbon(
      ['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--json', '--forward-to', down.url],
      { home },
    );
    expect(json.exitCode).toBe(12);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1)!)).toMatchObject({
      error: { code: 'events_undelivered', printed: 1, delivered: 0, undelivered: 2 },
    });
  });

  test('SIGTERM while a delivery is retried: exit 130, one plain line with what was not delivered', async () => {
    const home = await liveHome();
    const down = await app(1000);
    await buy(home, ['--kg', '5', ...LIVE]);
    const w = watch(home, ['--since', '1h', '--live', '--forward-to', down.url]);
    await w.until(1);
    while (down.attempts() < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await w.stop('SIGTERM')).toBe(130);
    expect(w.stderr()).toMatch(
      /^Stopped watching \(SIGTERM\) after 1 event \(0 delivered\); 1 event not delivered to \S+: the run had no --cursor, so the next one starts afresh \(--cursor FILE carries them over\)\.$/m,
    );
  });

  /**
   * An app that holds each request for 8 s (paused at a breakpoint, or stuck), then takes it: well
   * within the 10 s an attempt may last, so a run that waits for the answer delivers it.
   */
  async function stuckApp() {
    const taken: string[] = [];
    let requests = 0;
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        requests++;
        setTimeout(() => {
          if (res.destroyed) return;
          taken.push(body);
          res.writeHead(204).end();
        }, 8000).unref();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apps.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, taken, requests: () => requests };
  }

  // A developer's handler paused at a breakpoint: Ctrl-C (or a container's SIGTERM, SIGKILL 10 s
  // later) stopped the run only once the app answered or the attempt's 10 s were out.
  test('Ctrl-C or SIGTERM while the app holds a delivery: the attempt is given up at once, exit 130, the cursor sends it next run', async () => {
    const home = await liveHome();
    const cursor = join(home, 'cursor.json');
    const stuck = await stuckApp();
    const id = await buy(home, ['--kg', '5', ...LIVE]);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const w = watch(home, ['--since', '1h', '--live', '--cursor', cursor, '--forward-to', stuck.url]);
      await w.until(1);
      const before = stuck.requests();
      while (stuck.requests() === before) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await w.stop(signal)).toBe(130);
      expect(w.stderr()).toContain(
        `Stopped watching (${signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM'}) after 1 event (0 delivered); 1 event not delivered to ${stuck.url}: the next run with --cursor ${cursor} sends it.\n`,
      );
      expect(w.stderr()).not.toMatch(/warning|error/);
    }
    expect(stuck.taken).toEqual([]);
    expect(startOnly(cursor)).toBe(true);
    const up = await app(0);
    const again = watch(home, ['--since', '1h', '--live', '--cursor', cursor, '--forward-to', up.url]);
    await again.until(1);
    await written(cursor);
    expect(await again.stop()).toBe(130);
    expect(up.received.map((r) => JSON.parse(r.body) as Event).map((e) => `${e.type} ${e.data.object.id}`)).toEqual([
      `offset.created ${id}`,
    ]);
  });

  test("--until-settled's --timeout bounds an attempt under way: exit 12 at the deadline, not when the app answers", async () => {
    const home = newHome();
    const stuck = await stuckApp();
    await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const r = await carbon(
      ['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--forward-to', stuck.url],
      { home },
    );
    expect(r.exitCode).toBe(12);
    expect(r.stderr).toMatch(
      /^warning: offset\.created evt_\S+ for off_\w+ was not delivered to \S+ \(no answer in [\d.]+ m?s\), attempt 1; no time is left to retry\.$/m,
    );
    expect(r.stderr).toContain(
      `error: Stopped at --timeout (1 s) after 1 event (0 delivered); 2 events not delivered to ${stuck.url} (1 of them found, not printed yet):`,
    );
    expect(stuck.taken).toEqual([]);
  });

  test("--until-settled's --timeout bounds a run whose app takes every event, slowly: exit 12 with those left, not every event first", async () => {
    const home = newHome();
    // An app that takes each event after 600 ms: eight events would take 4.8 s of a 1 s --timeout.
    const taken: string[] = [];
    const slow = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () =>
        setTimeout(() => {
          taken.push(body);
          res.writeHead(204).end();
        }, 600).unref(),
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    apps.push(slow);
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/webhooks`;
    for (const kg of ['1', '2', '3', '4']) await buy(home, ['--kg', kg]);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const r = await carbon(['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--forward-to', url], {
      home,
    });
    expect(r.exitCode).toBe(12);
    const [, printed, delivered, left] =
      /^error: Stopped at --timeout \(1 s\) after (\d+) events? \((\d+) delivered\); (\d+) events? not delivered/m
        .exec(r.stderr)!
        .map(Number);
    expect([printed, delivered, printed! + left!]).toEqual([taken.length, taken.length, 8]);
    expect(taken.length).toBeLessThan(8);
  });

  test('a redirect is not followed: the event does not go to another address, and the warning names the status', async () => {
    const home = newHome();
    const elsewhere = await app(0);
    const redirecting = createServer((req, res) => req.resume().on('end', () => res.writeHead(307, { location: elsewhere.url }).end()));
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    apps.push(redirecting);
    const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/webhooks`;
    await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const r = await carbon(['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--timeout', '1', '--forward-to', url], {
      home,
    });
    expect(r.exitCode).toBe(12);
    expect(r.stderr).toMatch(
      /^warning: offset\.created evt_\S+ for off_\w+ was not delivered to \S+ \(HTTP 307, a redirect: not followed/m,
    );
    expect(elsewhere.attempts()).toBe(0);
  });

  test('a URL with a user name or password is a usage error that does not repeat them', async () => {
    const home = newHome();
    for (const url of [
      'http://hook-user:s3cr3t-pw@127.0.0.1:3000/webhooks',
      'http://hook-user@127.0.0.1:3000/',
      'http://hook-user:s3cr3t-pw@[::1',
    ]) {
      const r = await carbon(['watch', '--forward-to', url], { home });
      expect(r.exitCode, url).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: --forward-to must /);
      expect(r.stderr).not.toMatch(/s3cr3t|hook-user/);
    }
  });

  test("the query's values (a key, a receiver's token) are sent, and shown as *** in every line that names the URL", async () => {
    const home = await liveHome();
    const { test: key } = await sandboxKeys(home);
    const down = await app(1000);
    await buy(home, ['--kg', '5', ...LIVE]);
    const token = 'SuperSecret123';
    const url = `${down.url}?key=${key}&token=${token}`;
    const r = await carbon(
      ['watch', '--since', '1h', '--live', '--until-settled', '--interval', '20ms', '--timeout', '1', '--forward-to', url],
      { home },
    );
    expect(r.exitCode).toBe(12);
    expect(r.stderr).toMatch(
      /^warning: offset\.created evt_\S+ for off_\w+ was not delivered to \S+\/webhooks\?key=\*\*\*&token=\*\*\* \(HTTP 500\)/m,
    );
    expect(r.stderr).toMatch(/^error: Stopped at --timeout .* not delivered to \S+\/webhooks\?key=\*\*\*&token=\*\*\*: /m);
    expect(leakedKeys(r.stderr, [key])).toEqual([]);
    expect(r.stderr).not.toContain(token);
    expect(down.attempts()).toBeGreaterThan(0);
  });
});

describe('on a terminal', () => {
  test('says what it watches, where it forwards and each delivery; the events are NDJSON still', async () => {
    const home = newHome();
    await buy(home, ['--kg', '5']);
    await ok(['sandbox', 'clock', 'advance', '5s'], { home });
    const server = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const r = await carbonTty(['watch', '--until-settled', '--since', '1h', '--interval', '20ms', '--forward-to', url], { home });
      expect(r.exitCode).toBe(0);
      const text = plain(r.output);
      expect(text).toContain('Your signing secret is whsec_');
      expect(text).toMatch(/Forwarding to http:\/\/127\.0\.0\.1:\d+\/hook, signed with whsec_….{4} \(header Carbon-Signature\)/);
      expect(text).toContain('Watching test offsets every 20ms until they settle (Ctrl-C to stop)…');
      expect(text).toMatch(/^→ offset\.placed off_\w+ \[200\]$/m);
      expect(text).toMatch(/^\{"id":"evt_[\w-]+","object":"event","type":"offset\.created"/m);
      expect(text).toContain('✓ Every offset followed has settled (1 placed, 0 refunded).');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
