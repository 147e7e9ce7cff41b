'use strict';
// What bin/carbon.cjs needs only sometimes, kept out of the file every start compiles: answering
// `--version` and `--help` without the CLI, a checkout's first build, and writing a code cache that
// was missing or rejected.
const { fstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Prints the version (package.json's) or the help the build saved from the CLI (dist/help.txt) when
 * that is all that was asked; false otherwise. On a terminal, --help goes through the CLI, which fits
 * the text to the terminal's width. Should stdout fail to take it, the CLI runs after all, to report
 * it as it reports any command's.
 */
function answer(arg, dir) {
  let text;
  try {
    if (arg === '-v' || arg === '--version') text = `${JSON.parse(readFileSync(join(dir, '..', 'package.json'), 'utf8')).version}\n`;
    else if (!terminal(1)) text = readFileSync(join(dir, 'help.txt'), 'utf8');
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
 * would load node:net, which costs more than the rest of this answer.)
 */
function terminal(fd) {
  const st = fstatSync(fd);
  return st.isCharacterDevice() && st.rdev !== statSync('/dev/null').rdev;
}

/** Builds dist/ in a checkout, where a bundle is missing; says so and exits where the package has no build script. */
function build(dir) {
  const script = join(dir, '..', 'scripts', 'build.mjs');
  try {
    statSync(script);
  } catch {
    process.stderr.write(`carbon: ${dir} is incomplete; install the package again.\n`);
    process.exit(1);
  }
  process.stderr.write('carbon: building dist/ (the first run in this checkout)…\n');
  const built = require('node:child_process').spawnSync(process.execPath, [script], { cwd: join(dir, '..'), stdio: ['ignore', 2, 2] });
  if (built.status !== 0) process.exit(1);
}

/**
 * Writes the script's code cache when the process exits, so the functions this run compiled are in
 * it too: to dist/, or where dist/ cannot be written, to the user's cache directory (`userCache`,
 * made owner-only). The first place that takes it keeps it.
 */
function saveAtExit(script, { dir, userCache, name, build, cacheName, where }) {
  process.once('exit', () => {
    const data = script.createCachedData();
    for (const place of userCache === undefined ? [dir] : [dir, userCache]) {
      const tmp = join(place, `${cacheName}.${process.pid}.tmp`);
      try {
        if (place !== dir) mkdirSync(place, { recursive: true, mode: 0o700 });
        writeFileSync(tmp, data, { mode: 0o600 });
        renameSync(tmp, join(place, cacheName));
        // dist/ is made whole by each build: a process of the build before, ending as the next
        // is put in place, would take the new caches for stale ones there.
        if (place !== dir) removeStale(place, name, build, where);
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

/**
 * Removes from the user's cache directory `place` the caches of dist/<name>.cjs that an earlier
 * build installed at `where` left (the same place, another build): never read again, they would
 * pile up with each upgrade of an install the user cannot write. Another install's, another
 * bundle's and another Node's are left alone.
 */
function removeStale(place, name, build, where) {
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

module.exports = { answer, build, saveAtExit };
