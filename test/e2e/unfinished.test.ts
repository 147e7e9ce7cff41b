import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { execa } from 'execa';
import { expect, test } from 'vitest';
import { ROOT } from '../support/binary.js';
import { homes } from '../support/cli.js';

// src/cli/run-to-exit.ts is where every command ends. A command whose work never settles (a bug:
// it waits on nothing) must not end as if it had finished: Node would exit 0 once its event loop
// is empty. Run here as a real process: run-to-exit.ts bundled with a command of each kind.

const newDir = homes();

async function runCommand(body: string, args: string[] = []) {
  const dir = newDir();
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    `import { runToExit } from ${JSON.stringify(join(ROOT, 'src', 'cli', 'run-to-exit.ts'))};\nvoid runToExit(process.argv.slice(2), ${body});\n`,
  );
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'run.cjs'), logLevel: 'silent' });
  return execa(process.execPath, [join(dir, 'run.cjs'), ...args], { reject: false, env: { PATH: process.env.PATH! }, extendEnv: false });
}

test('a command left waiting on nothing exits 1 with one line (or the JSON envelope), not 0', async () => {
  const plain = await runCommand('() => new Promise(() => {})');
  expect(plain.exitCode).toBe(1);
  expect(plain.stdout).toBe('');
  expect(plain.stderr).toMatch(
    /^error: Unexpected error: carbon stopped before the command finished: it was left waiting on nothing \(a bug in carbon\)\.[^\n]*$/,
  );

  const json = await runCommand('() => new Promise(() => {})', ['--json']);
  expect(json.exitCode).toBe(1);
  expect(JSON.parse(json.stderr)).toMatchObject({ error: { type: 'api_error', code: 'unexpected_error' } });
});

test('a command that finishes, at once or after a timer, exits 0 with nothing on stderr', async () => {
  for (const body of ['async () => {}', '() => new Promise((resolve) => setTimeout(resolve, 20))']) {
    const r = await runCommand(body);
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
  }
});
