/**
 * Random alert records written as JSON text, for the alert scanner's tests: mostly the portal's own
 * form (compact, the same keys in the same order, timestamps of 27 characters), and around it what
 * JSON and the spec allow and a portal might send: other key orders, whitespace, escapes, text
 * outside ASCII, missing fields, fields of other types, duplicate keys, nested values, timestamps
 * in other forms. The texts are valid JSON; the tests parse them with JSON.parse for their oracle.
 */

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const STATES = ['Red', 'Amber', 'Green', 'red', ' Amber ', 'Purple', '', 'GREEN'];
const PRODUCTS = ['CrowdStrike Falcon, Agent Health', 'Microsoft Intune, Compliance', 'Okta', 'Jamf Pro, Inventory', 'Sécurité, Zürich', '数据, 安全', '', ' , x', 'Qualys\u00a0VM', 'A "quoted", product', 'back\\slash', 'Tab\tbed', 'Emoji 😀, now'];
const STATUSES = ['Incident', 'Warning', 'Info', 'info', 'Other', ''];
const OWNERS = ['', 'Ana Pérez', 'bob', '\u00e9', '"', ' '];

/** A timestamp as a portal may write it: mostly the canonical 27 characters. */
function timestamp(r: Rand): string {
  const x = r();
  if (x < 0.35) return '0001-01-01T00:00:00.0000000';
  const d = new Date(Date.UTC(2020 + Math.floor(r() * 7), Math.floor(r() * 12), 1 + Math.floor(r() * 28), Math.floor(r() * 24), Math.floor(r() * 60), Math.floor(r() * 60)));
  const iso = d.toISOString().slice(0, 19);
  const frac = String(Math.floor(r() * 1e7)).padStart(7, '0');
  if (x < 0.95) return `${iso}.${frac}`;
  return pick(r, [
    `${iso}.${frac}Z`,
    `${iso}.${frac.slice(0, 3)}`,
    iso,
    ` ${iso}.${frac}`,
    '0001-01-01T00:00:00Z',
    '2024-02-29T12:00:00.0000000',
    '2023-02-29T12:00:00.0000000',
    '2024-13-01T00:00:00.0000000',
    '2024-01-01 00:00:00.0000000',
    'not a time at all, 27 chars',
    '',
  ]);
}

/** A JSON value of any kind, nested up to `depth`. */
function anyValue(r: Rand, depth: number): unknown {
  const x = r();
  if (x < 0.2) return Math.floor(r() * 1e6) * (r() < 0.5 ? 1 : -1) / pick(r, [1, 10, 1000]);
  if (x < 0.3) return null;
  if (x < 0.4) return r() < 0.5;
  if (x < 0.7 || depth === 0) return pick(r, [...PRODUCTS, 'x'.repeat(Math.floor(r() * 300))]);
  if (x < 0.85) return Array.from({ length: Math.floor(r() * 4) }, () => anyValue(r, depth - 1));
  return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, (_, i) => [`k${i}`, anyValue(r, depth - 1)]));
}

/** The value of a field the fold reads: its own type mostly, sometimes another. */
function field(r: Rand, own: () => unknown): unknown {
  return r() < 0.98 ? own() : anyValue(r, 2);
}

/** One alert record's members, in the portal's key order. */
function members(r: Rand): [string, unknown][] {
  const acknowledged = r() < 0.3;
  const m: [string, unknown][] = [
    ['state', field(r, () => pick(r, STATES))],
    ['product', field(r, () => pick(r, PRODUCTS))],
    ['status', field(r, () => pick(r, STATUSES))],
    ['item', `host-${Math.floor(r() * 1000)}`],
    ['issue', 'Sensor not reporting'],
    ['details', pick(r, ['The sensor has not sent telemetry.', 'fails the policy "Corporate baseline".', 'x'.repeat(Math.floor(r() * 2000))])],
    ['ownerName', field(r, () => pick(r, OWNERS))],
    ['timestamp', field(r, () => timestamp(r))],
    ['acknowledgedTime', field(r, () => (acknowledged ? timestamp(r) : '0001-01-01T00:00:00.0000000'))],
    ['resolved', field(r, () => r() < 0.05)],
    ['acknowledged', field(r, () => acknowledged)],
    ['itemId', 'cc948310-b2b8-47a0-826f-7adc48fb287d'],
    ['inactiveUntil', field(r, () => (r() < 0.8 ? '0001-01-01T00:00:00.0000000' : timestamp(r)))],
    ['hasLinkedDevice', r() < 0.5],
  ];
  if (r() < 0.03) m.splice(Math.floor(r() * m.length), 1);
  if (r() < 0.03) m.push([pick(r, ['extra', 'state', 'timestamp', 'resolved']), anyValue(r, 3)]);
  if (r() < 0.03) m.push(['nested', anyValue(r, 6)]);
  if (r() < 0.02) m.sort(() => r() - 0.5);
  return m;
}

/** A string as JSON, sometimes with characters escaped that need not be. */
function quote(r: Rand, s: string): string {
  const json = JSON.stringify(s);
  if (r() >= 0.03 || s.length === 0) return json;
  return json.replace(/[a-z]/, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One record as JSON text: compact mostly; sometimes spaced, with an escaped key, or pretty-printed. */
export function alertRecordText(r: Rand): string {
  const m = members(r);
  const style = r();
  if (style < 0.02) return JSON.stringify(Object.fromEntries(m), null, 2);
  const space = style < 0.05 ? () => pick(r, ['', ' ', '\n', '\t', '\r\n ']) : () => '';
  const text = m.map(([k, v]) => `${space()}${quote(r, k)}${space()}:${space()}${typeof v === 'string' ? quote(r, v) : JSON.stringify(v)}${space()}`).join(',');
  return `{${text}}`;
}
