import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { exporterDashboard } from './exporter.js';
import { objectivesDashboard } from './objectives.js';
import { overviewDashboard } from './overview.js';

export { EXPORTER_UID } from './exporter.js';
export { OBJECTIVES_UID } from './objectives.js';
export { OVERVIEW_UID } from './overview.js';

/** A dashboard and the file (under infra/grafana/dashboards/) it is generated into. */
export interface DashboardSpec {
  readonly file: string;
  readonly build: () => dashboard.Dashboard;
}

/** Every dashboard this repository ships. */
export const DASHBOARDS: readonly DashboardSpec[] = [
  { file: 'posture-overview.json', build: overviewDashboard },
  { file: 'posture-exporter-health.json', build: exporterDashboard },
  { file: 'posture-objectives.json', build: objectivesDashboard },
];

/** The committed form of a dashboard: 2-space JSON with a final newline, nothing time-dependent. */
export function renderDashboard(d: dashboard.Dashboard): string {
  return JSON.stringify(d, null, 2) + '\n';
}
