// Builds dist/ with esbuild. Start-up time is a feature of a CLI that runs in every CI job and
// in shell loops (issue 5; `npm run bench` measures it), so the layout is chosen by measurement:
//
//   dist/cli.js      the whole CLI in ONE file. Every module of ours is bundled; the ones a
//                    command imports with `await import()` are only initialised when it runs.
//                    Loading one file is cheaper than an ES module graph: each extra ES module
//                    costs a resolve, an async read, a compile and a link (~0.5 ms apiece here).
//   dist/vendor/     ora, conf and cli-table3, bundled apart: big, and needed only by a spinner,
//                    `carbon config set` and a table on a terminal, so the rest never parses them.
//   dist/index.js    the library (`import { openLocal } from 'carbon-offsets-cli'`), its own bundle.
//
// Three plugins keep cli.js's start-up to what a command really uses:
//   - deferred builtins: `import { createHash } from 'node:crypto'` in a bundle would load
//     node:crypto when cli.js loads, for every command; here a builtin loads on first use.
//   - better-sqlite3's JavaScript is bundled (its 14 files read and compiled in one go), and its
//     native addon is loaded straight from the installed package's build/Release, instead of the
//     `bindings` package probing up to 13 paths (walking a stack trace to find its root first).
//     If the installed better-sqlite3 is not the version bundled, the installed package is used
//     as it is, so the JavaScript and the addon always match.
//   - nothing else: commander, chalk and our own code are plain bundled modules.
//
// --outdir: the benchmark builds into a snapshot of its own, out of reach of a concurrent build.
import { build } from 'esbuild';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
// Built beside the target and renamed into place at the end: tests and benchmarks running beside
// a build copy dist/ while it is written, and an emptied dist/ used to stay empty for seconds.
const target = values.outdir;
const outdir = `${target}.building-${process.pid}`;
const require = createRequire(import.meta.url);

// Bundled CommonJS (better-sqlite3, commander, cli-table3) calls require(); give it the real one.
const banner = { js: "import { createRequire as __carbonRequire } from 'node:module'; const require = __carbonRequire(import.meta.url);" };
const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner,
  sourcemap: 'linked',
  minify: false,
  logLevel: 'warning',
};

/** Packages that are loaded only with `await import()` and only by a few commands. */
const VENDOR = ['ora', 'conf', 'cli-table3'];

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/**
 * A builtin module as a CommonJS stand-in whose exports load the real module on first use. A
 * builtin whose export is itself a function or class (node:events, node:assert) is loaded when
 * the importing module initialises instead: a getter cannot stand in for a constructor.
 */
const deferredBuiltins = {
  name: 'deferred-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_0-9/]+$/ }, (args) => {
      if (!BUILTINS.has(args.path) || args.namespace === 'deferred-builtin') return undefined;
      return { path: args.path.replace(/^node:/, ''), namespace: 'deferred-builtin' };
    });
    b.onResolve({ filter: /.*/, namespace: 'deferred-builtin' }, (args) => ({ path: args.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'deferred-builtin' }, (args) => {
      const name = `node:${args.path}`;
      const real = require(name);
      if (typeof real === 'function') return { loader: 'js', contents: `module.exports = require(${JSON.stringify(name)});` };
      const keys = Object.keys(real).filter((k) => k !== 'default' && /^[A-Za-z_$][\w$]*$/.test(k));
      return {
        loader: 'js',
        contents: [
          `let real;`,
          `const load = () => (real ??= require(${JSON.stringify(name)}));`,
          `for (const key of ${JSON.stringify(keys)}) Object.defineProperty(module.exports, key, { enumerable: true, get: () => load()[key] });`,
        ].join('\n'),
      };
    });
  },
};

const SQLITE_VERSION = JSON.parse(readFileSync(require.resolve('better-sqlite3/package.json'), 'utf8')).version;

/** better-sqlite3 bundled, its addon found directly; the installed package as-is on a version mismatch. */
const betterSqlite = {
  name: 'better-sqlite3',
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      args.namespace === 'better-sqlite3' ? { path: 'better-sqlite3', external: true } : { path: 'entry', namespace: 'better-sqlite3' },
    );
    // Read when cli.js runs, not when it is built: the version that is installed then.
    b.onResolve({ filter: /^better-sqlite3\/package\.json$/ }, (args) => ({ path: args.path, external: true }));
    b.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'better-sqlite3' }));
    b.onLoad({ filter: /^entry$/, namespace: 'better-sqlite3' }, () => ({
      loader: 'js',
      resolveDir: process.cwd(),
      contents: `
        const installed = require('better-sqlite3/package.json').version;
        module.exports = installed === ${JSON.stringify(SQLITE_VERSION)}
          ? require('./node_modules/better-sqlite3/lib/index.js')
          : require('better-sqlite3');`,
    }));
    b.onLoad({ filter: /^bindings$/, namespace: 'better-sqlite3' }, () => ({
      loader: 'js',
      contents: `
        const { dirname, join } = require('node:path');
        module.exports = function bindings(name) {
          const root = dirname(require.resolve('better-sqlite3/package.json'));
          try {
            return require(join(root, 'build', 'Release', name));
          } catch (err) {
            if (err.code !== 'MODULE_NOT_FOUND') throw err;
          }
          // Built somewhere else (a debug build, another layout): the package's own search.
          return require(require.resolve('bindings', { paths: [root] }))({ bindings: name, module_root: root });
        };`,
    }));
  },
};

/** `import('ora')` in cli.js loads dist/vendor/ora.js. */
const vendored = {
  name: 'vendored',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${VENDOR.join('|')})$`) }, (args) => ({ path: `./vendor/${args.path}.js`, external: true }));
  },
};

rmSync(outdir, { recursive: true, force: true });
try {
  await Promise.all([
    build({
      ...common,
      entryPoints: { cli: 'src/cli/main.ts' },
      outdir,
      plugins: [vendored, betterSqlite, deferredBuiltins],
    }),
    build({
      ...common,
      entryPoints: Object.fromEntries(VENDOR.map((name) => [name, name])),
      outdir: `${outdir}/vendor`,
      splitting: true,
      chunkNames: 'chunk-[hash]',
    }),
    build({
      ...common,
      entryPoints: { index: 'src/index.ts' },
      outdir,
      external: ['better-sqlite3'],
    }),
  ]);
} catch (err) {
  rmSync(outdir, { recursive: true, force: true });
  throw err;
}
rmSync(target, { recursive: true, force: true });
renameSync(outdir, target);
