/**
 * CORS for browser apps (`createPetStore({ cors })`, off by default): a preflight from an allowed
 * origin is answered before authentication, and every answer to an allowed origin names it and
 * exposes the headers a client reads. Another origin's requests are answered as before, without
 * CORS headers: CORS is not authentication. No credentials mode (keys travel in `Authorization`).
 */
import type { HeaderValue } from "./http.ts";
import { firstValue } from "./http.ts";
import { checkOptionNames } from "./options.ts";

/** `createPetStore({ cors })`: the origins a page may call from, and how long a preflight is kept. */
export interface CorsOptions {
  /** Allowed origins (`"https://shop.example"`: scheme, host and port, no path), or `"*"` for any. */
  origins: readonly string[] | "*";
  /** Seconds a browser may keep a preflight's answer (`Access-Control-Max-Age`). Default 600. */
  maxAge?: number;
}

/** The headers the contract's clients read, exposed to page scripts. */
export const EXPOSED_HEADERS =
  "Link, Location, X-Request-Id, Retry-After, Deprecation, Sunset, Idempotent-Replayed, WWW-Authenticate, ETag";
/** Exposed too when the store has rate limits. */
export const RATE_LIMIT_EXPOSED = "RateLimit, RateLimit-Policy";
/** The request headers a page may send. */
export const ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-Id, If-None-Match";

const DEFAULT_MAX_AGE = 600;

/** The CORS policy of a store: which origins, and the headers of their answers, built once. */
export interface Cors {
  /** The headers every answer to `origin` carries, or undefined when it is not allowed. */
  answerHeaders(origin: HeaderValue): Record<string, string> | undefined;
  /** The headers of a preflight's answer for a path allowing `methods`. */
  preflightHeaders(answer: Record<string, string>, methods: string): Record<string, string>;
}

/** True for an origin as browsers send it: `scheme://host[:port]`, nothing more. */
function isOrigin(origin: unknown): origin is string {
  if (typeof origin !== "string") return false;
  try {
    return new URL(origin).origin === origin;
  } catch {
    return false;
  }
}

/** Checks `createPetStore({ cors })`: a clear TypeError for anything that cannot work. */
export function checkCors(option: unknown, where = "createPetStore: cors"): CorsOptions | undefined {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== "object" || Array.isArray(option)) {
    throw new TypeError(`${where} must be { origins: ["https://shop.example", …] | "*", maxAge? }`);
  }
  checkOptionNames(where, option, ["origins", "maxAge"]);
  const { origins, maxAge } = option as CorsOptions;
  if (origins !== "*") {
    if (!Array.isArray(origins) || origins.length === 0) {
      throw new TypeError(`${where}.origins must be "*" or a non-empty list of origins such as "https://shop.example"`);
    }
    const bad = origins.find((origin) => !isOrigin(origin));
    if (bad !== undefined) {
      throw new TypeError(
        `${where}.origins: ${JSON.stringify(bad)} is not an origin (scheme://host[:port], no path or trailing slash)`,
      );
    }
  }
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0)) {
    throw new TypeError(`${where}.maxAge must be a whole number of seconds, 0 or more (got ${JSON.stringify(maxAge)})`);
  }
  return option as CorsOptions;
}

/** The policy of checked options; `rateLimited` exposes the rate limits' headers too. */
export function createCors({ origins, maxAge = DEFAULT_MAX_AGE }: CorsOptions, store: { rateLimited: boolean }): Cors {
  const any = origins === "*";
  const exposed = store.rateLimited ? `${EXPOSED_HEADERS}, ${RATE_LIMIT_EXPOSED}` : EXPOSED_HEADERS;
  const headersFor = (origin: string) =>
    Object.freeze({
      "access-control-allow-origin": origin,
      "access-control-expose-headers": exposed,
      vary: "Origin",
    }) as Record<string, string>;
  // The headers of each allowed origin, made once: one look-up an answer, which copies them in.
  const anyOrigin = any ? headersFor("*") : undefined;
  const byOrigin = new Map<string, Record<string, string>>(any ? [] : origins.map((o) => [o, headersFor(o)]));
  const preflights = new Map<Record<string, string>, Map<string, Record<string, string>>>();
  return {
    answerHeaders(header) {
      const origin = firstValue(header);
      if (origin === undefined) return undefined;
      return anyOrigin ?? byOrigin.get(origin);
    },
    preflightHeaders(answer, methods) {
      let byMethods = preflights.get(answer);
      if (byMethods === undefined) {
        byMethods = new Map();
        if (preflights.size < 1024) preflights.set(answer, byMethods);
      }
      let headers = byMethods.get(methods);
      if (headers === undefined) {
        headers = Object.freeze({
          ...answer,
          "access-control-allow-methods": methods,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": String(maxAge),
        }) as Record<string, string>;
        byMethods.set(methods, headers);
      }
      return headers;
    },
  };
}
