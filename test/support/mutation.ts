/**
 * Under mutation testing (`npm run mutation`, docs/testing.md; scripts/mutation.mjs sets
 * MUTATION_PART), a test runs once for every mutant it covers, thousands of times, with the code
 * instrumented. The few tests whose size is their whole cost (seeded cases by the hundred, every
 * UTF-16 code unit, megabyte bodies one byte at a time) make the same checks on fewer cases there;
 * `npm test` and `npm run test:unit` always run them whole. Tests of flat memory keep their size:
 * smaller, garbage not yet collected would hide what they measure.
 */
export function casesOr(whole: number, underMutation: number): number {
  return process.env.MUTATION_PART === undefined ? whole : underMutation;
}
