/**
 * SHA-256 (and SHA-1, for the storages' statement and script names) of a string: Node's
 * `crypto.hash` where the runtime has it (Node, Bun, Deno), else the package's own portable
 * implementation (lib/sha.ts; a browser: no `node:` import on that path).
 * Fingerprints are computed per keyed create, so the native path is kept wherever there is one.
 */
import { nodeBuiltin } from "./node-builtin.ts";
import { bytesToHex, sha1, sha256 } from "./sha.ts";

type Encoding = "hex" | "base64url";
type HashFunction = (algorithm: string, data: string, encoding: Encoding) => string;

const encoder = new TextEncoder();
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The base64url digit of the low six bits of `n`. */
const digit = (n: number): string => BASE64URL.charAt(n & 63);

/** Bytes as base64url without padding, as Node's "base64url" encoding gives them. */
export function toBase64url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += digit(n >> 18) + digit(n >> 12) + digit(n >> 6) + digit(n);
  }
  if (i < bytes.length) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += digit(n >> 18) + digit(n >> 12);
    if (i + 1 < bytes.length) out += digit(n >> 6);
  }
  return out;
}

/** The digests computed in plain JavaScript (lib/sha.ts): what runs where the runtime has no Node crypto. */
export const portableHash: HashFunction = (algorithm, data, encoding) => {
  const bytes = (algorithm === "sha1" ? sha1 : sha256)(encoder.encode(data));
  return encoding === "hex" ? bytesToHex(bytes) : toBase64url(bytes);
};

const nativeHash = nodeBuiltin<{ hash?: HashFunction }>("node:crypto")?.hash;

/** Which implementation this runtime uses: "node" (crypto.hash) or "portable" (lib/sha.ts). */
export const DIGESTS: "node" | "portable" = typeof nativeHash === "function" ? "node" : "portable";

const hash: HashFunction = typeof nativeHash === "function" ? nativeHash : portableHash;

/** SHA-256 of the UTF-8 text, as 64 hex characters (from C++, a hex string costs a third of a Buffer). */
export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

/** SHA-256 of the UTF-8 text, as 43 base64url characters. */
export function sha256Base64url(text: string): string {
  return hash("sha256", text, "base64url");
}

/** SHA-1 of the UTF-8 text, as 40 hex characters (names, not security: Redis script ids, statement names). */
export function sha1Hex(text: string): string {
  return hash("sha1", text, "hex");
}
