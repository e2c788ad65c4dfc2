// Preloaded into a measured process: reports at exit its peak resident set size (VmHWM), the
// CPU time it used (user + system, from its own resource usage) and its main thread's own CPU
// time (the kernel's schedstat of that thread, in ns: what a --cpu-prof profile samples).
const { readFileSync } = require('node:fs');
process.on('exit', () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  const u = process.resourceUsage();
  let main = 'unknown';
  try {
    main = String(Math.round(Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000));
  } catch {
    // No schedstat (a kernel without it): the main thread's CPU stays unknown.
  }
  process.stderr.write(`BENCH_PEAK_RSS_KB=${m ? m[1] : 'unknown'}\nBENCH_CPU_US=${u.userCPUTime + u.systemCPUTime}\nBENCH_USER_US=${u.userCPUTime}\nBENCH_SYS_US=${u.systemCPUTime}\nBENCH_MAIN_US=${main}\n`);
});
