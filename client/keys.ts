/**
 * Idempotency keys: a new random UUID per create unless the caller gives one, and the check of a
 * given one (the contract's rule, as the server applies it), so that a key that cannot be sent is
 * the same `invalid_idempotency_key` as in process, not a failure of fetch.
 */

/** True for 1 to 255 characters from `!` to `~` except `"` and `\` (lib/idempotency.ts's rule). */
export function isIdempotencyKey(key: unknown): key is string {
  return typeof key === "string" && /^[\x21\x23-\x5b\x5d-\x7e]{1,255}$/.test(key);
}

/** A new random UUID (version 4), also where `crypto.randomUUID` is missing (pages served over plain http). */
export function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
