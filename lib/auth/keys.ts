/**
 * API keys: `apiKeys([...])` checks a bearer token against a list of keys, each plain (every
 * scope) or named, scoped and with an optional expiry, given as the key or as its SHA-256 digest
 * (what a keys file keeps). A few plain keys are compared with the token in constant time, as
 * before; more keys, or any digest, are found by the token's digest in a map: one hash whatever
 * the number of keys, never a comparison per key.
 */
import { sha256Hex } from "../digest.ts";
import type { FindPrincipal, Principal, VerifyToken } from "./principal.ts";
import { everyScope, isPrincipalId, SCOPES, tokenId } from "./principal.ts";

/** A named key: who it is, what it may do, until when. */
export interface ApiKey {
  /** The principal's id: logs, spans and rate limits name the caller by it. Several keys may share one (a rotation). */
  name: string;
  /** The key itself; or give `sha256` instead. */
  key?: string;
  /** SHA-256 of the key, 64 hex digits: what a keys file keeps instead of the key. */
  sha256?: string;
  /** What it may do (`pets:read`, `pets:write`); default every scope. */
  scopes?: readonly string[];
  /** When it stops working (ms since the epoch, or a Date); default never. */
  expiresAt?: number | Date;
}

/** A key once checked: its principal, digest, expiry, and the key itself when given. */
interface KeyEntry {
  principal: Principal;
  digest: string;
  expiresAt: number;
  key: string | undefined;
}

/** Up to this many plain keys are compared directly: each comparison costs less than one hash. */
const DIRECT_KEYS = 8;
/** Tokens up to this length are compared with plain keys directly; longer ones through their digest. */
const DIRECT = 256;
/** The length of a SHA-256 digest in hex. */
const DIGEST = 64;
const HEX_DIGEST = /^[0-9a-f]{64}$/;

const encoder = new TextEncoder();
/** A lone surrogate: a string holding one has no exact UTF-8 form (an encoder writes U+FFFD for it). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A key's UTF-8 bytes, repeated to `length`: what `same` compares a token's bytes with, read by
 * index (no modulo), so that a key costs the same whatever its length.
 */
function repeatedBytes(key: string, length: number): Uint8Array {
  const one = encoder.encode(key);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = one[i % one.length] as number;
  return bytes;
}

/**
 * True when the token's first `length` UTF-8 bytes are the key of `bytes` (its length `keyLength`),
 * in time that depends on the token's length only (which its sender knows): every byte is
 * compared, with no early exit. The token is encoded first, in one call: reading a string cut
 * from a header character by character is slow.
 */
function same(token: Uint8Array, length: number, bytes: Uint8Array, keyLength: number): boolean {
  let diff = length ^ keyLength;
  for (let i = 0; i < length; i++) diff |= (token[i] as number) ^ (bytes[i] as number);
  return diff === 0;
}

/** A key's UTF-16 code units, repeated to `length`: what `sameUnits` compares a token with. */
function repeatedUnits(key: string, length: number): Uint16Array {
  const units = new Uint16Array(length);
  for (let i = 0; i < length; i++) units[i] = key.charCodeAt(i % key.length);
  return units;
}

/**
 * `same` for a token that holds a lone surrogate, which has no exact UTF-8 form: compared code
 * unit by code unit (slow, and only ever for such a token), in constant time as well.
 */
function sameUnits(token: string, units: Uint16Array, keyLength: number): boolean {
  let diff = token.length ^ keyLength;
  for (let i = 0; i < token.length; i++) diff |= token.charCodeAt(i) ^ (units[i] as number);
  return diff === 0;
}

const SHAPE =
  'apiKeys: expected a non-empty list of keys: strings, or { name, key | sha256, scopes?, expiresAt? } (e.g. { name: "ci", key, scopes: ["pets:read"] })';

/** One key of the list, checked: a TypeError naming its position and what is wrong (never the key). */
function checkKey(given: unknown, at: number): KeyEntry {
  if (typeof given === "string") {
    if (given.length === 0) throw new TypeError(`${SHAPE}: key ${at} is empty`);
    return { principal: everyScope(tokenId(given)), digest: sha256Hex(given), expiresAt: Infinity, key: given };
  }
  if (given === null || typeof given !== "object") throw new TypeError(`${SHAPE}: key ${at} is neither`);
  const { name, key, sha256, scopes, expiresAt } = given as Partial<ApiKey>;
  const where = `apiKeys: key ${at}`;
  if (!isPrincipalId(name))
    throw new TypeError(`${where}: name must be 1 to 255 characters without control characters`);
  if ((key === undefined) === (sha256 === undefined)) throw new TypeError(`${where} ("${name}"): give key or sha256`);
  if (key !== undefined && (typeof key !== "string" || key.length === 0)) {
    throw new TypeError(`${where} ("${name}"): key must be a non-empty string`);
  }
  if (sha256 !== undefined && (typeof sha256 !== "string" || !HEX_DIGEST.test(sha256))) {
    throw new TypeError(`${where} ("${name}"): sha256 must be 64 lower-case hex digits`);
  }
  if (scopes !== undefined && (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string" && s !== ""))) {
    throw new TypeError(`${where} ("${name}"): scopes must be a list of scope names, e.g. ["pets:read"]`);
  }
  const until = expiresAt instanceof Date ? expiresAt.getTime() : (expiresAt ?? Infinity);
  if (typeof until !== "number" || Number.isNaN(until)) {
    throw new TypeError(`${where} ("${name}"): expiresAt must be a Date or ms since the epoch`);
  }
  const principal =
    scopes === undefined ? everyScope(name) : Object.freeze({ id: name, scopes: Object.freeze([...scopes]) });
  return { principal, digest: key === undefined ? (sha256 as string) : sha256Hex(key), expiresAt: until, key };
}

/** The principal of a found key, or false once it expired. */
function live(entry: KeyEntry | undefined): Principal | false {
  if (entry === undefined) return false;
  return entry.expiresAt === Infinity || Date.now() < entry.expiresAt ? entry.principal : false;
}

/** Where a verifier made by `apiKeys` keeps the one that answers plain keys' principals too. */
const PRINCIPALS = Symbol("petstore.keyPrincipals");

/**
 * A verifier for a list of API keys: `true` for a plain key (as since 1.0), the principal of a
 * named key (its name and scopes, until it expires), `false` otherwise. In a store, a plain key's
 * principal holds every scope and is named `key:` and the start of its digest. The same key twice
 * is a mistake (a TypeError).
 *
 * @example createPetStore({ auth: apiKeys([{ name: "shop", key: process.env.SHOP_KEY, scopes: ["pets:read"] }]) })
 */
export function apiKeys(keys: readonly (string | ApiKey)[]): VerifyToken {
  const principals = keyPrincipals(keys);
  const plain = new Set(keys.filter((k) => typeof k === "string").map((k) => tokenId(k)));
  const verify: VerifyToken = (token) => {
    const principal = principals(token);
    return principal !== false && plain.has(principal.id) && principal.scopes === SCOPES ? true : principal;
  };
  return Object.defineProperty(verify, PRINCIPALS, { value: principals });
}

/** The verifier a store uses for `keys`: the one behind `apiKeys(…)`, answering every key's principal. */
export function principalsOf(verify: VerifyToken): FindPrincipal | undefined {
  return (verify as { [PRINCIPALS]?: FindPrincipal })[PRINCIPALS];
}

/** The principal of the key a token is, or false: what `apiKeys` and a store's `keys` check with. */
export function keyPrincipals(keys: readonly (string | ApiKey)[]): (token: string) => Principal | false {
  if (!Array.isArray(keys) || keys.length === 0) throw new TypeError(SHAPE);
  const entries = keys.map(checkKey);
  const byDigest = new Map<string, KeyEntry>();
  for (const entry of entries) {
    const other = byDigest.get(entry.digest);
    if (other !== undefined) {
      throw new TypeError(`apiKeys: "${entry.principal.id}" and "${other.principal.id}" are the same key`);
    }
    byDigest.set(entry.digest, entry);
  }
  // The usual case, a few plain keys: compared directly (no hash per request), each of them every time.
  if (entries.length <= DIRECT_KEYS && entries.every((e) => e.key !== undefined)) {
    const direct = entries.map((entry) => {
      const key = entry.key as string;
      return {
        entry,
        bytes: repeatedBytes(key, DIRECT * 3),
        length: encoder.encode(key).length,
        // A key with a lone surrogate has no exact UTF-8 form: only `sameUnits` may find it.
        exact: !LONE_SURROGATE.test(key),
        units: repeatedUnits(key, DIRECT),
        unitLength: key.length,
      };
    });
    const digests = entries.map((entry) => ({ entry, bytes: repeatedBytes(entry.digest, DIGEST) }));
    const scratch = new Uint8Array(DIRECT * 3); // a UTF-16 unit is at most 3 bytes of UTF-8
    return (token: string) => {
      let found: KeyEntry | undefined;
      if (token.length > DIRECT) {
        const { written } = encoder.encodeInto(sha256Hex(token), scratch);
        for (const d of digests) if (same(scratch, written, d.bytes, DIGEST)) found = d.entry;
      } else if (LONE_SURROGATE.test(token)) {
        for (const d of direct) if (sameUnits(token, d.units, d.unitLength)) found = d.entry;
      } else {
        const { written } = encoder.encodeInto(token, scratch);
        for (const d of direct) if (same(scratch, written, d.bytes, d.length) && d.exact) found = d.entry;
      }
      return live(found);
    };
  }
  return (token: string) => live(byDigest.get(sha256Hex(token)));
}
