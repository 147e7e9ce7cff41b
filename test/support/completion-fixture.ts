import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { carbon, lines, makeSandbox, type Sandbox } from './shells.js';

/**
 * One sandbox for a shell's tests: two profiles in config.json (written by hand: the point is
 * the file, not `carbon config`) and two purchases on the local model, whose ids the tests
 * expect `show` to offer, newest first.
 */
export interface Fixture {
  sandbox: Sandbox;
  /** The offsets bought, newest first. */
  offsetIds: string[];
}

export async function makeFixture(): Promise<Fixture> {
  const sandbox = makeSandbox();
  writeFileSync(
    join(sandbox.home, 'config.json'),
    `${JSON.stringify({ profiles: { default: {}, staging: { mode: 'live', base_url: 'https://api.example.com/api/v1' } } }, null, 2)}\n`,
    { mode: 0o600 },
  );
  const offsetIds: string[] = [];
  for (const kg of ['500', '20']) {
    const bought = await carbon(sandbox, ['buy', '--kg', kg, '--json']);
    expect(bought.exitCode, bought.stderr).toBe(0);
    offsetIds.unshift((JSON.parse(bought.stdout) as { id: string }).id);
  }
  const listed = await carbon(sandbox, ['list', '--format', 'plain']);
  expect(lines(listed.stdout).map((l) => l.split('\t')[0])).toEqual(offsetIds);
  return { sandbox, offsetIds };
}

/** The top-level commands every shell must offer (config and sandbox included). */
export const TOP_COMMANDS = ['buy', 'quote', 'list', 'show', 'balance', 'impact', 'config', 'sandbox', 'completion'];
export const LIST_OPTIONS = ['--limit', '--starting-after', '--reference', '--all', '--format'];
export const FORMATS = ['table', 'plain', 'json', 'csv'];
