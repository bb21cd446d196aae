/**
 * The HTTP-neutral request and response of the adapter protocol, and the few helpers every
 * adapter needs to read a request the way the core does. It imports only chars.ts, which imports
 * nothing: every file of the core and every adapter can use it without an import circle.
 */
import { hasUpperCase } from "./chars.ts";

/** A header's value as Node gives it: one string, a repeated header's strings, or absent. */
export type HeaderValue = string | string[] | undefined;

/**
 * Reads the body on demand, rejecting with `PetStoreError("payload_too_large")` as soon as more
 * than `limit` bytes arrive. The core calls it at most once, and only after routing and auth.
 */
export type BodyReader = (limit: number) => Promise<Uint8Array | string>;

/**
 * Every request header the core reads (lower-case; `traceparent` and `tracestate` when spans are
 * recorded, through the W3C propagator: docs/tracing.md). An adapter whose runtime makes listing all
 * headers costly (Deno's `Headers` sorts and joins them on every iteration) may pass only these:
 * the answer is the same.
 */
export const REQUEST_HEADERS = Object.freeze([
  "access-control-request-method",
  "authorization",
  "content-encoding",
  "content-length",
  "content-type",
  "idempotency-key",
  "if-none-match",
  "origin",
  "traceparent",
  "tracestate",
  "x-forwarded-for",
  "x-request-id",
] as const);

/** A request as any adapter can build it. */
export interface PetStoreRequest {
  method: string;
  /** The path only, e.g. "/v1/pets" (percent-encoded, as sent). */
  path: string;
  /** The raw query string, without its leading "?" (a leading "?" is tolerated). */
  query?: string | null | undefined;
  /** @deprecated since 1.1 (removed in 2.0): use `query`. */
  search?: string | null | undefined;
  /** Header names in any case: the core lower-cases them. */
  headers: Readonly<Record<string, HeaderValue>>;
  /** The body: bytes, text, or a reader called only once the request is allowed to send one. */
  body?: Uint8Array | string | BodyReader | null | undefined;
  /** "http" or "https", as the client called (a trace's `url.scheme`); "http" when not given. */
  scheme?: string | undefined;
  /**
   * The client's address, as the socket gives it ("127.0.0.1", "::1"): failed authentications are
   * throttled per address. Absent (in-process calls): not throttled.
   */
  clientAddress?: string | undefined;
}

/** What the core returns for every request. */
export interface PetStoreResponse {
  status: number;
  /**
   * Lower-case header names. `content-length` is always set (for HEAD and a `304`, that of the 200's
   * body), except on a `204` (a CORS preflight's answer), which has no body and no length. A `304`'s
   * is for an adapter that codes answers (is the 200 large enough?); the package's adapters do not
   * send it, as some HTTP parsers would wait for that body.
   */
  headers: Record<string, string>;
  /** The body text, or "" (always "" for HEAD). */
  body: string;
  /** The trace id of the request's span, when one was recorded (for a log line; never sent). */
  traceId?: string;
  /** The id of the principal that called, once authenticated (for a log line; never sent). */
  principal?: string;
}

/** A header's value, or the first of a repeated header's values. */
export function firstValue(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when `target` (a path, with or without its query string) is the base path or below it:
 * the requests an adapter hands to the store. Every path is under the empty base path.
 *
 * @example isUnderBasePath("/v1/pets?limit=5", "/v1") // true; isUnderBasePath("/v10", "/v1") // false
 */
export function isUnderBasePath(target: string, basePath: string): boolean {
  if (basePath === "") return true;
  if (!target.startsWith(basePath)) return false;
  const next = target.charCodeAt(basePath.length);
  return Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */;
}

/**
 * The headers with lower-case names, at the edge, once (as Apollo's HeaderMap does): the same
 * object when they already are (Node's always are). Two names that differ only in case become one
 * repeated header.
 */
export function lowerCaseHeaders(
  headers: Readonly<Record<string, HeaderValue>>,
): Readonly<Record<string, HeaderValue>> {
  let upper = false;
  for (const name in headers) {
    if (hasUpperCase(name)) {
      upper = true;
      break;
    }
  }
  if (!upper) return headers;
  const lower: Record<string, HeaderValue> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const seen = lower[key];
    lower[key] = seen === undefined ? value : ([] as string[]).concat(seen, value);
  }
  return lower;
}
