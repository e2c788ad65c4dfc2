import { compileAlertScanner } from '../upstream/alert-scan.js';

/**
 * V8's tiering tuned for this exporter's work, bursts of hot code well under a second long (a list
 * read and folded, in a `once`, a Lambda invocation or a serve cycle); the entry points set it
 * before their first request. Measured in docs/performance.md.
 */
export function tuneCompilerForShortRuns(): void {
  // Loaded when called, not imported: the Lambda sets these at its first invocation, and its import does not load node:v8.
  const { setFlagsFromString } = process.getBuiltinModule('node:v8');
  // undici parses HTTP with llhttp compiled to WebAssembly (no run loads it now: every call goes
  // through Node's http, src/net/transport.ts, and the flag only keeps any other WebAssembly on
  // Liftoff). V8 recompiled its hot functions with TurboFan
  // on background threads when undici read the portal: about 60 ms of CPU per process and 30 MB of
  // peak RSS, for no measurable gain in parsing headers and skipping over body chunks. Liftoff, the baseline
  // compiler, compiles all of llhttp (V8 lists the flag under testing; it only stops the second tier).
  // The alert scanner (src/upstream/alert-scan.ts) is the exception: a small module whose every byte
  // of the open alerts runs through it, a third faster with TurboFan (docs/performance.md, "The
  // alert scanner"). It is compiled first, whole and with TurboFan (no lazy compilation, no tiering),
  // and the two settings go back to V8's defaults before the flag below keeps the rest on Liftoff.
  setFlagsFromString('--no-wasm-lazy-compilation');
  setFlagsFromString('--no-wasm-dynamic-tiering');
  compileAlertScanner();
  setFlagsFromString('--wasm-lazy-compilation');
  setFlagsFromString('--wasm-dynamic-tiering');
  setFlagsFromString('--liftoff-only');
  // With V8's default budget (66 KB of bytecode run), dozens of functions that run only a moment
  // were recompiled by TurboFan, costing more CPU than the faster code saved: eight times the budget
  // leaves TurboFan the code that runs long (the list reader, the folds). V8 12 (Node 22) has no such
  // flag (it tiers by invocation counts, with Maglev between): there V8 would print "unrecognized
  // flag" to stderr, which holds JSON lines only, so the flag is set where it exists.
  if (v8Major(process.versions.v8) < 12) setFlagsFromString('--interrupt-budget=540672');
}

/** The major version of a V8 version string (`11.3.244.8-node.38` -> 11). */
function v8Major(version: string): number {
  return Number.parseInt(version, 10);
}
