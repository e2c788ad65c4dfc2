/** One value of one series. `labels` includes `portal`. */
export interface Sample {
  /** The name of a family of the catalogue (src/collect/catalogue.ts). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** What one render sees: every sample of the current state, and when it was collected. */
export interface Snapshot {
  /** Unix milliseconds of the collection the samples come from (for remote write timestamps). */
  readonly collectedAt: number;
  readonly samples: readonly Sample[];
}
