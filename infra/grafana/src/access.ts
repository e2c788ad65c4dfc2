/**
 * The overview's Access row: who can change the portal (the access settings, read hourly) and which
 * directory accounts have gone quiet (the directory, read daily). Each family is read within a bridge
 * of its read's interval (pushed, samples come once a read), as the rules in the
 * posture-exporter-access group of infra/prometheus/rules/posture.rules.yml read them.
 */
import type * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { DAILY_BRIDGE, PASS_BRIDGE, PORTAL, barGaugePanel, panelSpec, promQuery, quantityOverTime, stackedCounts, statPanel, thresholds, timeSeriesPanel, withAlertLine } from './common.js';

/** The access settings' bridge: an hourly read and a missed one (as the pass's). */
const ACCESS_BRIDGE = PASS_BRIDGE;
/** The directory's bridge: a daily read and an hour. */
const DIRECTORY_BRIDGE = DAILY_BRIDGE;
// The share of directory users inactive for 45 days that fires PostureDirectoryInactiveUsers.
const INACTIVE_SHARE = 0.1;

/** Said of every panel of the access settings. */
const HOURLY = ' Read from the portal\'s settings every POSTURE_ACCESS_INTERVAL_SECONDS (hourly by default); between reads each panel shows the last (for up to 2 h, so pushed samples draw a line).';
/** Said of every panel of the directory. */
const DAILY = ' Read from /users every POSTURE_DIRECTORY_INTERVAL_SECONDS (daily by default); between reads each panel shows the last (for up to 25 h).';

/** A family of the access settings per portal and its labels, each portal's exporters deduplicated, within the bridge. */
const access = (metric: string, by: string, matchers = ''): string => `max by (portal, ${by}) (last_over_time(${metric}{${PORTAL}${matchers}}[${ACCESS_BRIDGE}]))`;
/** A family of the directory per portal and its labels, within the bridge. */
const directory = (metric: string, by: string, matchers = ''): string => `max by (${by}) (last_over_time(${metric}{${PORTAL}${matchers}}[${DIRECTORY_BRIDGE}]))`;

/** Enabled accounts per portal and role, with the role's name. */
const ENABLED_BY_ROLE = `sum by (portal, role) (${access('posture_portal_users', 'role, enabled, mfa, sso', ',enabled="true"')}) * on (portal, role) group_left (name) ${access('posture_portal_role_info', 'role, name')}`;

function accountsByRole(): timeseries.PanelBuilder {
  return stackedCounts(panelSpec('Enabled portal accounts by role', 'Enabled accounts of the portal itself per role (its name from the roles list), stacked.' + HOURLY, { h: 8, w: 12 }, promQuery('A', ENABLED_BY_ROLE, '{{portal}} · {{name}}')));
}

function privilegedWithoutMfa(): timeseries.PanelBuilder {
  const privileged = `portal_role:posture_portal_role_permission:privileged_last2h{${PORTAL}}`;
  // Each privileged role, at 0 while all its enabled accounts have MFA or SSO (not "No data").
  const expr = `portal_role:posture_portal_users:enabled_without_mfa_last2h{${PORTAL}} * on (portal, role) group_left () ${privileged} or 0 * ${privileged}`;
  const panel = timeSeriesPanel(
    panelSpec(
      'Privileged accounts without MFA or SSO',
      'Enabled accounts with neither MFA nor SSO whose role holds a privileged permission at its managing level (the list of the rules\' recording portal_role:posture_portal_role_permission:privileged_last2h), per privileged role (0 when every such account has MFA or SSO). Above 0 for 15 minutes, PosturePortalPrivilegedWithoutMfa fires.' + HOURLY,
      { h: 8, w: 12 },
      promQuery('A', expr, '{{portal}} · {{role}}'),
    ),
  );
  return withAlertLine(panel.unit('short').min(0), thresholds('green', [1, 'red']));
}

function superAdmins(): stat.PanelBuilder {
  return statPanel(panelSpec('Enabled superAdmins', 'Enabled accounts of the built-in superAdmin role now; a change fires PosturePortalSuperAdminsChanged for 3 hours.' + HOURLY, { h: 8, w: 6 }, promQuery('A', `portal:posture_portal_users:superadmins_enabled_last2h{${PORTAL}}`, '{{portal}}', true)), { unit: 'short' });
}

function managingPermissions(): bargauge.PanelBuilder {
  return barGaugePanel(panelSpec('Managing permissions per role', 'How many permissions each role holds at the Manage level (posture_portal_role_permission).' + HOURLY, { h: 8, w: 9 }, promQuery('A', `count by (portal, role) (${access('posture_portal_role_permission', 'role, permission, level', ',level="Manage"')})`, '{{portal}} · {{role}}', true)));
}

function teams(): bargauge.PanelBuilder {
  return barGaugePanel(panelSpec('Team members', 'Members of each team of the portal, the largest first; beyond POSTURE_MAX_SERIES_PER_FAMILY the smallest teams are one bar, __other__.' + HOURLY, { h: 8, w: 9 }, promQuery('A', `sort_desc(${access('posture_portal_team_members', 'team')})`, '{{portal}} · {{team}}', true)));
}

function inactiveShare(): timeseries.PanelBuilder {
  const panel = timeSeriesPanel(
    panelSpec(
      'Directory users inactive',
      'The share of directory users whose last activity is unset or older than each threshold of days (POSTURE_DIRECTORY_INACTIVE_DAYS). Above the dashed line at 45 days for a day, PostureDirectoryInactiveUsers fires.' + DAILY,
      { h: 8, w: 12 },
      promQuery('A', `portal_days:posture_directory_users_inactive:ratio{${PORTAL}}`, '{{portal}} · {{days}} days'),
      promQuery('B', directory('posture_directory_users_inactive', 'portal, days'), '{{portal}} · {{days}} days (users)'),
    ),
  );
  return withAlertLine(panel.unit('percentunit').min(0), thresholds('green', [INACTIVE_SHARE, 'red'])).overrideByRegexp('.* \\(users\\)$', [{ id: 'unit', value: 'short' }, { id: 'custom.axisPlacement', value: 'right' }]);
}

function directoryUsers(): timeseries.PanelBuilder {
  return quantityOverTime(
    panelSpec(
      'Directory users and failed logins',
      'Directory users, and those whose last failed login lies in the last day or week.' + DAILY,
      { h: 8, w: 12 },
      promQuery('A', directory('posture_directory_users', 'portal'), '{{portal}} · users'),
      promQuery('B', directory('posture_directory_users_failed_login', 'portal, window'), '{{portal}} · failed login in {{window}}'),
    ),
    'short',
  );
}

/** The Access row: its title, then its panels. */
export function accessRow(): [string, ...Array<timeseries.PanelBuilder | stat.PanelBuilder | bargauge.PanelBuilder>] {
  return ['Access', accountsByRole(), privilegedWithoutMfa(), superAdmins(), managingPermissions(), teams(), inactiveShare(), directoryUsers()];
}
