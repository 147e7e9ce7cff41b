// The in-process purchase loop on its own, for a profiler to watch (bench/run.mjs, the async
// port's cost): `node buy-loop.mjs <dist/index.js> <data dir> <ms>`. client.buy({ kg: 1 }) back to
// back for <ms> after a second's warm-up; prints {"buys": N, "perSecond": R} on stdout.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [index, dir, ms] = process.argv.slice(2);
const { openLocal } = await import(pathToFileURL(index).href);
const { client, sandbox } = await openLocal(dir);
await sandbox.topUp('test', 100_000_000_000);
const loop = async (limit) => {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < limit) {
    for (let i = 0; i < 100; i++) await client.buy({ kg: 1 });
    n += 100;
  }
  return { buys: n, perSecond: (n * 1000) / (performance.now() - t0) };
};
await loop(1000);
process.stdout.write(`${JSON.stringify(await loop(Number(ms)))}\n`);
client.close();
