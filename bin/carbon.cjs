#!/usr/bin/env node
'use strict';
// Loads dist/cli.cjs with a V8 code cache, so a start-up does not compile the whole CLI again
// (issue 5; `npm run bench` measures it). Node 22.1+ can do this for any module
// (module.enableCompileCache); on Node 20 it is vm.Script's `cachedData`, which works for scripts:
// hence a CommonJS build, run here inside the same wrapper Node's own CommonJS loader uses.
//
// The cache sits beside the code it was made from, in dist/, and is trusted as that code is: one
// who can write it can write cli.cjs. It is keyed by the build (an id the build appends to
// cli.cjs: V8 itself checks only the source's length), where it is installed, the Node version
// and the architecture.
// Missing or rejected, it is written when the process exits, if dist/ is writable; never an error.
const { readFileSync, renameSync, unlinkSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');

const dir = join(__dirname, '..', 'dist');
const filename = join(dir, 'cli.cjs');
// The build makes cli.cjs pure ASCII, so latin1 reads it exactly, as a one-byte string.
const source = readFileSync(filename, 'latin1');
const mark = source.lastIndexOf('//# carbon-build=');
// A cache also holds the path it was made at (stack traces would name it): keyed by the path too.
let where = 0x811c9dc5;
for (let i = 0; i < dir.length; i++) where = Math.imul(where ^ dir.charCodeAt(i), 0x01000193) >>> 0;
const key = `${source.slice(mark + 17, mark + 33)}.${where.toString(16)}.${process.version}-${process.arch}`;
const cacheFile = mark === -1 ? undefined : join(dir, `cli.${key}.v8cache`);

let cachedData;
if (cacheFile !== undefined) {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // Not made yet, or not readable: compiled from source.
  }
}
// One line, as Node's module wrapper: line numbers in stack traces stay those of cli.cjs.
const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename, cachedData });
if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
  // At exit, so the functions this run compiled are in the cache too.
  process.once('exit', () => {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cacheFile);
    } catch {
      try {
        unlinkSync(tmp);
      } catch {
        // Never written (dist/ read-only): nothing to remove.
      }
    }
  });
}
const cliModule = { exports: {}, filename, id: filename, loaded: false };
script.runInThisContext()(cliModule.exports, createRequire(filename), cliModule, filename, dir);
