import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { carbon, homes, ok } from '../support/cli.js';
import { limit } from '../support/load.js';
import { random } from '../support/seed.js';

/**
 * config.json written by several carbon processes at once, as a CI job does (`config set --profile a …
 * & config set --profile b … & wait`) and as a person does with `carbon watch` in one terminal and
 * `config set` in another. Each writer reads the file, changes it and renames a new one into place;
 * without a lock across processes the last one's rename dropped the others' changes. Real
 * processes, started together, in rounds; which keys and profiles each sets comes from CARBON_TEST_SEED.
 */

const newHome = homes();
const WRITERS = 8;
const ROUNDS = 3;

const KEYS = {
  'test-key': (i: number) => `ck_test_${'Q'.repeat(12)}${i}`,
  'live-key': (i: number) => `ck_live_${'Q'.repeat(12)}${i}`,
  mode: (i: number) => (i % 2 === 0 ? 'live' : 'test'),
  'base-url': (i: number) => `http://127.0.0.1:9/api/v${i}`,
} as const;
const FIELDS = { 'test-key': 'test_key', 'live-key': 'live_key', mode: 'mode', 'base-url': 'base_url' } as const;
type Key = keyof typeof KEYS;

type Config = { current_profile?: string; profiles?: Record<string, Record<string, string>> };
const configIn = (home: string): Config => JSON.parse(readFileSync(join(home, 'config.json'), 'utf8')) as Config;

/** `count` different (profile, key) pairs, drawn from the seed: some profiles get several keys, set by different processes. */
function draw(next: () => number, count: number): Array<{ profile: string; key: Key }> {
  const keys = Object.keys(KEYS) as Key[];
  const pairs = ['p0', 'p1', 'p2', 'p3'].flatMap((profile) => keys.map((key) => ({ profile, key })));
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
  }
  return pairs.slice(0, count);
}

describe('writers at once', () => {
  test(`${WRITERS} config set of different keys and profiles at once: every value is kept`, async () => {
    const next = random();
    for (let round = 0; round < ROUNDS; round++) {
      const home = newHome();
      const writes = draw(next, WRITERS).map((w, i) => ({ ...w, value: KEYS[w.key](i) }));
      const runs = await Promise.all(
        writes.map(({ profile, key, value }) =>
          key.endsWith('-key')
            ? carbon(['config', 'set', '--profile', profile, key, '-'], { home, input: `${value}\n` })
            : carbon(['config', 'set', '--profile', profile, key, value], { home }),
        ),
      );
      expect(runs.filter((r) => r.exitCode !== 0)).toEqual([]);
      const expected: Record<string, Record<string, string>> = {};
      for (const { profile, key, value } of writes) expected[profile] = { ...expected[profile], [FIELDS[key]]: value };
      expect({ round, profiles: configIn(home).profiles }).toEqual({ round, profiles: expected });
      // No lock or temporary file left behind, and the file still the owner's only.
      expect(readdirSync(home)).toEqual(['config.json']);
      expect(statSync(join(home, 'config.json')).mode & 0o777).toBe(0o600);
    }
  });

  test('carbon watch --print-secret racing on a new profile, beside config set: every racer prints the one secret kept', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const home = newHome();
      await ok(['config', 'set', '--profile', 'ci', 'mode', 'test'], { home });
      const [watches, sets] = await Promise.all([
        Promise.all([0, 1, 2, 3].map(() => carbon(['watch', '--print-secret', '--profile', 'ci'], { home }))),
        Promise.all([0, 1, 2, 3].map((i) => carbon(['config', 'set', '--profile', `other${i}`, 'mode', 'live'], { home }))),
      ]);
      expect([...watches, ...sets].filter((r) => r.exitCode !== 0)).toEqual([]);
      const config = configIn(home);
      const kept = config.profiles?.ci?.webhook_secret;
      expect(kept).toMatch(/^whsec_/);
      expect({ round, printed: watches.map((r) => r.stdout) }).toEqual({ round, printed: Array(4).fill(`${kept}\n`) });
      expect(config.profiles).toEqual({
        ci: { mode: 'test', webhook_secret: kept },
        other0: { mode: 'live' },
        other1: { mode: 'live' },
        other2: { mode: 'live' },
        other3: { mode: 'live' },
      });
    }
  });
});

/**
 * A writer of the config (src/cli/config-store.ts's writeConfig, bundled as the CLI bundles it)
 * that stops for good once it holds the lock, saying so on stdout: a carbon process killed there
 * (kill -9, a cancelled CI job) leaves the lock behind.
 */
const holders: Array<ReturnType<typeof execa>> = [];
// One a failed test left holding is not left behind.
afterAll(() => {
  for (const child of holders) child.kill('SIGKILL');
});

async function holder(home: string) {
  const dir = newHome();
  const entry = join(dir, 'holder.ts');
  writeFileSync(
    entry,
    [
      "import { existsSync, writeSync } from 'node:fs';",
      `import { writeConfig } from ${JSON.stringify(join(ROOT, 'src', 'cli', 'config-store.ts'))};`,
      'const home = process.argv[2]!;',
      'void writeConfig(home, (data) => {',
      "  if (existsSync(home + '/config.json.lock')) {",
      "    writeSync(1, 'holding\\n'); // at once: process.stdout to a pipe may still hold it when the wait starts",
      '    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);',
      '  }',
      "  return { ...data, current_profile: 'never' };",
      '});',
    ].join('\n'),
  );
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: join(dir, 'holder.cjs'),
    logLevel: 'silent',
  });
  const child = execa(process.execPath, [join(dir, 'holder.cjs'), home], { reject: false, buffer: false, stdin: 'ignore' });
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out === 'holding\n') resolve();
    });
    void child.then((r) =>
      reject(new Error(`the holder ended without holding the lock (exit ${r.exitCode}, stdout ${JSON.stringify(out)})`)),
    );
  });
  // In an object: the child is a promise of its end, which an async function would wait for.
  return { child };
}

describe('a lock left behind', () => {
  test('a writer that holds the lock is waited for, within a bound: then one line, exit 1, nothing changed; killed with -9, the next writer proceeds', async () => {
    const home = newHome();
    await ok(['config', 'set', '--profile', 'a', 'mode', 'live'], { home });
    const before = readFileSync(join(home, 'config.json'), 'utf8');
    const { child: held } = await holder(home);
    try {
      const lock = join(home, 'config.json.lock');
      const waited = await carbon(['config', 'set', '--profile', 'b', 'mode', 'live'], { home, timeout: limit(30_000) });
      expect({ exitCode: waited.exitCode, stdout: waited.stdout }).toEqual({ exitCode: 1, stdout: '' });
      expect(waited.stderr).toBe(
        `error: The config file ${join(home, 'config.json')} is being changed by process ${held.pid}, and was still locked after 10 s; nothing was changed. Try again; if no carbon is running, remove ${lock}.\n`,
      );
      expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe(before);
    } finally {
      held.kill('SIGKILL');
      await held;
    }
    await ok(['config', 'set', '--profile', 'b', 'mode', 'live'], { home });
    expect(configIn(home)).toEqual({ profiles: { a: { mode: 'live' }, b: { mode: 'live' } } });
    expect(readdirSync(home)).toEqual(['config.json']);
  });

  test('a lock from another machine (a HOME shared over NFS) is taken over once older than any write; one never named, sooner', async () => {
    const home = newHome();
    const lock = join(home, 'config.json.lock');
    const past = (seconds: number) => new Date(Date.now() - seconds * 1000);
    for (const [text, age] of [
      [`4242 not-${hostname()} 0123abcd\n`, 60],
      ['', 5],
    ] as const) {
      writeFileSync(lock, text);
      utimesSync(lock, past(age), past(age));
      await ok(['config', 'set', 'mode', age === 60 ? 'live' : 'test'], { home });
      expect(existsSync(lock)).toBe(false);
    }
    expect(configIn(home)).toEqual({ profiles: { default: { mode: 'test' } } });
  });
});
