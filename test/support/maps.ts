import { expect, it } from 'vitest';

/**
 * One test per row of a table: the row's arguments, then the output `fn` must give for them,
 * written by hand (from the spec or a reference, never from `fn`). `title` formats the whole row
 * as `it.each` does.
 */
export function itMaps<A extends unknown[], O>(title: string, fn: (...args: A) => O, rows: ReadonlyArray<readonly [...A, O]>): void {
  it.each(rows.map((row): unknown[] => [...row]))(title, (...row) => {
    expect(fn(...(row.slice(0, -1) as A))).toBe(row.at(-1));
  });
}
