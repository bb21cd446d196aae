/**
 * Request ids: the client's `X-Request-Id` when the contract allows it, else a new random UUID
 * (version 4) from Web Crypto, which Node, Bun, Deno, Workers and browsers all have. Each id is a
 * string of its own: a caller may keep any of them for as long as it likes.
 */
import type { HeaderValue } from "./http.ts";
import { firstValue } from "./http.ts";

/** A client's `X-Request-Id` that is echoed back: 1 to 128 characters of `[A-Za-z0-9._-]`. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * A new random UUID (version 4): the request id of an answer that has no request to take one
 * from (a client error answered by the adapter, before the core saw a request).
 * @example newRequestId() // "3b241101-e2bb-4255-8caf-4136c566a962"
 */
export function newRequestId(): string {
  const crypto = globalThis.crypto;
  // randomUUID is missing only outside secure contexts (a page served over plain http).
  return typeof crypto.randomUUID === "function"
    ? crypto.randomUUID()
    : uuidOf(crypto.getRandomValues(new Uint8Array(16)));
}

/** The version 4 UUID of 16 random bytes, as RFC 9562 writes it. */
export function uuidOf(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (byte, i) => {
    if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
    if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    return byte.toString(16).padStart(2, "0");
  }).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The request id of a response: the client's `X-Request-Id` when it is 1 to 128 characters of
 * `[A-Za-z0-9._-]`, otherwise a new random one.
 */
export function requestIdOf(header: HeaderValue): string {
  const value = firstValue(header);
  return value !== undefined && REQUEST_ID_PATTERN.test(value) ? value : newRequestId();
}
