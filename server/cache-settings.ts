/**
 * The standalone server's settings of caching and compression (`PETSTORE_CACHE_*`,
 * `PETSTORE_COMPRESSION`, and the flags of the same names): what `createPetStore({ cacheControl })`
 * and `createNodeHandler(store, { compression })` take. Defaults and why: docs/caching.md.
 */
import type { CacheControlOptions } from "petstore-lib";

/** A setting as the user gave it: its text, and the flag or variable it came from (named in errors). */
type Setting = { raw: string; name: string };

/** The flags of these settings, each taking a value. */
export const CACHE_FLAGS = {
  "cache-pet-max-age": { type: "string" },
  "cache-page-max-age": { type: "string" },
  "cache-no-transform": { type: "string" },
  "cache-no-store": { type: "string" },
  compression: { type: "string" },
} as const;

/** The lines of `--help` for these settings. */
export const CACHE_USAGE = `  --cache-pet-max-age  PETSTORE_CACHE_PET_MAX_AGE  seconds a browser may reuse a pet unasked (default 0: revalidated)
  --cache-page-max-age PETSTORE_CACHE_PAGE_MAX_AGE seconds a browser may reuse a full page unasked (default 0)
  --cache-no-transform PETSTORE_CACHE_NO_TRANSFORM true: answers say no-transform, none is compressed (default false)
  --cache-no-store     PETSTORE_CACHE_NO_STORE     true: Cache-Control no-store on every answer, as before 1.4 (default false)
  --compression        PETSTORE_COMPRESSION        on | off: zstd, br or gzip for answers of 1 KiB or more (default on)`;

/** What the settings give: the store's cacheControl option (only what was set) and whether to compress. */
export interface CacheSettings {
  cacheControl?: CacheControlOptions;
  compression?: false;
}

/** Thrown with a one-line message naming the setting. */
type Fail = (message: string) => never;

/** Seconds from 0 to a year; empty: unset. */
function parseMaxAge({ raw, name }: Setting, fail: Fail): number | undefined {
  const text = raw.trim();
  if (text === "") return undefined;
  if (!/^[0-9]{1,8}$/.test(text) || Number(text) > 31_536_000) {
    fail(`${name} must be a whole number of seconds from 0 to 31536000 (got ${JSON.stringify(raw)})`);
  }
  return Number(text);
}

/** A switch: true/false, on/off, yes/no, 1/0; empty: unset. */
function parseSwitch({ raw, name }: Setting, fail: Fail): boolean | undefined {
  const text = raw.trim().toLowerCase();
  if (text === "") return undefined;
  if (["true", "on", "yes", "1"].includes(text)) return true;
  if (["false", "off", "no", "0"].includes(text)) return false;
  return fail(`${name} must be on or off (true or false; got ${JSON.stringify(raw)})`);
}

/**
 * Reads the settings through `pick(flag, variable)` (the flag wins over the variable; "" when
 * neither is given).
 */
export function readCacheSettings(pick: (flag: string, variable: string) => Setting, fail: Fail): CacheSettings {
  const petMaxAge = parseMaxAge(pick("cache-pet-max-age", "PETSTORE_CACHE_PET_MAX_AGE"), fail);
  const pageMaxAge = parseMaxAge(pick("cache-page-max-age", "PETSTORE_CACHE_PAGE_MAX_AGE"), fail);
  const noTransform = parseSwitch(pick("cache-no-transform", "PETSTORE_CACHE_NO_TRANSFORM"), fail);
  const noStoreSetting = pick("cache-no-store", "PETSTORE_CACHE_NO_STORE");
  const noStore = parseSwitch(noStoreSetting, fail);
  const compression = parseSwitch(pick("compression", "PETSTORE_COMPRESSION"), fail);
  if (noStore === true && ((petMaxAge ?? 0) > 0 || (pageMaxAge ?? 0) > 0)) {
    fail(`${noStoreSetting.name} keeps nothing, so no max-age can apply: give a max-age or no-store, not both`);
  }
  const cacheControl: CacheControlOptions = {
    ...(petMaxAge === undefined ? {} : { petMaxAge }),
    ...(pageMaxAge === undefined ? {} : { pageMaxAge }),
    ...(noTransform === undefined ? {} : { noTransform }),
    ...(noStore === undefined ? {} : { noStore }),
  };
  return {
    ...(Object.keys(cacheControl).length === 0 ? {} : { cacheControl }),
    ...(compression === false ? { compression: false as const } : {}),
  };
}
