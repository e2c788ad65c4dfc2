/** Static vocabularies the generator draws from (names, places, integrations, alert texts). */

/** What an integration does; decides its Vitals mode, alert categories and inventory type. */
export type IntegrationKind = 'edr' | 'mdm' | 'idp' | 'vuln' | 'patch';

export interface IntegrationDef {
  readonly key: string;
  readonly name: string;
  readonly kind: IntegrationKind;
  /** Only some platforms (e.g. Jamf manages Apple devices). */
  readonly os?: readonly string[];
}

/** Ordered so that any prefix of two or more mixes Vitals-enabled and disabled integrations. */
export const INTEGRATIONS: readonly IntegrationDef[] = [
  { key: 'crowdstrike', name: 'CrowdStrike Falcon', kind: 'edr' },
  { key: 'okta', name: 'Okta', kind: 'idp' },
  { key: 'intune', name: 'Microsoft Intune', kind: 'mdm', os: ['Windows', 'iOS', 'Android'] },
  { key: 'jamf', name: 'Jamf Pro', kind: 'mdm', os: ['macOS', 'iOS'] },
  { key: 'sentinelone', name: 'SentinelOne', kind: 'edr' },
  { key: 'qualys', name: 'Qualys VMDR', kind: 'vuln' },
  { key: 'defender', name: 'Microsoft Defender for Endpoint', kind: 'edr', os: ['Windows', 'macOS', 'Linux'] },
  { key: 'tenable', name: 'Tenable Vulnerability Management', kind: 'vuln' },
  { key: 'kandji', name: 'Kandji', kind: 'mdm', os: ['macOS', 'iOS'] },
  { key: 'sophos', name: 'Sophos Central', kind: 'edr' },
  { key: 'entraid', name: 'Microsoft Entra ID', kind: 'idp' },
  { key: 'automox', name: 'Automox', kind: 'patch', os: ['Windows', 'macOS', 'Linux'] },
  { key: 'ninjaone', name: 'NinjaOne', kind: 'patch', os: ['Windows', 'macOS', 'Linux'] },
  { key: 'rapid7', name: 'Rapid7 InsightVM', kind: 'vuln' },
  { key: 'googleworkspace', name: 'Google Workspace', kind: 'idp' },
  { key: 'carbonblack', name: 'VMware Carbon Black', kind: 'edr', os: ['Windows', 'macOS', 'Linux'] },
];

/** Kinds whose agents have a deploy/function/configure funnel. */
export const VITALS_KINDS: ReadonlySet<IntegrationKind> = new Set(['edr', 'mdm', 'patch']);

interface AlertTemplate {
  readonly category: string;
  readonly issue: string;
  /** `{item}` is replaced by the alert's item. */
  readonly details: string;
}

export const ALERT_TEMPLATES: Record<IntegrationKind, readonly AlertTemplate[]> = {
  edr: [
    { category: 'Threat Detection', issue: 'Malicious file quarantined', details: 'A file matching a known malware signature was quarantined on {item}.' },
    { category: 'Suspicious Behaviour', issue: 'Suspicious PowerShell execution', details: 'An encoded PowerShell command was run on {item} by a non-admin process.' },
    { category: 'Agent Health', issue: 'Sensor not reporting', details: 'The sensor on {item} has not sent telemetry for more than 24 hours.' },
    { category: 'Ransomware Protection', issue: 'Ransomware behaviour blocked', details: 'Mass file encryption was blocked on {item}; review the process tree.' },
  ],
  mdm: [
    { category: 'Compliance', issue: 'Device not compliant', details: '{item} fails the compliance policy "Corporate baseline".' },
    { category: 'Encryption', issue: 'Disk encryption disabled', details: 'FileVault/BitLocker is not enabled on {item}.' },
    { category: 'OS Updates', issue: 'OS update overdue', details: '{item} is more than two minor versions behind the required OS version.' },
    { category: 'Device Check-in', issue: 'Device has not checked in', details: '{item} has not checked in with the management server for 14 days.' },
  ],
  idp: [
    { category: 'Risky Sign-in', issue: 'Sign-in from unfamiliar location', details: '{item} signed in from a country not seen before for this account.' },
    { category: 'MFA', issue: 'MFA not enrolled', details: '{item} has no multi-factor authenticator enrolled.' },
    { category: 'Account Lockout', issue: 'Repeated failed logins', details: '{item} was locked out after 10 failed login attempts.' },
    { category: 'Privileged Access', issue: 'Admin role granted', details: '{item} was granted a privileged administrator role.' },
  ],
  vuln: [
    { category: 'Critical Vulnerability', issue: 'Critical CVE detected', details: 'A critical vulnerability (CVSS 9.8) was found on {item}.' },
    { category: 'Exploitable Vulnerability', issue: 'Known exploited vulnerability', details: '{item} has a vulnerability listed in the KEV catalogue.' },
    { category: 'Scan Coverage', issue: 'Asset not scanned', details: '{item} has not been scanned in the last 30 days.' },
  ],
  patch: [
    { category: 'Missing Patches', issue: 'Security patches missing', details: '{item} is missing security updates released more than 14 days ago.' },
    { category: 'Reboot Required', issue: 'Pending reboot', details: '{item} needs a reboot to finish installing updates.' },
    { category: 'Patch Failure', issue: 'Patch installation failed', details: 'The last patch run failed on {item}.' },
  ],
};

/** System-level alerts (the integration's connector itself). */
export const SYSTEM_TEMPLATES: readonly AlertTemplate[] = [
  { category: 'Connector', issue: 'Integration sync delayed', details: 'The last successful sync of {item} is more than 6 hours old.' },
  { category: 'Connector', issue: 'API credentials expiring', details: 'The API credentials used for {item} expire within 14 days.' },
  { category: 'Licensing', issue: 'License seats nearly exhausted', details: '{item} uses more than 95% of its licensed seats.' },
];

export const FIRST_NAMES = [
  'Olivia', 'Liam', 'Emma', 'Noah', 'Amelia', 'Oliver', 'Ava', 'Elijah', 'Sophia', 'James',
  'Isabella', 'William', 'Mia', 'Benjamin', 'Charlotte', 'Lucas', 'Harper', 'Henry', 'Evelyn', 'Theodore',
  'Aisha', 'Mateo', 'Chloé', 'Hiroshi', 'Priya', 'Kwame', 'Ingrid', 'Diego', 'Fatima', 'Lars',
  'Mei', 'Rafael', 'Zoë', 'Arjun', 'Nadia', 'Tomás', 'Sven', 'Leila', 'Dmitri', 'Grace',
] as const;

export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee',
  'Okafor', 'Nakamura', 'Müller', 'Rossi', 'Kowalski', 'Andersson', 'Dubois', 'Silva', 'Patel', 'Kim',
  'Nguyen', 'Haddad', 'Novak', 'OConnor', 'Schmidt', 'Fischer', 'Yilmaz', 'Costa', 'Ivanova', 'Walsh',
] as const;

const slugs = new Map<string, string>();

/** Lowercase ASCII for email local parts. */
export function asciiSlug(s: string): string {
  let slug = slugs.get(s);
  if (slug === undefined) {
    slug = s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z]/g, '').toLowerCase();
    slugs.set(s, slug);
  }
  return slug;
}

export interface Department {
  readonly name: string;
  /** The tag devices and users of this department carry, if any. */
  readonly tag: string;
  readonly titles: readonly string[];
  readonly weight: number;
}

export const DEPARTMENTS: readonly Department[] = [
  { name: 'Engineering', tag: 'engineering', titles: ['Software Engineer', 'Senior Software Engineer', 'Engineering Manager', 'SRE'], weight: 30 },
  { name: 'Sales', tag: 'sales', titles: ['Account Executive', 'Sales Manager', 'Sales Engineer'], weight: 20 },
  { name: 'Finance', tag: 'finance', titles: ['Accountant', 'Financial Analyst', 'Controller'], weight: 12 },
  { name: 'Marketing', tag: 'marketing', titles: ['Marketing Manager', 'Content Strategist', 'Designer'], weight: 10 },
  { name: 'Human Resources', tag: 'hr', titles: ['HR Business Partner', 'Recruiter'], weight: 6 },
  { name: 'IT', tag: 'it', titles: ['IT Administrator', 'Security Analyst', 'Service Desk Analyst'], weight: 8 },
  { name: 'Operations', tag: 'operations', titles: ['Operations Manager', 'Logistics Coordinator'], weight: 14 },
];

export interface Place {
  readonly countryCode: string;
  readonly country: string;
  readonly city: string;
  readonly region: 'emea' | 'us' | 'apac' | 'latam';
  readonly ipPrefix: string;
  readonly weight: number;
}

export const PLACES: readonly Place[] = [
  { countryCode: 'us', country: 'United States', city: 'New York', region: 'us', ipPrefix: '198.51.100', weight: 14 },
  { countryCode: 'us', country: 'United States', city: 'San Francisco', region: 'us', ipPrefix: '198.51.101', weight: 12 },
  { countryCode: 'us', country: 'United States', city: 'Austin', region: 'us', ipPrefix: '198.51.102', weight: 8 },
  { countryCode: 'gb', country: 'United Kingdom', city: 'London', region: 'emea', ipPrefix: '203.0.113', weight: 14 },
  { countryCode: 'de', country: 'Germany', city: 'München', region: 'emea', ipPrefix: '203.0.114', weight: 8 },
  { countryCode: 'fr', country: 'France', city: 'Paris', region: 'emea', ipPrefix: '203.0.115', weight: 6 },
  { countryCode: 'se', country: 'Sweden', city: 'Malmö', region: 'emea', ipPrefix: '203.0.116', weight: 4 },
  { countryCode: 'ie', country: 'Ireland', city: 'Dublin', region: 'emea', ipPrefix: '203.0.117', weight: 5 },
  { countryCode: 'jp', country: 'Japan', city: 'Tokyo', region: 'apac', ipPrefix: '192.0.2', weight: 5 },
  { countryCode: 'sg', country: 'Singapore', city: 'Singapore', region: 'apac', ipPrefix: '192.0.3', weight: 4 },
  { countryCode: 'au', country: 'Australia', city: 'Sydney', region: 'apac', ipPrefix: '192.0.4', weight: 4 },
  { countryCode: 'br', country: 'Brazil', city: 'São Paulo', region: 'latam', ipPrefix: '192.0.5', weight: 4 },
];

/** Device form factors; `tag` is the tag every device of the form carries. */
export interface DeviceForm {
  readonly form: 'laptop' | 'desktop' | 'server' | 'phone';
  readonly tag: string;
  readonly os: readonly (readonly [string, number])[];
  readonly weight: number;
}

export const DEVICE_FORMS: readonly DeviceForm[] = [
  { form: 'laptop', tag: 'laptops', os: [['Windows', 60], ['macOS', 40]], weight: 58 },
  { form: 'desktop', tag: 'desktops', os: [['Windows', 85], ['macOS', 10], ['Linux', 5]], weight: 14 },
  { form: 'server', tag: 'servers', os: [['Linux', 70], ['Windows', 30]], weight: 18 },
  { form: 'phone', tag: 'mobile', os: [['iOS', 60], ['Android', 40]], weight: 10 },
];

export const OS_VERSIONS: Record<string, readonly string[]> = {
  Windows: ['10.0.19045', '10.0.22621', '10.0.22631', '10.0.26100'],
  WindowsServer: ['10.0.17763', '10.0.20348', '10.0.26100'],
  macOS: ['13.6.7', '14.5', '14.6.1', '15.1'],
  Linux: ['Ubuntu 22.04', 'Ubuntu 24.04', 'RHEL 9.4', 'Debian 12'],
  iOS: ['17.5.1', '17.6', '18.1'],
  Android: ['13', '14', '15'],
};

export const HARDWARE: Record<string, readonly (readonly [string, string])[]> = {
  laptop: [['Dell', 'Latitude 7440'], ['Lenovo', 'ThinkPad X1 Carbon Gen 11'], ['HP', 'EliteBook 840 G10']],
  laptopMac: [['Apple', 'MacBook Pro 14"'], ['Apple', 'MacBook Air 13"']],
  desktop: [['Dell', 'OptiPlex 7010'], ['HP', 'EliteDesk 800 G9'], ['Lenovo', 'ThinkCentre M90q']],
  desktopMac: [['Apple', 'Mac mini'], ['Apple', 'iMac 24"']],
  server: [['Dell', 'PowerEdge R750'], ['HPE', 'ProLiant DL380 Gen10'], ['VMware', 'Virtual Platform'], ['Amazon EC2', 'm6i.xlarge']],
  phone: [['Apple', 'iPhone 15'], ['Apple', 'iPhone 14'], ['Samsung', 'Galaxy S24'], ['Google', 'Pixel 8']],
};

export const SERVER_ROLES = ['web', 'db', 'app', 'cache', 'file', 'dc', 'ci'] as const;

/** Every tag the generator assigns (served by /settings/tags). */
export const TAG_POOL: readonly string[] = [
  'production', 'staging', 'laptops', 'desktops', 'servers', 'mobile',
  ...DEPARTMENTS.map((d) => d.tag),
  'emea', 'us', 'apac', 'latam',
];
