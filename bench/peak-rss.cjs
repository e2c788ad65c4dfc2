// Preloaded into a measured process: reports its peak resident set size (VmHWM) at exit.
const { readFileSync } = require('node:fs');
process.on('exit', () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  process.stderr.write(`BENCH_PEAK_RSS_KB=${m ? m[1] : 'unknown'}\n`);
});
