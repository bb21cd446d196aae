/**
 * A value or a promise of it. The core answers without a promise when nothing had to wait (a page
 * from memory storage), so an adapter can write the response in the same tick. A leaf file.
 */

/** A value, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** True for a promise (or any thenable): the rest of the work then waits for it. */
export function isPromise<T>(value: Awaitable<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
