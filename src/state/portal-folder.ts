/** The folder of a portal in the state directory. */
import { createHash } from 'node:crypto';

/** The folder name of a portal: readable, and unique by a hash of the identity. */
export function folderOf(identity: string): string {
  const readable = identity.replace(/^[a-z]+:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 64);
  return `${readable}-${createHash('sha256').update(identity).digest('hex').slice(0, 12)}`;
}
