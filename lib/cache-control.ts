/**
 * What `Cache-Control` tells caches (RFC 9111), per store: answers to authenticated requests are
 * `private` (a shared cache never serves one caller's answer to another) and `no-cache` by default
 * (a browser keeps them and asks again each time, a cheap `304`, so a revoked key is refused at
 * once); a pet, which never changes, and a full page may get a `max-age`; the last page, still
 * filling, never does; errors are `no-store`. Why these defaults: docs/caching.md.
 */
import { checkOptionNames } from "./options.ts";

/** `createPetStore({ cacheControl })`. */
export interface CacheControlOptions {
  /**
   * Seconds a browser may reuse a pet (`GET {base}/pets/{petId}`) without asking again:
   * `private, max-age=N`. Default 0: `private, no-cache` (kept, and revalidated every time).
   */
  petMaxAge?: number;
  /**
   * The same for a full page of the list (one with a `Link: rel="next"`). The last page, which new
   * pets still fill, is always `private, no-cache`. Default 0.
   */
  pageMaxAge?: number;
  /**
   * Adds `no-transform` to every answer: no proxy may change it, and the Node adapter and the
   * standalone server do not compress it. Default false.
   */
  noTransform?: boolean;
  /** `no-store` on every answer, as before 1.4: browsers keep nothing. Default false. */
  noStore?: boolean;
}

/** The `Cache-Control` of each kind of answer, made once per store. */
export interface CachePolicy {
  /** A pet (`getPet`). */
  pet: string;
  /** A page with a next page. */
  fullPage: string;
  /** The last page. */
  lastPage: string;
  /** A created pet (`201`). */
  created: string;
  /** True when every answer also says `no-transform`. */
  noTransform: boolean;
}

/** A year: longer than any browser keeps an answer anyway. */
const MAX_AGE_LIMIT = 31_536_000;
const REVALIDATED = "private, no-cache";

/** Checks `createPetStore({ cacheControl })`: a clear TypeError for anything that cannot work. */
export function checkCacheControl(option: unknown, where = "createPetStore: cacheControl"): CacheControlOptions {
  if (option === undefined) return {};
  checkOptionNames(where, option, ["petMaxAge", "pageMaxAge", "noTransform", "noStore"]);
  const options = option as CacheControlOptions;
  for (const name of ["petMaxAge", "pageMaxAge"] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0 || value > MAX_AGE_LIMIT)) {
      throw new TypeError(
        `${where}.${name} must be a whole number of seconds from 0 to ${MAX_AGE_LIMIT} (got ${JSON.stringify(value)})`,
      );
    }
  }
  for (const name of ["noTransform", "noStore"] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== "boolean") {
      throw new TypeError(`${where}.${name} must be true or false (got ${JSON.stringify(value)})`);
    }
  }
  if (options.noStore === true && ((options.petMaxAge ?? 0) > 0 || (options.pageMaxAge ?? 0) > 0)) {
    throw new TypeError(`${where}: noStore keeps nothing, so no max-age can apply: give one or the other`);
  }
  return options;
}

/** The policy of checked options. */
export function cachePolicy(options: CacheControlOptions): CachePolicy {
  const kept = (maxAge: number | undefined) =>
    options.noStore === true ? "no-store" : maxAge ? `private, max-age=${maxAge}` : REVALIDATED;
  return {
    pet: kept(options.petMaxAge),
    fullPage: kept(options.pageMaxAge),
    lastPage: kept(0),
    created: kept(0),
    noTransform: options.noTransform === true,
  };
}
