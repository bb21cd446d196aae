/**
 * The export format (contract 1.3, "Moving data"): NDJSON, a header line, one line per pet in
 * ascending id, one line per live key record, and an end line with the SHA-256 of every byte
 * before it. Here: the records' types, the line of each, and the checks of a line read back.
 */
import { isIdempotencyKey } from "../lib/idempotency.ts";
import { printable } from "../lib/printable.ts";
import { isPet, MAX_ID, type Pet } from "../lib/schemas.ts";
import type { KeyRecord } from "../lib/storage/port.ts";

export const EXPORT_FORMAT = "petstore-export";
export const EXPORT_VERSION = 1;

/** The first line of an export. */
export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  /** When the export started (ISO 8601). */
  exportedAt: string;
  /** The id the source's next create would have taken at the least: an import moves its sequence there. */
  nextId: number;
  /** How many pet lines follow. */
  pets: number;
  /** How many key lines follow the pets. */
  keys: number;
}

/** One line of an export, as `exportStore` yields it and `importStore` takes it. */
export type ExportRecord = ExportHeader | { pet: Pet } | { key: KeyRecord } | { end: true; sha256: string };

/** Input that is not an export, or not one this store can take: nothing is written (exit 2). */
export class ImportError extends Error {
  override name = "ImportError";
}

/** The line of a record: its JSON (members in the order the format gives) and a line feed. */
export function lineOf(record: ExportRecord): string {
  if ("pet" in record) {
    const { id, name, categoryId, status } = record.pet;
    return `${JSON.stringify({ pet: { id, name, categoryId, status } })}\n`;
  }
  if ("key" in record) {
    const { scope, key, fingerprint, petId, expiresAt } = record.key;
    return `${JSON.stringify({ key: { scope, key, fingerprint, petId, expiresAt } })}\n`;
  }
  if ("end" in record) return `${JSON.stringify({ end: true, sha256: record.sha256 })}\n`;
  const { format, version, exportedAt, nextId, pets, keys } = record;
  return `${JSON.stringify({ format, version, exportedAt, nextId, pets, keys })}\n`;
}

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
const hasMembers = (value: object, names: string[]) => {
  const own = Object.keys(value);
  return own.length === names.length && names.every((name) => own.includes(name));
};
/** What a line holds, for messages: a short quote of its start. */
const quoteOf = (text: string) => printable(JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text));

/** The header of line 1, or why it is not one. */
export function readHeader(value: unknown): ExportHeader {
  if (typeof value !== "object" || value === null || (value as { format?: unknown }).format !== EXPORT_FORMAT) {
    throw new ImportError(`not a petstore export (its first line has no "format":"${EXPORT_FORMAT}")`);
  }
  const header = value as Record<string, unknown>;
  if (header.version !== EXPORT_VERSION) {
    throw new ImportError(
      `version ${JSON.stringify(header.version)} of the export format is not one this petstore reads (it reads ${EXPORT_VERSION})`,
    );
  }
  if (!hasMembers(header, ["format", "version", "exportedAt", "nextId", "pets", "keys"])) {
    throw new ImportError("the header must have exactly format, version, exportedAt, nextId, pets and keys");
  }
  const { exportedAt, nextId, pets, keys } = header;
  if (typeof exportedAt !== "string" || Number.isNaN(Date.parse(exportedAt))) {
    throw new ImportError("the header's exportedAt is not an ISO time");
  }
  // Up to 2^53, one past the largest id: a store holding pet 2^53-1 exports it as its next id.
  if (typeof nextId !== "number" || !Number.isInteger(nextId) || nextId < 1 || nextId > MAX_ID + 1)
    throw new ImportError("the header's nextId is not an id");
  if (!isCount(pets) || !isCount(keys)) throw new ImportError("the header's pets and keys must be counts");
  return value as ExportHeader;
}

/** The key record of a key line's value, or why it is not one. */
function readKey(value: unknown): KeyRecord {
  if (
    typeof value !== "object" ||
    value === null ||
    !hasMembers(value, ["scope", "key", "fingerprint", "petId", "expiresAt"])
  ) {
    throw new ImportError("a key must have exactly scope, key, fingerprint, petId and expiresAt");
  }
  const { scope, key, fingerprint, petId, expiresAt } = value as Record<string, unknown>;
  if (typeof scope !== "string" || scope.length === 0 || scope.length > 255) {
    throw new ImportError("a key's scope must be 1 to 255 characters");
  }
  if (!isIdempotencyKey(key))
    throw new ImportError("a key's key is not an Idempotency-Key (1 to 255 characters from ! to ~ but \" and \\)");
  if (typeof fingerprint !== "string" || !/^[0-9a-f]{64}$/.test(fingerprint)) {
    throw new ImportError("a key's fingerprint must be 64 lower-case hex digits");
  }
  if (!isCount(petId) || petId < 1) throw new ImportError("a key's petId is not an id");
  if (!isCount(expiresAt)) throw new ImportError("a key's expiresAt is not a time in ms");
  return { scope, key, fingerprint, petId, expiresAt };
}

/** A line after the header, read: a pet, a key or the end; or why it is none of them. */
export function readRecord(text: string): { pet: Pet } | { key: KeyRecord } | { end: true; sha256: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ImportError(`not JSON: ${quoteOf(text)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ImportError(`not a pet, key or end line: ${quoteOf(text)}`);
  }
  const record = value as Record<string, unknown>;
  if (hasMembers(record, ["pet"])) {
    const pet = record.pet;
    if (!isPet(pet) || !hasMembers(pet, ["id", "name", "categoryId", "status"])) {
      throw new ImportError("not a valid Pet (exactly id, name, categoryId and status, by the rules of a create)");
    }
    return { pet };
  }
  if (hasMembers(record, ["key"])) return { key: readKey(record.key) };
  if (hasMembers(record, ["end", "sha256"]) && record.end === true && typeof record.sha256 === "string") {
    return { end: true, sha256: record.sha256 };
  }
  throw new ImportError(`not a pet, key or end line: ${quoteOf(text)}`);
}
