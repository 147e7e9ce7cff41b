import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layer rules of docs/architecture.md, read off the imports (static, type-only and lazy
 * `import()` alike). Each directory of src/ is a layer, and a layer may import only the layers
 * listed for it here. src/engine/ is the composition root: the one place above the service that
 * opens a store.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  api: [],
  platform: [],
  store: ['api', 'platform'],
  service: ['api', 'platform', 'store'],
  client: ['api', 'platform', 'service'],
  engine: ['api', 'platform', 'store', 'service', 'client'],
  server: ['api', 'platform', 'service', 'engine'],
  cli: ['api', 'platform', 'service', 'client', 'engine', 'server'],
};

/**
 * Within a layer it may import, the files a layer may reach. The service uses the store through its
 * port alone: it never opens a store or names one (that is openEngine's, in src/engine/).
 */
const ONLY: Record<string, Record<string, readonly string[]>> = {
  service: { store: ['store/port.ts', 'store/ledger-error.ts'] },
};

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The first directory under src/ a path is in: '' for a file at the top (index.ts), null outside src/ (package.json). */
function layerOf(file: string): string | null {
  const path = relative(SRC, file);
  if (path.startsWith('..')) return null;
  const parts = path.split(sep);
  return parts.length > 1 ? parts[0]! : '';
}

/** Every relative module a file imports, resolved to a path. */
function importsOf(file: string, text = readFileSync(file, 'utf8')): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]!);
  return specifiers.map((s) => resolve(dirname(file), s));
}

/** The imports of `file` that cross into a layer it may not use, as `from → to` lines. */
function violations(file: string, text?: string): string[] {
  const from = layerOf(file);
  if (from === '' || from === null) return []; // src/index.ts: the package's public surface, above every layer
  const allowed = MAY_IMPORT[from];
  if (allowed === undefined)
    return [`${relative(SRC, file)}: src/${from} is not a known layer (add it to MAY_IMPORT and the architecture doc)`];
  const reachable = (target: string, to: string) =>
    ONLY[from]?.[to]?.includes(relative(SRC, target).replace(/\.js$/, '.ts').split(sep).join('/')) ?? true;
  return importsOf(file, text)
    .map((target) => ({ target, to: layerOf(target) }))
    .filter(({ target, to }) => to !== null && to !== from && (!allowed.includes(to) || !reachable(target, to)))
    .map(({ target }) => `${relative(SRC, file)} → ${relative(SRC, target)}`);
}

describe('the layer rules', () => {
  it('hold for every file of src/', () => {
    expect(sourceFiles(SRC).flatMap((f) => violations(f))).toEqual([]);
  });

  it('catch a CLI command that opens a store, a server reading the port, and a service importing the CLI', () => {
    expect(violations(join(SRC, 'cli/commands/x.ts'), "import { openStore } from '../../store/open.js';")).toEqual([
      'cli/commands/x.ts → store/open.js',
    ]);
    expect(violations(join(SRC, 'server/x.ts'), "const { LedgerError } = await import('../store/ledger-error.js');")).toEqual([
      'server/x.ts → store/ledger-error.js',
    ]);
    expect(violations(join(SRC, 'service/x.ts'), "import type { Context } from '../cli/context.js';")).toEqual([
      'service/x.ts → cli/context.js',
    ]);
    expect(violations(join(SRC, 'engine/open.ts'), "import { openStore } from '../store/open.js';")).toEqual([]);
  });

  it('catch a service that opens a store or names one, and let it use the port', () => {
    expect(violations(join(SRC, 'service/x.ts'), "import { openStore } from '../store/open.js';")).toEqual([
      'service/x.ts → store/open.js',
    ]);
    expect(violations(join(SRC, 'service/x.ts'), "import type { SqliteStore } from '../store/sqlite/sqlite-store.js';")).toEqual([
      'service/x.ts → store/sqlite/sqlite-store.js',
    ]);
    expect(violations(join(SRC, 'service/x.ts'), "import type { LedgerTx } from '../store/port.js';")).toEqual([]);
  });
});
