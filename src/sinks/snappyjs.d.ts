// snappyjs ships no types; this covers the two functions remote write uses.
declare module 'snappyjs' {
  const snappy: {
    /** Snappy block format (not framed), as Prometheus remote write expects. */
    compress<T extends Uint8Array | ArrayBuffer>(input: T): T;
    uncompress<T extends Uint8Array | ArrayBuffer>(input: T, maxLength?: number): T;
  };
  export default snappy;
}
