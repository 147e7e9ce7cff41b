// The in-process purchase loop on its own, in a process of its own (bench/run.mjs, the async
// port's cost under perf; bench/journal.mjs, the journal on and off): `node buy-loop.mjs
// <dist/index.js> <data dir> <ms>`. client.buy({ kg: 1 }) back to back for <ms> after a second's
// warm-up, the journal's last batch written inside the measure; prints {"buys": N, "perSecond": R,
// "cpuUs": C} on stdout, C the CPU time (every thread of the process) a purchase took.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [index, dir, ms] = process.argv.slice(2);
const { openLocal } = await import(pathToFileURL(index).href);
const { client, sandbox } = await openLocal(dir);
await sandbox.topUp('test', 100_000_000_000);
const loop = async (limit) => {
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < limit) {
    for (let i = 0; i < 100; i++) await client.buy({ kg: 1 });
    n += 100;
  }
  await sandbox.journal.flush();
  const cpu = process.cpuUsage(cpu0);
  return { buys: n, perSecond: (n * 1000) / (performance.now() - t0), cpuUs: (cpu.user + cpu.system) / n };
};
await loop(1000);
process.stdout.write(`${JSON.stringify(await loop(Number(ms)))}\n`);
client.close();
