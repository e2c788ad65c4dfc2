/** Device totals by activity, read from the `total` of `/devices?filter=active|inactive&limit=1`. */
export interface DevicesTotals {
  readonly active: number;
  readonly inactive: number;
}
