/**
 * Idempotent creates: the `Idempotency-Key` value (IETF httpapi draft; Stripe sends it unquoted),
 * the caller's scope (a digest of the bearer token, never the token) and the request's
 * fingerprint (SHA-256 of the validated NewPet with defaults applied, in canonical key order).
 */
import { sha256Base64url, sha256Hex } from "./digest.ts";
import { PetStoreError } from "./errors.ts";
import type { PetData } from "./storage/port.ts";

/** How long a key is kept by default: 24 hours. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** The longest key accepted. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The longest in-process scope accepted. */
export const MAX_SCOPE_LENGTH = 255;

/** True for a key of 1 to 255 characters from `!` to `~` except `"` and `\`. */
export function isIdempotencyKey(key: unknown): key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/**
 * The key an `Idempotency-Key` header carries, or undefined when it is malformed: a
 * structured-field string (`"abc"`) or the same characters unquoted (`abc`). Inside quotes the
 * key characters are the same ones (no escapes: `"` and `\` are not key characters).
 *
 * @example parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"') // "8e03978e-…"
 */
export function parseIdempotencyKey(header: string): string | undefined {
  let key = header;
  // Optional whitespace around a field value is not part of it (RFC 9110 5.5).
  if (key.length > 0 && (key.charCodeAt(0) <= 0x20 || key.charCodeAt(key.length - 1) <= 0x20)) {
    key = key.replace(/^[ \t]+|[ \t]+$/g, "");
  }
  if (key.length >= 2 && key.charCodeAt(0) === 0x22 && key.charCodeAt(key.length - 1) === 0x22) {
    key = key.slice(1, -1);
  }
  return isIdempotencyKey(key) ? key : undefined;
}

/**
 * The scope of a bearer token's keys: SHA-256 of the token, base64url (43 characters). Two
 * callers' identical keys are two keys; the token itself is never stored.
 */
export function scopeOf(token: string): string {
  return sha256Base64url(token);
}

/**
 * The fingerprint of a create: SHA-256 (hex) of the NewPet with defaults applied, in canonical key
 * order, so `{"name":"a","categoryId":1}` and `{"categoryId":1,"name":"a","status":"available"}`
 * are the same request.
 */
export function fingerprintOf(pet: PetData): string {
  return sha256Hex(JSON.stringify({ name: pet.name, categoryId: pet.categoryId, status: pet.status }));
}

/** Options of an idempotent in-process create. */
export interface IdempotentCreateOptions {
  /** The key, as in the header (without quotes): 1 to 255 characters from `!` to `~` except `"` and `\`. */
  idempotencyKey: string;
  /**
   * Whose key it is (default: the in-process caller, a scope of its own). Pass `scopeOf(token)`
   * to share keys with the HTTP caller of that bearer token.
   */
  scope?: string;
}

/** The key of an idempotent create once checked, with the caller's scope. */
export interface CheckedKey {
  scope: string;
  key: string;
}

/** The key and scope of an in-process idempotent create, checked (`invalid_idempotency_key` otherwise). */
export function checkIdempotentOptions(options: IdempotentCreateOptions): CheckedKey {
  if (options === null || typeof options !== "object" || !isIdempotencyKey(options.idempotencyKey)) {
    throw new PetStoreError("invalid_idempotency_key");
  }
  const scope = options.scope ?? "";
  // No NUL: Postgres text cannot hold one, and a scope must be a scope on every backend.
  if (typeof scope !== "string" || scope.length > MAX_SCOPE_LENGTH || scope.includes("\0")) {
    throw new PetStoreError(
      "invalid_idempotency_key",
      `scope must be a string of at most ${MAX_SCOPE_LENGTH} characters, without NUL.`,
    );
  }
  return { scope, key: options.idempotencyKey };
}
