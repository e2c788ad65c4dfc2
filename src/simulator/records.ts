/**
 * Record shapes served by the simulated portal, exactly as in spec sections 2.3–2.10.
 * Timestamps are strings `yyyy-MM-ddTHH:mm:ss.fffffff` (UTC, no zone); unset ones are
 * `0001-01-01T00:00:00.0000000`.
 */

/** Where a device or login was seen (2.3, 2.4). */
export interface DeviceLocation {
  /** Two letters, lowercase. */
  countryCode: string;
  country: string;
  city: string;
}

/** Device `metadata` (2.3): every value is a string. */
export interface DeviceMetadata {
  serial_number: string;
  manufacturer: string;
  model: string;
  /** `<number> GB` */
  total_disk_storage: string;
  /** `<number> GB` */
  free_disk_storage: string;
  /** `<number> GB` */
  total_memory: string;
  /** `<number> GHz` */
  cpu_speed: string;
  /** `yyyy-MM-dd HH:mm:ss` */
  warranty_expiry: string;
}

/** A security control on a device (2.3 `securityTools`). */
export interface DeviceSecurityTool {
  name: string;
  redAlerts: number;
  amberAlerts: number;
}

/** An integration the device is present in (2.3 `connectedSystems`). */
export interface DeviceConnectedSystem {
  name: string;
  isConnected: boolean;
  isActive: boolean;
}

/** A device record of `/devices` (2.3). */
export interface DeviceRecord {
  hostName: string;
  os: string;
  osVersion: string;
  lastOnline: string;
  location: DeviceLocation;
  /** The spec does not show the element shape; the simulator serves tag names (strings). */
  tags: string[];
  metadata: DeviceMetadata;
  lastUser: { name: string; email: string };
  lastLogin: string;
  publicIp: string;
  privateIp: string;
  macAddress: string;
  securityTools: DeviceSecurityTool[];
  connectedSystems: DeviceConnectedSystem[];
}

/** Where a login happened (2.4). */
export interface LoginLocation {
  ip: string;
  countryCode: string;
  country: string;
  city: string;
}

/** A login event of a directory user (2.4). */
export interface UserLogin {
  lastLoginTime: string;
  lastLoginLocation: LoginLocation;
}

/** A device recently used by a directory user (2.4). */
export interface UserRecentDevice {
  /** GUID form. */
  itemId: string;
  name: string;
  multiple: boolean;
  isInactive: boolean;
}

/** A directory user of `/users` (2.4). */
export interface UserRecord {
  name: string;
  email: string;
  jobTitle: string;
  department: string;
  tags: string[];
  lastActivity: string;
  lastSuccessLogin: UserLogin;
  lastFailedLogin: UserLogin;
  recentDevices: UserRecentDevice[];
}

/** One raw integration record of `/inventory` (2.5); its fields vary by integration and type. */
export type InventoryItem = Record<string, unknown>;

/** The workstation inventory item the simulator serves (the field names of the 2.5 sample). */
export interface WorkstationInventoryItem {
  name: string;
  tenantId: string;
  tenantName: string;
  patches: number;
  pendingPatches: number;
  nextPatchTime: string;
  lastUpdateTime: string;
  lastRefreshTime: string;
  uptimeDisplay: string;
  needsReboot: boolean;
  osFamily: string;
  osName: string;
  createTime: string;
  osVersion: string;
  ipAddresses: string[];
  agentVersion: number;
  customName: string;
  totalCount: number;
  displayName: string;
  connected: boolean;
  lastLoggedInUser: string;
  lastLoggedInTime: string;
  uuid: string;
  /** Colour word: Red, Amber or Green. */
  risk: string;
  itemId: string;
}

/** An alert of `/alerts` (2.6). */
export interface AlertRecord {
  /** `Red`, `Amber` or `Green`. */
  state: string;
  /** `<integration>, <category>` */
  product: string;
  /** `Incident`, `Warning` or `Info`. */
  status: string;
  item: string;
  issue: string;
  details: string;
  /** `device`, `user` or `system`. */
  itemEntityType: string;
  ownerName: string;
  timestamp: string;
  acknowledgedTime: string;
  assignedTime: string;
  resolved: boolean;
  acknowledged: boolean;
  resolvedBy: string;
  resolvedTime: string;
  /** GUID form. */
  itemId: string;
  inactiveUntil: string;
  hasLinkedDevice: boolean;
}

/** A Vitals record of `/vitals` (2.7): the funnel numbers when `vitalsEnabled`, else `activeAgents`. */
export interface VitalsRecord {
  key: string;
  name: string;
  vitalsEnabled: boolean;
  activeAgents?: number;
  agentDeployedPossibleCompliant?: number;
  agentDeployedCompliant?: number;
  agentFunctioningPossibleCompliant?: number;
  agentFunctioningCompliant?: number;
  configurationPossibleCompliant?: number;
  configurationCompliant?: number;
}

/** A team reference on a portal user (2.8). */
export interface TeamRef {
  /** GUID. */
  id: string;
  name: string;
}

/** A portal account of `/settings/usermanagement/users` (2.8). */
export interface PortalUserRecord {
  username: string;
  name: string;
  surname: string;
  roleid: string;
  /** `enabled` or `disabled`. */
  mfastatus: string;
  enabled: boolean;
  /** `enabled` or `disabled`. */
  ssostatus: string;
  currentteams: TeamRef[];
}

/** A member reference on roles and teams (2.9, 2.10). */
export interface MemberRef {
  username: string;
  name: string;
  surname: string;
}

/** A role of `/settings/usermanagement/roles` (2.9). */
export interface RoleRecord {
  id: string;
  name: string;
  description: string;
  default: boolean;
  permissions: Record<string, string>;
  users: MemberRef[];
}

/** A team of `/settings/usermanagement/teams` (2.10). */
export interface TeamRecord {
  /** GUID. */
  id: string;
  name: string;
  members: MemberRef[];
}
