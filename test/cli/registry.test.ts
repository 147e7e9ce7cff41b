import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { CommandSpec } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { STANDALONE_COMMANDS } from '../../src/cli/registry.js';

/**
 * The commands declare themselves (src/cli/commands/<name>/index.ts) and the registry builds the
 * rest. A declaration is loaded on every start-up, so it must stay data: its handler is imported
 * only when the command runs.
 */

const DIR = join(import.meta.dirname, '..', '..', 'src', 'cli', 'commands');
const folders = readdirSync(DIR).filter((name) => statSync(join(DIR, name)).isDirectory());

/** The modules a file imports for their values (type-only imports are erased from the bundle). */
const valueImports = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*? from '([^']+)';$/gms)].map((m) => m[1]!);

function* walk(specs: readonly CommandSpec[]): Generator<CommandSpec> {
  for (const spec of specs) {
    yield spec;
    yield* walk(spec.subcommands ?? []);
  }
}

describe('a declaration is cheap: data only, its handler imported when the command runs', () => {
  test.each(folders)('commands/%s/index.ts', (folder) => {
    const imports = valueImports(join(DIR, folder, 'index.ts'));
    // Lists shared with the API and the other declarations, never a handler or anything it needs.
    const allowed = new Set(['../../../api/types.js', '../../flags.js']);
    expect(imports.filter((path) => !allowed.has(path))).toEqual([]);
    expect(readFileSync(join(DIR, folder, 'index.ts'), 'utf8')).not.toMatch(/\bawait\b/);
  });

  test('every command that runs something names a handler, and only the commands that have subcommands do not', () => {
    for (const spec of walk(COMMANDS)) expect(spec.load === undefined, spec.name).toBe(spec.subcommands !== undefined);
  });

  test('every handler a declaration names exists, as a function', async () => {
    for (const spec of walk(COMMANDS)) if (spec.load !== undefined) expect(typeof (await spec.load()), spec.name).toBe('function');
  });
});

test('every folder of commands/ is one registered command (or two, for completion and its helper)', () => {
  expect(COMMANDS.map((c) => (c.name === '__complete' ? 'complete' : c.name)).sort()).toEqual([...folders].sort());
});

test('a run that names a command registers it alone, but for the completion commands, which read the whole tree', () => {
  expect([...STANDALONE_COMMANDS].sort()).toEqual(
    ['api', 'balance', 'buy', 'config', 'impact', 'list', 'logs', 'open', 'quote', 'report', 'sandbox', 'serve', 'show', 'watch'].sort(),
  );
});
