import { describe, expect, it } from 'vitest';
import { findCycle, folderOf, importGraph } from '../support/imports.js';

describe('the import graph of src/', () => {
  const files = importGraph();

  it('finds a cycle when there is one, and none when there is not', () => {
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toBeUndefined();
    // A file importing itself is a cycle too.
    expect(findCycle(new Map([['a', ['a']]]))).toEqual(['a', 'a']);
  });

  it('reads every kind of relative import: value, type-only, re-export and dynamic', () => {
    // Known edges of each kind in src/ (if one of these files changes, pick another example).
    expect(files.get('index.ts')).toContain('errors.ts'); // export * from
    expect(files.get('sinks/index.ts')).toContain('sinks/remote-write.ts'); // await import()
    expect(files.get('sinks/types.ts')).toContain('core/clock.ts'); // import type
    expect(files.size).toBeGreaterThan(50);
  });

  it('has no cycle between files', () => {
    expect(findCycle(files)).toBeUndefined();
  });

  it('has no cycle between folders: each folder imports only folders below it', () => {
    const folders = new Map<string, string[]>();
    for (const [file, targets] of files) {
      const from = folderOf(file);
      const list = folders.get(from) ?? [];
      for (const t of targets) if (folderOf(t) !== from && !list.includes(folderOf(t))) list.push(folderOf(t));
      folders.set(from, list);
    }
    expect(findCycle(folders)).toBeUndefined();
  });
});
