import { expect, it } from 'vitest';

/**
 * One test per row of a table of inputs and the output `fn` must give for each, written by hand
 * (from the spec or a reference, never from `fn`). `title` formats the row as `it.each` does.
 */
export function itMaps<I, O>(title: string, fn: (input: I) => O, rows: ReadonlyArray<readonly [I, O]>): void {
  it.each(rows)(title, (input, want) => {
    expect(fn(input)).toBe(want);
  });
}
