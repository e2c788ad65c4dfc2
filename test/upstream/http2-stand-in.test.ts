/**
 * scripts/lazy/http2.cjs stands in for node:http2 inside the built undici (scripts/build.mjs): its
 * constants must be node:http2's own, and it must hold every one undici's HTTP/2 client reads when
 * it loads (an upgrade of undici that reads another would otherwise get undefined).
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const standIn = require('../../scripts/lazy/http2.cjs') as { constants: Record<string, unknown>; connect: unknown };

/** The names client-h2.js destructures from `http2.constants`, read from its source. */
function namesUndiciReads(): string[] {
  const source = readFileSync(require.resolve('undici/lib/dispatcher/client-h2.js'), 'utf8');
  const block = /const\s*\{\s*constants:\s*\{([^}]*)\}\s*\}\s*=\s*http2/.exec(source);
  if (!block) throw new Error('client-h2.js no longer destructures http2.constants: look again at scripts/lazy/http2.cjs');
  return block[1]!.split(',').map((s) => s.trim()).filter(Boolean);
}

describe('the node:http2 stand-in of the built undici', () => {
  it('holds every constant undici reads when it loads, with node:http2 values', () => {
    const names = namesUndiciReads();
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect({ name, value: standIn.constants[name] }).toEqual({ name, value: (http2.constants as Record<string, unknown>)[name] });
  });

  it('holds nothing else, and connects through node:http2 itself', async () => {
    expect(Object.keys(standIn.constants).sort()).toEqual(namesUndiciReads().sort());
    const server = http2.createServer((_req, res) => res.end('h2'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const session = (standIn.connect as typeof http2.connect)(`http://127.0.0.1:${port}`);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': '/' });
        let text = '';
        stream.on('data', (c: Buffer) => (text += c.toString()));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      });
      expect(body).toBe('h2');
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
