// What the side-by-side benches (compare-serve.mjs, compare-paced.mjs) share: the builds named on
// the command line, and a server started with its stderr to a file, read up to its ready line.
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';

/** The builds named on the command line; with none, `usage` on stderr and exit 2. */
export function buildsFromArgv(usage) {
  const builds = process.argv.slice(2);
  if (builds.length === 0) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return builds;
}

/** `<bin/carbon.cjs>[@node=PATH][@NAME=value]...`: the file, the Node that runs it (this one unless given), and its own variables. */
export function parseBuild(build) {
  const [file, ...vars] = build.split('@');
  const own = Object.fromEntries(vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
  const node = own.node ?? process.execPath;
  delete own.node;
  return { file, node, vars: own };
}

/**
 * Starts `node args` with its stderr to a file in `dir`, and adds it to `children` (for the caller
 * to kill); resolves with `{ name, child, ready }`, `ready` its first line on stdout, parsed.
 */
export function startListening({ name, node = process.execPath, args, env, dir, children }) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { env, stdio: ['ignore', 'pipe', openSync(join(dir, `${children.length}.log`), 'w')] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ name, child, ready: JSON.parse(out.slice(0, nl)) });
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
}
