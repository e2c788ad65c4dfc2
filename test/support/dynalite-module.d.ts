/** dynalite (a DynamoDB API on LevelDB, in memory) ships no types: what the tests use of it. */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  /** A DynamoDB API server, not yet listening. */
  export default function dynalite(options?: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number; path?: string }): Server;
}
