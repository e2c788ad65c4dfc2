/**
 * Legal but awkward values the simulated portal serves on purpose, so the demo and every test
 * that reads it meet them: an unresolved alert whose creation time is unset (spec 2.2: the minimum
 * date), products whose integration part is lone-surrogate text that UTF-8 writes alike
 * (`Legacy Connector\ud800` and `Legacy Connector\ud801` are both `Legacy Connector\ufffd`),
 * blank products, and Vitals whole numbers written as floats (`5.0`, `5e0`, and the envelope's
 * `total` of /vitals as `8.0`). Each is a pure
 * function of the alert index or the record's place in its list.
 */

/** One alert in this many has an unset creation time (`timestamp` the minimum date). */
const UNSET_CREATED_EVERY = 31;
/** One alert in this many has a lone-surrogate product; the two variants alternate. */
const SURROGATE_EVERY = 29;
/** One alert in this many has a blank product (whitespace only, or nothing before its comma). */
const BLANK_EVERY = 37;

/** The integration part of the lone-surrogate products: distinct strings, written alike. */
const SURROGATE_INTEGRATIONS = ['Legacy Connector\ud800', 'Legacy Connector\ud801'] as const;
/** The blank products, in turn. */
const BLANK_PRODUCTS = [' ', ' \t, Connector'] as const;

/** Whether alert `k` has an unset creation time. */
export function unsetCreated(k: number): boolean {
  return k % UNSET_CREATED_EVERY === 7;
}

/** The odd product of alert `k`, if it has one (its category is `category`); such an alert names no integration of the portal. */
export function oddProduct(k: number, category: string): string | undefined {
  if (k % SURROGATE_EVERY === 3) return `${SURROGATE_INTEGRATIONS[Math.floor(k / SURROGATE_EVERY) % 2]!}, ${category}`;
  if (k % BLANK_EVERY === 11) return BLANK_PRODUCTS[Math.floor(k / BLANK_EVERY) % 2]!;
  return undefined;
}

const VITALS_COUNT = /("(?:activeAgents|agentDeployedPossibleCompliant|agentDeployedCompliant|agentFunctioningPossibleCompliant|agentFunctioningCompliant|configurationPossibleCompliant|configurationCompliant)":)(\d+)/g;

/**
 * The JSON of the `n`th record of a /vitals list: every other record writes its counts as floats,
 * `5.0` or, every fourth, `5e0` (whole numbers all the same, as JSON allows).
 */
export function vitalsJson(record: unknown, n: number): string {
  const text = JSON.stringify(record);
  if (n % 2 === 0) return text;
  return text.replace(VITALS_COUNT, n % 4 === 1 ? '$1$2.0' : '$1$2e0');
}

/** The envelope's `total` as the list writes it: /vitals as a float (`8.0`), the others as integers. */
export function totalJson(resource: string, total: number): string {
  return resource === 'vitals' ? `${total}.0` : String(total);
}
