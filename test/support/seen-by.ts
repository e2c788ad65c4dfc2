import type { Simulator } from '../../src/simulator/index.js';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';

/**
 * What a key sees of a simulated portal at `at`, counted naively from the portal's whole data: all
 * of it, or with `teamTags` a team's devices, their alerts and every alert not about a device
 * (spec 2.10, 5.6). Open alerts by severity; devices active when online in the last 30 days.
 */
export function seenBy(sim: Pick<Simulator, 'data'>, at: number, teamTags?: readonly string[]): { open: Record<string, number>; active: number; inactive: number } {
  const devices = [...sim.data(at).devices()].filter((d) => !teamTags || d.tags.some((t) => teamTags.includes(t)));
  const hosts = new Set(devices.map((d) => d.hostName));
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  for (const a of sim.data(at).alerts()) {
    if (a.resolved || (teamTags && a.itemEntityType === 'device' && !hosts.has(a.item))) continue;
    open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
  }
  const active = devices.filter((d) => (parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86400).length;
  return { open, active, inactive: devices.length - active };
}
