// The floor under `once`: the naive peer's requests (bench/naive-peer.mjs) through Node's http as
// the CLI's transport sends them (src/net/transport.ts: a keep-alive Agent, each chunk from the
// response's 'data' events), with the V8 flags the CLI sets (src/runtime/v8-flags.ts), each body only
// received (`receive`: each chunk dropped) or received whole, decoded and JSON.parse'd (`parse`, the
// peer's way), nothing folded.
// `node bench/floor.mjs receive|parse`; prints the bytes or the records read.
import { Agent, get } from 'node:http';
import { setFlagsFromString } from 'node:v8';

const agent = new Agent({ keepAlive: true, timeout: 4_000 });

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
    get(new URL(base.pathname + path, base.origin), { agent, headers: { 'X-Service-ApiKey': key, accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${path}: HTTP ${res.statusCode}`));
      res.on('data', onChunk);
      res.on('end', resolve);
      res.on('error', reject);
    }).on('error', reject);
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
agent.destroy();
