/** The devices source: the `total` of /devices?filter=active and filter=inactive, one request each. */
import { request, type RunContext } from '../schedule/request.js';
import { PRIORITY } from '../schedule/scheduler.js';
import type { RecordSink } from '../upstream/reader.js';
import { CACHED, type Add, type SourceFamily, type SourceModule } from './source.js';

/** Device totals by activity, read from the `total` of `/devices?filter=active|inactive&limit=1`. */
export interface DevicesTotals {
  readonly active: number;
  readonly inactive: number;
}

/** The families fed by devices, in catalogue order. */
export const DEVICES_FAMILIES = [
  {
    name: 'posture_devices',
    help: 'Devices by activity (total of /devices?filter=active and filter=inactive).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['activity'], origin: 'devices',
    doc: 'activity ∈ active, inactive: `total` of `/devices?filter=<activity>`.',
  },
] as const satisfies readonly SourceFamily<'devices'>[];

/** Only the envelope's `total` counts for device totals: the one record asked for is ignored. */
const ignoreRecords = (): RecordSink<void> => ({ record() {}, finish() {} });

/** Device totals: `total` of `filter=active` and `filter=inactive`, one record each. */
async function runDevices(ctx: RunContext): Promise<DevicesTotals> {
  const totals: Partial<Record<'active' | 'inactive', number>> = {};
  for (const [i, filter] of (['active', 'inactive'] as const).entries()) {
    const res = await request(ctx, () => ({ endpoint: '/devices', query: { filter, limit: 1 } }), ignoreRecords, i === 0 ? PRIORITY.devices : PRIORITY.continuation);
    totals[filter] = res.total;
  }
  return totals as DevicesTotals;
}

/** The device samples: one per activity. */
function devicesSamples(totals: DevicesTotals, add: Add<(typeof DEVICES_FAMILIES)[number]['name']>): void {
  add('posture_devices', { activity: 'active' }, totals.active);
  add('posture_devices', { activity: 'inactive' }, totals.inactive);
}

/** The devices source (no records are read: nothing is capped or invalid). */
export const devices = {
  name: 'devices',
  families: DEVICES_FAMILIES,
  run: (ctx) => runDevices(ctx),
  samples: devicesSamples,
  invalidOf: () => 0,
} as const satisfies SourceModule<'devices', DevicesTotals, typeof DEVICES_FAMILIES>;
