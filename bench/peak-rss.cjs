// Preloaded into a measured process: reports at exit its peak resident set size (VmHWM) and the
// CPU time it used (user + system, from its own resource usage).
const { readFileSync } = require('node:fs');
process.on('exit', () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  const u = process.resourceUsage();
  process.stderr.write(`BENCH_PEAK_RSS_KB=${m ? m[1] : 'unknown'}\nBENCH_CPU_US=${u.userCPUTime + u.systemCPUTime}\nBENCH_USER_US=${u.userCPUTime}\nBENCH_SYS_US=${u.systemCPUTime}\n`);
});
