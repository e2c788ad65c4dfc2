// Family names written out by hand from the README's metrics table, for tests that must check a
// family even when it has no series (so the list cannot come from what the code emits).

/** The Vitals source's families (spec 2.7): one per integration, or per integration and stage. */
export const VITALS_FAMILIES = [
  'posture_vitals_integration_info',
  'posture_vitals_eligible_devices',
  'posture_vitals_compliant_devices',
  'posture_vitals_health_ratio',
  'posture_vitals_funnel_consistent',
  'posture_vitals_active_agents',
] as const;
