// Preloaded with `node -r` into a measured process: on exit, writes the process's peak resident
// set size in kB to BENCH_RSS_FILE. VmHWM from /proc/self/status, not getrusage's maxRSS: Linux
// carries ru_maxrss across execve, so a child forked from a big parent (the bench itself, after
// seeding a million offsets) would report the parent's size.
'use strict';
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const fs = require('node:fs');
    let kb = 0;
    try {
      kb = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
    } catch {
      kb = process.resourceUsage().maxRSS;
    }
    fs.writeFileSync(file, String(kb));
  });
}
