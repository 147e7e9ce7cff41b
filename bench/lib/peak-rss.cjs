// Preloaded with `node -r` into a measured process: on exit, writes the process's peak
// resident set size (kB, the kernel's VmHWM, from getrusage) to BENCH_RSS_FILE.
'use strict';
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    require('node:fs').writeFileSync(file, String(process.resourceUsage().maxRSS));
  });
}
