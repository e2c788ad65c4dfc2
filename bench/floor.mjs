// The floor under `once`: the naive peer's requests (bench/naive-peer.mjs) with undici as the CLI
// loads it, with the V8 flags the CLI sets (src/runtime/v8-flags.ts), each body only received (`receive`: read
// through the dispatcher's handler callbacks as the reader does, each chunk dropped) or received
// whole, decoded and JSON.parse'd (`parse`, the peer's way), nothing folded.
// `node bench/floor.mjs receive|parse`; prints the bytes or the records read.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

// undici as the CLI loads it (its Agent alone, dist/chunks/undici.cjs: `npm run build` first).
const { Agent } = createRequire(import.meta.url)('../dist/chunks/undici.cjs');
const agent = new Agent();

setFlagsFromString('--liftoff-only');
if (Number.parseInt(process.versions.v8, 10) < 12) setFlagsFromString('--interrupt-budget=540672');

const mode = process.argv[2];
if (mode !== 'receive' && mode !== 'parse') throw new Error('usage: floor.mjs receive|parse');
const base = new URL(process.env.POSTURE_BASE_URL);
const key = process.env.POSTURE_API_KEY;
const PATHS = ['/alerts?filter=allunresolved&limit=0', '/vitals', '/devices?filter=active&limit=1', '/devices?filter=inactive&limit=1'];

/** One GET; calls onChunk with each chunk of the body. */
function receiveBody(path, onChunk) {
  return new Promise((resolve, reject) => {
    agent.dispatch(
      { origin: base.origin, path: base.pathname + path, method: 'GET', headers: { 'X-Service-ApiKey': key, accept: 'application/json' } },
      {
        onRequestStart() {},
        onResponseStart(_c, status) {
          if (status !== 200) reject(new Error(`${path}: HTTP ${status}`));
        },
        onResponseData: (_c, chunk) => onChunk(chunk),
        onResponseEnd: () => resolve(),
        onResponseError: (_c, err) => reject(err),
      },
    );
  });
}

/** JSON.parse of a whole body; its record count. */
function parseBody(chunks) {
  return JSON.parse(Buffer.concat(chunks).toString('utf8')).data.length;
}

let out = 0;
for (const path of PATHS) {
  if (mode === 'receive') {
    await receiveBody(path, (chunk) => (out += chunk.length));
  } else {
    const chunks = [];
    await receiveBody(path, (chunk) => chunks.push(chunk));
    out += parseBody(chunks);
  }
}
process.stdout.write(`${out}\n`);
await agent.close();
