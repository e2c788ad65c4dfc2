/**
 * The claim loop of src/state/claims.ts over a chain the test scripts (what each look finds, what
 * each write answers), so that each step of the protocol shows: a claim decided on a look takes
 * the number after its newest, prunes after a won write, looks again after a lost or voided one,
 * waits on a chain another process closes, lets the others go first after a run of lost races;
 * the flight a request declares, bounded by the reader's timeouts; a pass's claim and its release.
 * Expected values worked by hand from the records each look holds.
 */
import { describe, expect, it } from 'vitest';
import { BACK_OFF_MS, claimPass, passLedger, sendLedger, type Chain, type Claimed, type Look, type Mark, type Rec } from '../../src/state/claims.js';

const T = 50_000_000;
/** 60 s and the 1 s margin: how long a request counts after it arrived. */
const SPAN = 61_000;

/** Another writer's request that arrived at `arrived`. */
const req = (n: number, arrived: number, writer = 'other'): Rec => ({ n, writer, released: false, claimed: arrived - 500, arrived, flightMs: 45_000, keepMs: SPAN });

/** What the scripted chain was asked. */
interface Calls {
  looks: number;
  puts: Array<{ n: number; what: Claimed; look: Look }>;
  marks: Array<[number, Mark]>;
  prunes: Array<{ n: number; look: Look }>;
}

/** A chain whose looks are `looks` in turn (the last one again once they run out) and whose writes answer `answers` in turn (then 'won'). */
function scripted(looks: Look[], answers: Array<'won' | 'lost' | 'void'> = []): Chain & { calls: Calls } {
  const calls: Calls = { looks: 0, puts: [], marks: [], prunes: [] };
  return {
    writer: 'me',
    calls,
    look() {
      const look = looks[Math.min(calls.looks, looks.length - 1)]!;
      calls.looks++;
      return Promise.resolve(look);
    },
    put(look, n, what) {
      calls.puts.push({ n, what, look });
      return Promise.resolve(answers[calls.puts.length - 1] ?? 'won');
    },
    mark(n, how) {
      calls.marks.push([n, how]);
      return Promise.resolve();
    },
    prune(look, n) {
      calls.prunes.push({ n, look });
      return Promise.resolve();
    },
  };
}

const look = (records: Rec[], newest: number, now: number, busyMs = 0): Look => ({ records, newest, now, busyMs });

describe('a claim on a chain', () => {
  it('takes the number after the newest (also when that newest is not a record), then prunes on the look it decided on', async () => {
    // Newest 7, though only 3 and 5 are records: the claim is number 8.
    const seen = look([req(3, T - 10_000), req(5, T - 5_000)], 7, T);
    const chain = scripted([seen]);
    const r = await sendLedger(chain, 'here').claim(5, 30_000);
    expect(r).toMatchObject({ granted: true, waitMs: 0, others: [10_000, 5_000] });
    expect(chain.calls.puts.map((p) => [p.n, p.what, p.look])).toEqual([[8, { flightMs: 30_000 }, seen]]);
    expect(chain.calls.prunes).toEqual([{ n: 8, look: seen }]);
  });

  it('does not write while the share is full, and says how long until a slot frees', async () => {
    // Two arrived at T − 10 s and T − 5 s: with a share of 2, the first frees at T − 10 s + 61 s.
    const chain = scripted([look([req(3, T - 10_000), req(5, T - 5_000)], 5, T)]);
    expect(await sendLedger(chain, 'here').claim(2)).toEqual({ granted: false, waitMs: 51_000, others: [10_000, 5_000] });
    expect(chain.calls.puts).toEqual([]);
    expect(chain.calls.prunes).toEqual([]);
  });

  it('waits as long as the look says while another process closes the chain, writing nothing, whatever the share', async () => {
    const chain = scripted([look([req(1, T - 2_000)], 2, T, 200)]);
    expect(await sendLedger(chain, 'here').claim(5)).toEqual({ granted: false, waitMs: 200, others: [2_000] });
    expect(chain.calls.puts).toEqual([]);
  });

  it('looks again after a write lost to another writer, or voided, and claims the number after the newest it then finds', async () => {
    const first = look([], 0, T);
    const second = look([req(1, T, 'other')], 1, T + 10);
    const third = look([req(1, T, 'other'), req(2, T + 10, 'third')], 2, T + 20);
    const chain = scripted([first, second, third], ['lost', 'void', 'won']);
    const r = await sendLedger(chain, 'here').claim(5);
    expect(r.granted).toBe(true);
    expect(chain.calls.looks).toBe(3);
    expect(chain.calls.puts.map((p) => [p.n, p.look])).toEqual([
      [1, first],
      [2, second],
      [3, third],
    ]);
    // Pruned once, after the write that won.
    expect(chain.calls.prunes).toEqual([{ n: 3, look: third }]);
    // The others as the last look found them: arrived 20 ms and 10 ms before it.
    expect(r.others).toEqual([20, 10]);
  });

  it('decides again on each look: a write lost to a writer that filled the share is not tried again', async () => {
    const chain = scripted([look([], 0, T), look([req(1, T)], 1, T)], ['lost']);
    expect(await sendLedger(chain, 'here').claim(1)).toMatchObject({ granted: false });
    expect(chain.calls.puts.map((p) => p.n)).toEqual([1]);
  });

  it('lets the others go first after 20 races lost in a row: it waits the back-off (250 ms), with the others as one more look finds them', async () => {
    const racing = look([], 0, T);
    const last = look([req(1, T - 3_000)], 1, T);
    // Every write lost: 20 tries (the module's MAX_RACES), each on a look of its own, then the look for the others.
    const chain = scripted([...Array.from({ length: 20 }, () => racing), last], Array.from({ length: 100 }, () => 'lost' as const));
    const r = await sendLedger(chain, 'here').claim(5);
    expect(r).toEqual({ granted: false, waitMs: 250, others: [3_000] });
    expect(BACK_OFF_MS).toBe(250);
    expect([chain.calls.looks, chain.calls.puts.length]).toEqual([21, 20]);
    expect(chain.calls.puts.every((p) => p.n === 1 && p.look === racing)).toBe(true);
    expect(chain.calls.prunes).toEqual([]);
  });
});

describe('the flight a request declares', () => {
  it("is the reader's default timeouts and 5 s (45 s) when not given, what it is given up to the longest timeouts and 5 s (905 s), and never below 0", async () => {
    const flights: number[] = [];
    for (const given of [undefined, 12_345, 905_000, 905_001, 5_000_000, 0, -1, -60_000]) {
      const chain = scripted([look([], 0, T)]);
      await sendLedger(chain, 'here').claim(5, given);
      flights.push(chain.calls.puts[0]!.what.flightMs);
    }
    expect(flights).toEqual([45_000, 12_345, 905_000, 905_000, 905_000, 0, 0, 0]);
  });
});

describe('what a granted request records later', () => {
  it('marks its own number released, or arrived, and nothing for a claim not granted', async () => {
    const chain = scripted([look([req(1, T)], 4, T)]);
    const ledger = sendLedger(chain, 'the state directory /s');
    expect(ledger.where).toBe('the state directory /s');
    const r = await ledger.claim(5);
    await r.arrived!();
    await r.release!();
    expect(chain.calls.marks).toEqual([
      [5, 'arrived'],
      [5, 'released'],
    ]);
    const full = await sendLedger(scripted([look([req(1, T)], 1, T)]), 'x').claim(1);
    expect(full.release).toBeUndefined();
    expect(full.arrived).toBeUndefined();
  });

  it("reads the others' requests without a share: every one that counts, however many", async () => {
    const records = Array.from({ length: 30 }, (_, i) => req(i + 1, T - 1_000 * i));
    const chain = scripted([look([...records, req(31, T, 'me')], 31, T)]);
    expect(await sendLedger(chain, 'x').others()).toEqual(records.map((_, i) => 1_000 * i));
    expect(chain.calls.puts).toEqual([]);
  });
});

describe('a pass claimed on a chain', () => {
  /** A pass claimed at `at`. */
  const pass = (n: number, at: number): Rec => ({ n, writer: 'other', released: false, claimed: at, arrived: at, flightMs: 0, keepMs: 3_540_000 });

  it('is due when no pass counts (an hourly one: 59 minutes after the last), recorded with its interval and no flight, and given back by its release', async () => {
    const chain = scripted([look([pass(2, T - 3_540_000)], 2, T)]);
    const claim = await claimPass(chain, 3_600_000);
    expect(claim.due).toBe(true);
    expect(chain.calls.puts.map((p) => [p.n, p.what])).toEqual([[3, { flightMs: 0, intervalMs: 3_600_000 }]]);
    await claim.release();
    expect(chain.calls.marks).toEqual([[3, 'released']]);
  });

  it('is not due while the last pass counts, and its release then gives back nothing', async () => {
    const chain = scripted([look([pass(2, T - 3_539_999)], 2, T)]);
    const claim = await claimPass(chain, 3_600_000);
    expect(claim.due).toBe(false);
    await claim.release();
    expect(chain.calls.puts).toEqual([]);
    expect(chain.calls.marks).toEqual([]);
  });

  it("is claimed on the chain of the portal's entry", async () => {
    const asked: Array<[string, string]> = [];
    const chain = scripted([look([], 0, T)]);
    const ledger = passLedger((identity, entry) => {
      asked.push([identity, entry]);
      return chain;
    });
    expect((await ledger.claim('https://acme.example.com/public-api/v1', 'acme-finance', 600_000)).due).toBe(true);
    expect(asked).toEqual([['https://acme.example.com/public-api/v1', 'acme-finance']]);
    expect(chain.calls.puts[0]!.what).toEqual({ flightMs: 0, intervalMs: 600_000 });
  });
});
