/**
 * An in-process storage's count of its writes so far, behind a symbol (not public API): while the
 * count stays the same, nothing it holds has changed, so the store may answer a page it answered
 * before from the same text. Only storages no other process writes to can say so (memory).
 */
export const WRITE_COUNT = Symbol("petstore-lib: write count");

/** The storage's write count, when it keeps one. */
export function writeCountOf(storage: object): (() => number) | undefined {
  const count = (storage as { [WRITE_COUNT]?: () => number })[WRITE_COUNT];
  return typeof count === "function" ? count : undefined;
}

/** A storage that keeps the count. */
export interface CountsWrites {
  [WRITE_COUNT](): number;
}
