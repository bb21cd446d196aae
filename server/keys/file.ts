/**
 * The keys file (`PETSTORE_API_KEYS_FILE`): named, scoped API keys kept as SHA-256 digests, so the
 * file never holds a key. JSON, one entry per key:
 * `{ "keys": [{ "name", "prefix", "sha256", "scopes", "createdAt", "expiresAt"? }] }`. `prefix` is
 * the key's public start (what `petstore keys list` shows and `remove` takes). Written through a
 * temporary file and a rename: a server reading it never sees half a file.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import type { ApiKey } from "petstore-lib/auth";
import { SCOPES } from "petstore-lib/auth";

/** One key of the file. */
export interface KeyFileEntry {
  name: string;
  /** The key's first characters ("pets_" and 8 more): public, to tell keys apart. */
  prefix: string;
  /** SHA-256 of the key, hex. */
  sha256: string;
  scopes: string[];
  /** ISO time of `keys add`. */
  createdAt: string;
  /** ISO time the key stops working, when it has one. */
  expiresAt?: string;
}

/** A keys file that cannot be used: the message names the file and what is wrong, never a key. */
export class KeysFileError extends Error {
  override name = "KeysFileError";
}

/** What every key `keys add` makes starts with: a secret scanner can recognise it. */
export const KEY_PREFIX = "pets_";
const PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** A new key: `pets_` and 32 random bytes, base64url. */
export function newKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function digestOf(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The public start of a key. */
export function prefixOf(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

/** The scopes of `--scopes pets:read,pets:write`: each one of the API's. */
export function parseScopes(raw: string): string[] {
  const scopes = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new KeysFileError(
      `--scopes must list scopes of ${SCOPES.join(", ")}, comma-separated (got ${JSON.stringify(raw)})`,
    );
  }
  return [...new Set(scopes)];
}

function checkEntry(entry: unknown, at: number, file: string): KeyFileEntry {
  const e = entry as Partial<KeyFileEntry> | null;
  const where = `${file}: key ${at + 1}`;
  if (e === null || typeof e !== "object") throw new KeysFileError(`${where} is not an object`);
  if (typeof e.name !== "string" || e.name === "") throw new KeysFileError(`${where} has no name`);
  if (typeof e.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(e.sha256)) {
    throw new KeysFileError(`${where} ("${e.name}") has no sha256 of 64 hex digits`);
  }
  if (!Array.isArray(e.scopes) || !e.scopes.every((s) => typeof s === "string")) {
    throw new KeysFileError(`${where} ("${e.name}") has no list of scopes`);
  }
  if (e.expiresAt !== undefined && Number.isNaN(Date.parse(e.expiresAt))) {
    throw new KeysFileError(`${where} ("${e.name}") has an expiresAt that is not a time`);
  }
  return e as KeyFileEntry;
}

/** The entries of a keys file; a missing file is an empty list when `missingIsEmpty`. */
export function readKeysFile(file: string, missingIsEmpty = false): KeyFileEntry[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (missingIsEmpty && (error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new KeysFileError(`cannot read the keys file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let parsed: { keys?: unknown };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeysFileError(`the keys file ${file} is not JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || !Array.isArray(parsed.keys)) {
    throw new KeysFileError(`the keys file ${file} must be { "keys": [...] }`);
  }
  return parsed.keys.map((entry, at) => checkEntry(entry, at, file));
}

/** Writes the entries, atomically (a temporary file renamed over the old one). */
export async function writeKeysFile(file: string, keys: readonly KeyFileEntry[]): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

/** The entries as `apiKeys` takes them. */
export function toApiKeys(entries: readonly KeyFileEntry[]): ApiKey[] {
  return entries.map((e) => ({
    name: e.name,
    sha256: e.sha256,
    scopes: e.scopes,
    ...(e.expiresAt === undefined ? {} : { expiresAt: Date.parse(e.expiresAt) }),
  }));
}
