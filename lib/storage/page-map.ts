/**
 * What a store remembers per page it was asked (Redis's page guesses, SQLite's kept pages): one
 * value a page, found by its filter, then its cursor (a number: no key is built per page), then
 * its limit. At most 256 pages; past that all are forgotten at once (a walk of a large store asks
 * each page once, and would only churn a finer bound).
 */

/** Pages remembered per store. */
const REMEMBERED = 256;

/** A remembered page: the limit it was asked with, and its value. */
export interface PageEntry<V> {
  readonly limit: number;
  readonly value: V;
}

export interface PageMap<Status, V> {
  /** What was remembered for this page; undefined when nothing was, or for another limit. */
  get(status: Status | undefined, after: number, limit: number): PageEntry<V> | undefined;
  /** Remembers `value` for this page, in place of what was there. */
  set(status: Status | undefined, after: number, limit: number, value: V): void;
}

/** An empty page map, for one store. @example const pages = makePageMap<PetStatus, Pet[]>() */
export function makePageMap<Status, V>(): PageMap<Status, V> {
  const known = new Map<Status | undefined, Map<number, PageEntry<V>>>();
  let size = 0;
  return {
    get(status, after, limit) {
      const entry = known.get(status)?.get(after);
      return entry !== undefined && entry.limit === limit ? entry : undefined;
    },
    set(status, after, limit, value) {
      if (size >= REMEMBERED) {
        known.clear();
        size = 0;
      }
      let pages = known.get(status);
      if (pages === undefined) {
        pages = new Map();
        known.set(status, pages);
      }
      if (!pages.has(after)) size++;
      pages.set(after, { limit, value });
    },
  };
}
