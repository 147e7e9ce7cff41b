#!/usr/bin/env node
'use strict';
// Loads dist/cli.cjs (or, for `balance`, `impact`, `list`, `show`, `buy` and `quote`, the smaller
// dist/quick.cjs) with a V8 code cache, so a start-up does not compile the CLI again (issue 5; `npm
// run bench` measures it). It is vm.Script's `cachedData`: measured against
// module.enableCompileCache() (BENCHMARKS.md), it starts faster, as it holds the functions the run
// compiled too. Hence CommonJS bundles, each built inside the wrapper Node's own CommonJS loader
// uses (scripts/build.mjs).
//
// This file is the one part of carbon compiled at every start without a cache, so it is only the
// path every command takes, written straight through: each function here would be compiled once
// more when first called. What is needed only sometimes is in ./support.cjs: `--version` and
// `--help` answered without the CLI, a checkout's first build, and writing a code cache that was
// missing or rejected (0.3 ms of `balance --json`, BENCHMARKS.md).
//
// A cache sits beside the code it was made from, in dist/, and is trusted as that code is: one who
// can write it can write the bundle. Where dist/ cannot be written (a global install owned by root,
// a read-only image), it goes to the user's own cache directory instead, which only that user can
// write. It is keyed by the bundle and its build (an id the build appends to it: V8 itself checks
// only the source's length), where it is installed, the Node version and the architecture, and for
// quick.cjs by the command too: each of its six commands has a cache of the functions it runs.

// Node.js 22.13 or later (carbon's SQLite is the runtime's node:sqlite). An older Node is refused
// here, before anything is read or written: one line, exit 11 (README, "Exit codes").
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // In a checkout, `npm ci` put a supported Node in node_modules (the `node` devDependency), which `npx carbon` runs on.
  let checkout = '';
  try {
    const { version } = JSON.parse(require('node:fs').readFileSync(`${__dirname}/../node_modules/node/package.json`, 'utf8'));
    checkout = ` In this checkout, \`npx carbon\` runs it on the Node ${version} that npm ci installed; or`;
  } catch {
    // A package installed on its own: no such Node beside it.
  }
  process.stderr.write(
    `carbon: needs Node.js 22.13 or later, and this is Node.js ${process.versions.node}.${checkout}${checkout ? ' i' : ' I'}nstall Node 24 or 26 (LTS) from nodejs.org or with your version manager (nvm install 24), then run carbon again.\n`,
  );
  process.exit(11);
}

// Node's own modules without its module loader's lookup.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');
const dir = join(__dirname, '..', 'dist');
const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
// `carbon --version`, and `carbon --help` into a pipe, do not load the CLI at all (./support.cjs).
if ((only === '-v' || only === '--version' || only === '-h' || only === '--help') && require('./support.cjs').answer(only, dir))
  process.exit(0);

const { Script } = process.getBuiltinModule('node:vm');

// A cache also holds the path it was made at (stack traces would name it): keyed by the path too.
let hash = 0x811c9dc5;
for (let i = 0; i < dir.length; i++) hash = Math.imul(hash ^ dir.charCodeAt(i), 0x01000193) >>> 0;
const where = hash.toString(16);

// `carbon balance`, `impact`, `list`, `show <id>`, `buy` and `quote` with only the everyday flags
// run from dist/quick.cjs, two fifths of the CLI (src/cli/quick.ts); it answers false, having done
// nothing, to anything else, and cli.cjs runs. With a remote API or PostgreSQL named in the
// environment (CI's usual way), it would only hand over; so would help, `buy --wait` and `show
// --wait`, and `buy --from-csv` and `list --all`, which stream in bounded memory: each of these goes
// to cli.cjs without loading both bundles. (Given as a flag's value instead, each starts with `-`,
// which quick.ts hands over too.)
const command = args[0];
const env = process.env;
let quick =
  (command === 'balance' || command === 'impact' || command === 'show' || command === 'quote' || command === 'buy' || command === 'list') &&
  !(env.CARBON_BASE_URL && !args.includes('--local')) &&
  !env.CARBON_DATABASE_URL;
for (let i = 1; quick && i < args.length; i++) {
  const arg = args[i];
  quick = !(
    arg === '--help' ||
    arg === '-h' ||
    arg === '--wait' ||
    arg === '--all' ||
    arg === '--from-csv' ||
    arg.startsWith('--from-csv=')
  );
}

// The build makes the bundles pure ASCII, so they are read as one-byte strings: as UTF-8, which
// Node 24 and 26 decode in one call into the string, and as latin1 (into a buffer, then copied)
// on Node 22, whose UTF-8 path took twice as long (quick.cjs, medians of 21 starts: 0.41–0.47 ms
// as UTF-8 and 0.43–0.51 as latin1 on 24; 0.77–0.82 against 0.51–0.53 on 22). A checkout is
// built by its first run (or `npm run build`), so the package needs no install script.
const encoding = major === 22 ? 'latin1' : 'utf8';
for (let name = quick ? 'quick' : 'cli'; ; name = 'cli') {
  const filename = join(dir, `${name}.cjs`);
  let source;
  try {
    source = readFileSync(filename, encoding);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    require('./support.cjs').build(dir);
    source = readFileSync(filename, encoding);
  }
  const mark = source.lastIndexOf('//# carbon-build=');
  const build = source.slice(mark + 17, mark + 33);
  const cacheName = `${name === 'quick' ? `quick-${command}` : name}.${build}.${where}.${process.version}-${process.arch}.v8cache`;
  // dist/, then the user's cache directory (XDG_CACHE_HOME, ~/.cache, ~/Library/Caches, %LOCALAPPDATA%).
  let cachedData;
  let userCache;
  if (mark !== -1) {
    try {
      cachedData = readFileSync(join(dir, cacheName));
    } catch {
      const home = env.HOME || env.USERPROFILE;
      if (env.XDG_CACHE_HOME) userCache = join(env.XDG_CACHE_HOME, 'carbon');
      else if (process.platform === 'win32' && env.LOCALAPPDATA) userCache = join(env.LOCALAPPDATA, 'carbon', 'Cache');
      else if (home) userCache = process.platform === 'darwin' ? join(home, 'Library', 'Caches', 'carbon') : join(home, '.cache', 'carbon');
      try {
        if (userCache !== undefined) cachedData = readFileSync(join(userCache, cacheName));
      } catch {
        // Not made yet, or not readable there.
      }
    }
  }
  // The bundle is Node's module wrapper around the code (scripts/build.mjs): compiled as it is read.
  const script = new Script(source, { filename, cachedData });
  // Missing or rejected, the cache is written at exit, with the functions this run compiled too.
  if (mark !== -1 && (cachedData === undefined || script.cachedDataRejected))
    require('./support.cjs').saveAtExit(script, { dir, userCache, name, build, cacheName, where });
  const bundle = { exports: {}, filename, id: filename, loaded: false };
  script.runInThisContext()(bundle.exports, require, bundle, filename, dir);
  if (name === 'cli' || bundle.exports.start(args)) break;
}
