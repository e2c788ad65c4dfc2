// The naive peer exporter: fetch each list whole (limit=0) with undici, read the text,
// JSON.parse it, fold the same counts. Prints JSON: open alerts by severity and device totals.
import { request } from 'undici';

const base = process.env.POSTURE_BASE_URL;
const key = process.env.POSTURE_API_KEY;

async function get(path) {
  const res = await request(base + path, { headers: { 'X-Service-ApiKey': key, accept: 'application/json' } });
  if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
  return JSON.parse(await res.body.text());
}

const open = { red: 0, amber: 0, green: 0, unknown: 0 };
const unacknowledged = { red: 0, amber: 0, green: 0, unknown: 0 };
const byIntegration = new Map();
const alerts = await get('/alerts?filter=allunresolved&limit=0');
for (const a of alerts.data) {
  if (a.resolved) continue;
  const sev = ['red', 'amber', 'green'].includes(a.state.toLowerCase()) ? a.state.toLowerCase() : 'unknown';
  open[sev]++;
  if (!a.acknowledged) unacknowledged[sev]++;
  const k = `${a.product.split(',')[0].trim()}\u0000${sev}\u0000${a.status.toLowerCase()}`;
  byIntegration.set(k, (byIntegration.get(k) ?? 0) + 1);
}
const vitals = await get('/vitals');
const active = (await get('/devices?filter=active&limit=1')).total;
const inactive = (await get('/devices?filter=inactive&limit=1')).total;
process.stdout.write(JSON.stringify({ open, unacknowledged, integrations: byIntegration.size, vitals: vitals.data.length, devices: { active, inactive } }) + '\n');
