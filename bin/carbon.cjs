#!/usr/bin/env node
'use strict';
// Loads dist/cli.cjs (or, for `balance`, `impact`, `list`, `show`, `buy` and `quote`, the smaller dist/quick.cjs) with a V8 code
// cache, so a start-up does not compile the CLI again (issue 5; `npm run bench` measures it). It is
// vm.Script's `cachedData`: measured against module.enableCompileCache() (BENCHMARKS.md), it
// starts faster, as it holds the functions the run compiled too. Hence CommonJS bundles, each built
// inside the wrapper Node's own CommonJS loader uses (scripts/build.mjs).
//
// A cache sits beside the code it was made from, in dist/, and is trusted as that code is: one
// who can write it can write the bundle. Where dist/ cannot be written (a global install owned by
// root, a read-only image), it goes to the user's own cache directory instead, which only that
// user can write. It is keyed by the bundle and its build (an id the build appends to it: V8
// itself checks only the source's length), where it is installed, the Node version and the
// architecture, and for quick.cjs by the command too: each of its six commands has a cache of the
// functions it runs (`list --json` 0.7-0.9 ms and `buy` 1.5 ms sooner than from balance's, BENCHMARKS.md). Missing or
// rejected, it is written when the process exits; never an error.
//
// `carbon --version` and `carbon --help` into a pipe do not load the CLI at all: the version is
// package.json's, and the help is the text the build saved from the CLI itself (dist/help.txt).
// Should stdout fail to take it, the CLI runs after all, to report it as it reports any command's.
// On a terminal, --help goes through the CLI, which fits the text to the terminal's width.
// Node.js 22.13 or later (carbon's SQLite is the runtime's node:sqlite). An older Node is refused
// here, before anything is read or written: one line, exit 11 (README, "Exit codes").
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `carbon: needs Node.js 22.13 or later, and this is Node.js ${process.versions.node}; install Node 24 or 26 (LTS) from nodejs.org or with your version manager (nvm install 24), then run carbon again.\n`,
  );
  process.exit(11);
}

const { fstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');

const dir = join(__dirname, '..', 'dist');
const args = process.argv.slice(2);
if (args.length === 1 && fastPath(args[0])) process.exit(0);

/** Prints the version or the saved help, when that is all that was asked; false otherwise. */
function fastPath(arg) {
  let text;
  try {
    if (arg === '-v' || arg === '--version') text = `${JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version}\n`;
    else if ((arg === '-h' || arg === '--help') && !terminal(1)) text = readFileSync(join(dir, 'help.txt'), 'utf8');
    else return false;
  } catch {
    return false;
  }
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length; ) {
    try {
      done += writeSync(1, bytes, done, bytes.length - done);
    } catch (err) {
      // A full non-blocking pipe (EAGAIN): the reader has not caught up yet; written when it has,
      // as a blocking write would wait for it.
      if (err.code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      // stdout could not take it (`carbon --version > /dev/full`, a full disk under `> help.txt`):
      // the CLI runs, writes the text again, fails as this did and says so as it does for every
      // command (exit 1, output_error): the output is incomplete either way. The reader going
      // away (EPIPE) is a quiet end, as in the CLI.
      else if (err.code === 'EPIPE') break;
      else return false;
    }
  }
  return true;
}

/**
 * Whether `fd` may be a terminal: a character device other than /dev/null. (node:tty's isatty
 * would load node:net, which costs more than the rest of this fast path.)
 */
function terminal(fd) {
  const st = fstatSync(fd);
  return st.isCharacterDevice() && st.rdev !== statSync('/dev/null').rdev;
}

const { Script } = require('node:vm');

/**
 * The `require` a bundle is given: Node's own, but each of Node's modules is looked up once. A
 * bundle asks for node:fs or node:path once a module of its own (20 times in a `balance`), and
 * each such call goes through Node's whole loader (~8 µs, and its functions compiled again by the
 * baseline compiler once they are hot): 0.6 % of a `balance` in instructions (BENCHMARKS.md).
 */
const builtins = new Map();
function bundleRequire(id) {
  let loaded = builtins.get(id);
  if (loaded === undefined) {
    loaded = require(id);
    if (id.startsWith('node:')) builtins.set(id, loaded);
  }
  return loaded;
}
Object.assign(bundleRequire, require);

// A published package comes built. A checkout is built by its first run (or `npm run build`), so
// the package needs no install script of its own.
try {
  for (const bundle of ['cli.cjs', 'quick.cjs']) statSync(join(dir, bundle));
} catch {
  const build = join(__dirname, '..', 'scripts', 'build.mjs');
  try {
    statSync(build);
  } catch {
    process.stderr.write(`carbon: ${dir} is incomplete; install the package again.\n`);
    process.exit(1);
  }
  process.stderr.write('carbon: building dist/ (the first run in this checkout)…\n');
  const built = require('node:child_process').spawnSync(process.execPath, [build], { cwd: join(__dirname, '..'), stdio: ['ignore', 2, 2] });
  if (built.status !== 0) process.exit(1);
}
// A cache also holds the path it was made at (stack traces would name it): keyed by the path too.
let hash = 0x811c9dc5;
for (let i = 0; i < dir.length; i++) hash = Math.imul(hash ^ dir.charCodeAt(i), 0x01000193) >>> 0;
const where = hash.toString(16);
/** dist/, then the user's cache directory (XDG_CACHE_HOME, ~/Library/Caches, %LOCALAPPDATA%). */
const cacheDirs = [dir, userCache()].filter((d) => d !== undefined);

function userCache() {
  const home = process.env.HOME || process.env.USERPROFILE;
  if (process.env.XDG_CACHE_HOME) return join(process.env.XDG_CACHE_HOME, 'carbon');
  if (process.platform === 'win32' && process.env.LOCALAPPDATA) return join(process.env.LOCALAPPDATA, 'carbon', 'Cache');
  if (!home) return undefined;
  return process.platform === 'darwin' ? join(home, 'Library', 'Caches', 'carbon') : join(home, '.cache', 'carbon');
}

// `carbon balance`, `carbon impact`, `carbon list`, `carbon show <id>`, `carbon buy` and `carbon quote`
// with only the everyday flags run from dist/quick.cjs, two fifths of the CLI (src/cli/quick.ts); it answers false,
// having done nothing, to anything else. With a remote API or PostgreSQL named in the environment
// (CI's usual way), it would only hand over; so would help, `buy --wait` and `show --wait`, and
// `buy --from-csv` and `list --all`, which stream in bounded memory: each of these goes to cli.cjs
// without loading both bundles. (Given as a flag's value instead, each starts with `-`, which
// quick.ts hands over too.)
const QUICK = new Set(['balance', 'impact', 'show', 'quote', 'buy', 'list']);
const CLI_FLAGS = new Set(['--help', '-h', '--wait', '--from-csv', '--all']);
const env = process.env;
const quick =
  QUICK.has(args[0]) &&
  !args.some((a) => CLI_FLAGS.has(a) || a.startsWith('--from-csv=')) &&
  !(env.CARBON_BASE_URL && !args.includes('--local')) &&
  !env.CARBON_DATABASE_URL;
if (!quick || !load('quick', args[0]).start(args)) load('cli');

/**
 * Removes from the user's cache directory `place` the caches of dist/<name>.cjs that an earlier
 * build installed here left (the same place, another build): never read again, they would pile up
 * with each upgrade of an install the user cannot write. Another install's, another bundle's and
 * another Node's are left alone.
 */
function removeStale(place, name, build) {
  let files;
  try {
    files = readdirSync(place);
  } catch {
    return;
  }
  for (const file of files) {
    const [key, id, at] = file.split('.');
    if (!file.endsWith('.v8cache') || (key !== name && !key.startsWith(`${name}-`)) || at !== where || id === build) continue;
    try {
      unlinkSync(join(place, file));
    } catch {
      // Another run removed it first.
    }
  }
}

/** Runs dist/<name>.cjs, as Node's CommonJS loader would, with its V8 code cache (the command's, when one is named); its exports. */
function load(name, command) {
  const filename = join(dir, `${name}.cjs`);
  // The build makes the bundles pure ASCII, so latin1 reads them exactly, as one-byte strings.
  const source = readFileSync(filename, 'latin1');
  const mark = source.lastIndexOf('//# carbon-build=');
  const build = source.slice(mark + 17, mark + 33);
  const cacheName = `${command === undefined ? name : `${name}-${command}`}.${build}.${where}.${process.version}-${process.arch}.v8cache`;
  const places = mark === -1 ? [] : cacheDirs;
  let cachedData;
  for (const place of places) {
    try {
      cachedData = readFileSync(join(place, cacheName));
      break;
    } catch {
      // Not made yet, or not readable there.
    }
  }
  // The bundle is Node's module wrapper around the code (scripts/build.mjs): compiled as it is read.
  const script = new Script(source, { filename, cachedData });
  if (places.length > 0 && (cachedData === undefined || script.cachedDataRejected)) {
    // At exit, so the functions this run compiled are in the cache too. The first place that
    // takes it keeps it.
    process.once('exit', () => {
      const data = script.createCachedData();
      for (const place of places) {
        const tmp = join(place, `${cacheName}.${process.pid}.tmp`);
        try {
          if (place !== dir) mkdirSync(place, { recursive: true, mode: 0o700 });
          writeFileSync(tmp, data, { mode: 0o600 });
          renameSync(tmp, join(place, cacheName));
          // dist/ is made whole by each build: a process of the build before, ending as the next
          // is put in place, would take the new caches for stale ones there.
          if (place !== dir) removeStale(place, name, build);
          return;
        } catch {
          try {
            unlinkSync(tmp);
          } catch {
            // Never written (read-only there): nothing to remove.
          }
        }
      }
    });
  }
  const bundle = { exports: {}, filename, id: filename, loaded: false };
  script.runInThisContext()(bundle.exports, bundleRequire, bundle, filename, dir);
  return bundle.exports;
}
