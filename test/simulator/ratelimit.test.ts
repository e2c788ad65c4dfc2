import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
import { T0, get } from './helpers.js';

describe('rate limit', () => {
  const closing = closeAfterEach();

  it('serves 10 requests in 60 s by default, then 429 with Retry-After until a slot frees', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock }));
    for (let i = 0; i < 10; i++) {
      expect((await get(sim, '/vitals')).status).toBe(200);
      clock.advance(1_000); // requests at T0, T0+1s, ..., T0+9s
    }
    // Now T0+10s: the oldest (T0) frees at T0+60s, 50 s away.
    const r = await get(sim, '/vitals');
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('50');
    expect(r.json).toMatchObject({ success: false, statusCode: 429, data: [] });
    clock.advance(49_500);
    const again = await get(sim, '/vitals');
    expect(again.status).toBe(429);
    expect(again.headers['retry-after']).toBe('1'); // 0.5 s rounds up
    clock.advance(500);
    expect((await get(sim, '/vitals')).status).toBe(200);
    expect((await get(sim, '/vitals')).status).toBe(429); // T0+1s frees at T0+61s
  });

  it('counts 401, 403, 400 and 404 answers but not 429 answers', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, rateLimit: { requests: 4, windowMs: 10_000 }, keys: [{ key: 'k-aaaaaaaaaaaa' }, { key: 'k-bbbbbbbbbbbb', permissions: 'none' }] }));
    expect((await get(sim, '/vitals', { key: null })).status).toBe(401);
    expect((await get(sim, '/vitals', { key: 'k-bbbbbbbbbbbb' })).status).toBe(403);
    expect((await get(sim, '/devices')).status).toBe(400);
    expect((await get(sim, '/missing')).status).toBe(404);
    for (let i = 0; i < 5; i++) expect((await get(sim, '/vitals')).status).toBe(429);
    clock.advance(10_000);
    // The five 429s did not take slots: four fresh requests pass.
    for (let i = 0; i < 4; i++) expect((await get(sim, '/vitals')).status).toBe(200);
    expect((await get(sim, '/vitals')).status).toBe(429);
    expect(sim.requests.map((r) => r.status)).toEqual([401, 403, 400, 404, 429, 429, 429, 429, 429, 200, 200, 200, 200, 429]);
  });

  it('applies one window across all keys', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, rateLimit: { requests: 2, windowMs: 60_000 }, keys: [{ key: 'k-aaaaaaaaaaaa' }, { key: 'k-bbbbbbbbbbbb' }] }));
    expect((await get(sim, '/vitals', { key: 'k-aaaaaaaaaaaa' })).status).toBe(200);
    expect((await get(sim, '/vitals', { key: 'k-bbbbbbbbbbbb' })).status).toBe(200);
    const r = await get(sim, '/vitals', { key: 'k-bbbbbbbbbbbb' });
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('60');
  });

  it('answers 429 before checking the key', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, rateLimit: { requests: 1, windowMs: 60_000 } }));
    await get(sim, '/vitals');
    expect((await get(sim, '/vitals', { key: null })).status).toBe(429);
  });

  it('never limits when rateLimit is false', async () => {
    const sim = closing(await startSimulator({ clock: new FakeClock(T0), rateLimit: false }));
    for (let i = 0; i < 30; i++) expect((await get(sim, '/settings/tags')).status).toBe(200);
  });
});
