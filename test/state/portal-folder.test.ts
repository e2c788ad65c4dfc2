/**
 * The folder of a portal in the state directory (src/state/portal-folder.ts): its identity without
 * the scheme, every run of other characters than letters, digits, dots and dashes one `_`, at most 64
 * of those, then `-` and the first 12 hex digits of the identity's SHA-256 (worked out with
 * `sha256sum`).
 */
import { describe, expect, it } from 'vitest';
import { folderOf } from '../../src/state/portal-folder.js';

describe('folderOf', () => {
  it('reads as the identity, and is told apart by a hash of it', () => {
    expect(folderOf('https://acme.example.com/public-api/v1')).toBe('acme.example.com_public-api_v1-c989a23a8f39');
    expect(folderOf('http://127.0.0.1:8080//x?y=1')).toBe('127.0.0.1_8080_x_y_1-cb178d5acd4e');
  });

  it('keeps 64 characters of a long identity', () => {
    expect(folderOf(`https://${'a'.repeat(100)}.example.com/v1`)).toBe(`${'a'.repeat(64)}-2d36ed6819e0`);
  });
});
