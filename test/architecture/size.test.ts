import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Size limits of src/ (docs/architecture.md, "Rules of the code"): no file over 300 lines (200 in
 * src/server) and no function over 60, so each can be read whole. Declarative tables (the route
 * and request tables, the SQL statements) are lists, not logic, and may run longer: one that
 * needs to is named in TABLES (none does today).
 */
const MAX_FILE_LINES = 300;
/** `carbon serve` is read whole more often than anything: its files stay under 200 lines. */
const MAX_SERVER_FILE_LINES = 200;
const MAX_FUNCTION_LINES = 60;
const TABLES = new Set<string>([]);

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every function, method, accessor and arrow over the limit, as `file:line name (N lines)`. */
function longFunctions(name: string, text: string, max = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      const label = node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : ts.SyntaxKind[node.kind];
      if (lines > max) found.push(`${name}:${start + 1} ${label} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the size of src/', () => {
  const files = sourceFiles(SRC).map((file) => ({ name: relative(SRC, file), text: readFileSync(file, 'utf8') }));

  it(`has no file over ${MAX_FILE_LINES} lines but the declarative tables`, () => {
    const long = files.filter((f) => !TABLES.has(f.name) && f.text.split('\n').length - 1 > MAX_FILE_LINES);
    expect(long.map((f) => `${f.name} (${f.text.split('\n').length - 1} lines)`)).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines but the declarative tables`, () => {
    expect(files.filter((f) => !TABLES.has(f.name)).flatMap((f) => longFunctions(f.name, f.text))).toEqual([]);
  });

  it(`has no file in server/ over ${MAX_SERVER_FILE_LINES} lines`, () => {
    const long = files.filter((f) => f.name.startsWith(`server${sep}`) && f.text.split('\n').length - 1 > MAX_SERVER_FILE_LINES);
    expect(long.map((f) => `${f.name} (${f.text.split('\n').length - 1} lines)`)).toEqual([]);
  });

  it('measures a function from its first line to its last', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    expect(longFunctions('a.ts', `function ok() {\n${body(58)}\n}\n`)).toEqual([]);
    expect(longFunctions('a.ts', `class C {\n  m() {\n${body(59)}\n  }\n}\n`)).toEqual(['a.ts:2 m (61 lines)']);
    expect(longFunctions('a.ts', `const f = () => {\n${body(59)}\n};\n`)).toEqual(['a.ts:1 ArrowFunction (61 lines)']);
  });
});

describe('bin/carbon.cjs, the one file every start compiles without a cache', () => {
  /** The functions, methods, arrows and classes of a file of bin/, as `file:line kind`. */
  const functionsIn = (file: string): string[] => {
    const source = ts.createSourceFile(
      file,
      readFileSync(resolve(import.meta.dirname, '../../bin', file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const found: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) || ts.isClassLike(node))
        found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${ts.SyntaxKind[node.kind]}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  };

  // Each function in it would be compiled once more when first called (docs/architecture.md,
  // "Choices"): what is needed only sometimes is bin/support.cjs's.
  it('has no function, method, arrow or class of its own', () => {
    // The walk sees what it should: bin/support.cjs's functions.
    expect(functionsIn('support.cjs').length).toBeGreaterThan(3);
    expect(functionsIn('carbon.cjs')).toEqual([]);
  });
});
