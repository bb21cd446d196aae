/**
 * Bearer authentication. How a token is checked is pluggable: `apiKeys([...])` for a
 * list of keys compared in constant time, or any `(token) => boolean` the embedder supplies.
 */
import { sha256Hex } from "./digest.ts";

/** Decides whether a bearer token is acceptable. May be async (e.g. a lookup). */
export type VerifyToken = (token: string) => boolean | Promise<boolean>;

/** What `createPetStore({ auth })` accepts: a verify function, or a list of keys. */
export type AuthOption = VerifyToken | readonly string[] | { keys: readonly string[] } | { verify: VerifyToken };

/** Tokens up to this length are compared with every key directly; longer ones through digests. */
const DIRECT = 256;
/** The length of a SHA-256 digest in hex. */
const DIGEST = 64;

/**
 * A key's character codes, repeated to `length`: what `same` compares a token with, read by index
 * (no modulo, no string access), so that a key costs the same whatever its length.
 */
function repeatedCodes(key: string, length: number): Uint16Array {
  const codes = new Uint16Array(length);
  for (let i = 0; i < length; i++) codes[i] = key.charCodeAt(i % key.length);
  return codes;
}

/**
 * True when `token` is the key of `codes` (its length `length`, its codes repeated as far as a
 * token may reach), in time that depends on the token's length only (which its sender knows):
 * every character of the token is compared, with no early exit; a length difference counts as a
 * difference. Nothing about the key, not even its length, changes the time taken.
 */
function same(token: string, codes: Uint16Array, length: number): boolean {
  let diff = token.length ^ length;
  for (let i = 0; i < token.length; i++) diff |= token.charCodeAt(i) ^ (codes[i] as number);
  return diff === 0;
}

/**
 * A verifier for a fixed list of API keys. The token is compared with every key, always, in
 * constant time, so neither the length of a key nor the position of a match leaks. A token of
 * up to 256 characters is compared directly (the usual case, about 20 times cheaper than
 * hashing it); a longer one through SHA-256 digests, so that a huge token costs one hash rather
 * than one pass per key.
 *
 * @example createPetStore({ auth: apiKeys(process.env.KEYS.split(",")) })
 */
export function apiKeys(keys: readonly string[]): VerifyToken {
  if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== "string" || k.length === 0)) {
    throw new TypeError("apiKeys: expected a non-empty list of non-empty strings");
  }
  const direct = keys.map((key) => ({ codes: repeatedCodes(key, DIRECT), length: key.length }));
  const digests = keys.map((key) => ({ codes: repeatedCodes(sha256Hex(key), DIGEST), length: DIGEST }));
  return (token: string) => {
    let ok = false;
    if (token.length <= DIRECT) {
      for (const key of direct) ok = same(token, key.codes, key.length) || ok;
    } else {
      const candidate = sha256Hex(token);
      for (const d of digests) ok = same(candidate, d.codes, d.length) || ok;
    }
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
  | { kind: "repeated" } // Authorization given more than once
  | { kind: "bearer"; token: string };

const BEARER = "bearer";

/**
 * True when `header` starts with "Bearer " in any case. Compared by character codes, without the
 * copy and lower-casing of a slice: only "B" and "b" give "b" once the lower-case bit is set, and
 * so on for each letter of "bearer".
 */
function hasBearerScheme(header: string): boolean {
  if (header.length < 7 || header.charCodeAt(6) !== 32) return false;
  for (let i = 0; i < 6; i++) if ((header.charCodeAt(i) | 0x20) !== BEARER.charCodeAt(i)) return false;
  return true;
}

/**
 * True when a header value holds several credentials, one of them Bearer: what two Authorization
 * headers become once joined with ", " (as Web Headers join them). A bearer token never holds a
 * comma (RFC 6750 b64token), while one Digest header may: without a Bearer part it stays one.
 */
function isJoinedBearer(header: string): boolean {
  if (!header.includes(",")) return false;
  return header.split(",").some((part) => /^bearer +\S/i.test(part.trim()));
}

/**
 * Reads `Authorization: Bearer <token>`; the scheme name is case-insensitive. A header given more
 * than once (a list, or values joined with a comma around a Bearer part) is `repeated`.
 */
export function readBearer(header: string | string[] | undefined): Credentials {
  if (header === undefined) return { kind: "missing" };
  if (Array.isArray(header)) {
    if (header.length > 1) return { kind: "repeated" };
    return header.length === 0 ? { kind: "missing" } : readBearer(header[0]);
  }
  if (!hasBearerScheme(header)) {
    if (isJoinedBearer(header)) return { kind: "repeated" };
    return header.trim() === "" ? { kind: "missing" } : { kind: "invalid" };
  }
  const token = header.slice(7).trim();
  if (token === "") return { kind: "invalid" };
  return token.includes(",") ? { kind: "repeated" } : { kind: "bearer", token };
}
