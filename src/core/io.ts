import type { Clock } from './clock.js';

/** Process-level I/O, injected so the CLI, and the commands it hands it to (backfill), can run inside tests. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  clock?: Clock;
  /** Resolves when the process should stop (SIGTERM/SIGINT); `serve`, `simulate` and `demo` wait on it. */
  stopSignal?: Promise<void>;
  /** Called once a long-running command is up, with its URLs. */
  onReady?: (info: { metricsUrl?: string; portalUrl?: string }) => void;
  /** Whether stderr is a terminal (`backfill` draws a progress bar there, else JSON lines). */
  stderrIsTTY?: boolean;
  /**
   * Called once before a command that reads a portal (`once`, `serve`, `demo`, `backfill`) starts:
   * the process edge tunes V8 there (src/runtime/v8-flags.ts), so the others do not pay for it.
   */
  beforeReading?: () => void;
}
