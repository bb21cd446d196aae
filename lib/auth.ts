/**
 * Bearer authentication. How a token is checked is pluggable: `apiKeys([...])` for a
 * list of keys compared in constant time, or any `(token) => boolean` the embedder supplies.
 */
import { hash } from "node:crypto";

/** Decides whether a bearer token is acceptable. May be async (e.g. a lookup). */
export type VerifyToken = (token: string) => boolean | Promise<boolean>;

/** What `createPetStore({ auth })` accepts: a verify function, or a list of keys. */
export type AuthOption = VerifyToken | readonly string[] | { keys: readonly string[] } | { verify: VerifyToken };

/** SHA-256 as 64 hex characters: a hex string costs a third of a Buffer to hand back from C++. */
const digest = (s: string): string => hash("sha256", s, "hex");

/**
 * True when two digests (64 hex characters each) are equal, in time that does not depend on
 * where they differ: every character is compared, with no early exit (what `timingSafeEqual`
 * does for Buffers, without making two Buffers a request).
 */
function sameDigest(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < 64; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * A verifier for a fixed list of API keys. Every key is compared, always, through
 * SHA-256 digests of equal length in constant time, so neither the length nor the position of a
 * match leaks.
 *
 * @example createPetStore({ auth: apiKeys(process.env.KEYS.split(",")) })
 */
export function apiKeys(keys: readonly string[]): VerifyToken {
  if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== "string" || k.length === 0)) {
    throw new TypeError("apiKeys: expected a non-empty list of non-empty strings");
  }
  const digests = keys.map(digest);
  return (token: string) => {
    const candidate = digest(token);
    let ok = false;
    for (const d of digests) ok = sameDigest(candidate, d) || ok;
    return ok;
  };
}

export function toVerifier(auth: AuthOption | undefined): VerifyToken {
  if (typeof auth === "function") return auth;
  if (Array.isArray(auth)) return apiKeys(auth);
  if (auth && typeof auth === "object") {
    if ("verify" in auth && typeof auth.verify === "function") return auth.verify;
    if ("keys" in auth) return apiKeys((auth as { keys: readonly string[] }).keys);
  }
  throw new TypeError(
    "createPetStore: `auth` is required: a list of API keys, apiKeys([...]), or a verify function (token) => boolean",
  );
}

export type Credentials =
  | { kind: "missing" }
  | { kind: "invalid" } // wrong scheme or empty token
  | { kind: "bearer"; token: string };

/** Reads `Authorization: Bearer <token>`; the scheme name is case-insensitive. */
export function readBearer(header: string | string[] | undefined): Credentials {
  if (header === undefined) return { kind: "missing" };
  if (Array.isArray(header)) return header.length === 0 ? { kind: "missing" } : { kind: "invalid" };
  if (header.length < 7 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") {
    return header.trim() === "" ? { kind: "missing" } : { kind: "invalid" };
  }
  const token = header.slice(7).trim();
  return token === "" ? { kind: "invalid" } : { kind: "bearer", token };
}
