// The simulated fleet for bench/fleet.ts, in its own process so the exporter's RSS and CPU are
// measured alone. Started with fork(); talks over IPC: sends the portals' settings when ready,
// answers `check` with what each named portal holds (computed from its data, not by the exporter)
// and which portals went over their budget.
import { parseApiTimestamp } from '../src/upstream/timestamps.js';
import { startFleet } from '../src/simulator/fleet.js';

const n = Number(process.argv[2]);
const fleet = await startFleet({ portals: n, moving: false });
const send = (m: unknown) => new Promise<void>((resolve) => process.send!(m, () => resolve()));

/** Unresolved alerts by severity and devices by 30-day activity, from the portal's own records. */
function expected(name: string, at: number): Record<string, number> {
  const data = fleet.portal(name).data(at);
  const out: Record<string, number> = { red: 0, amber: 0, green: 0, active: 0, inactive: 0 };
  for (const a of data.alerts()) if (!a.resolved) out[a.state.toLowerCase()] = (out[a.state.toLowerCase()] ?? 0) + 1;
  for (const d of data.devices()) {
    if ((parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86_400) out.active!++;
    else out.inactive!++;
  }
  return out;
}

process.on('message', (m: { type: 'check'; names: string[]; at: number } | { type: 'close' }) => {
  void (async () => {
    if (m.type === 'check') {
      const requests = fleet.names.reduce((sum, name) => sum + fleet.requests(name).length, 0);
      await send({ type: 'checked', expected: Object.fromEntries(m.names.map((name) => [name, expected(name, m.at)])), overBudget: fleet.overBudget(), requests });
    } else {
      await fleet.close();
      process.exit(0);
    }
  })();
});
await send({ type: 'ready', portals: fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) })) });
