// Bundles the CLI and the library with esbuild. One bundled entry starts faster than a tree of
// ES modules (fewer files to resolve and read); heavy modules used by only some commands stay in
// separate chunks loaded with `await import()`. better-sqlite3 is native and stays external.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';

// --outdir: the benchmark builds into its own snapshot, out of reach of a concurrent `npm run build`.
const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
const outdir = values.outdir;
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli/main.ts', index: 'src/index.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3'],
  // Bundled CommonJS dependencies (cli-table3) call require(); give them one.
  banner: { js: "import { createRequire as __carbonRequire } from 'node:module'; const require = __carbonRequire(import.meta.url);" },
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  minify: false,
  logLevel: 'warning',
  metafile: false,
});
