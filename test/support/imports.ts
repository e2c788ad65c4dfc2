import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const SRC = new URL('../../src/', import.meta.url).pathname;

/** `import … from`, `import type … from`, `export … from`, a bare `import '…'` and a dynamic `import('…')`, of a relative path. */
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm;

/**
 * The import graph of src/: every TypeScript file (relative to src/) and the files of src/ it
 * imports, type-only and dynamic imports included (what an import resolves outside src/, such as
 * package.json, is left out).
 */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts')) {
        const targets = [...readFileSync(path, 'utf8').matchAll(IMPORT)]
          .map((m) => join(dirname(path), m[1]!.replace(/\.js$/, '.ts')))
          .filter((target) => target.startsWith(SRC) && existsSync(target))
          .map((target) => relative(SRC, target));
        graph.set(relative(SRC, path), [...new Set(targets)]);
      }
    }
  };
  walk(SRC);
  return graph;
}

/** The folder of src/ a file belongs to (`sources` for sources/alerts/fold.ts), or the file itself when it sits in src/ (`domain.ts`). */
export function folderOf(file: string): string {
  return file.split('/')[0]!;
}

/** One cycle of a graph as the path around it (`a → b → a`), or undefined when it has none. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (node: string): string[] | undefined => {
    if (onPath.has(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return undefined;
    path.push(node);
    onPath.add(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    onPath.delete(node);
    done.add(node);
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}
