/**
 * What every backend's transfer calls decide alike: which pets of a batch are still to write and
 * whether one meets another pet at its id, the same for key records, and an import's mark as text.
 */
import type { Pet } from "../schemas.ts";
import { InvalidRecordError } from "./failures.ts";
import type { ImportMark, KeyRecord } from "./port.ts";

/** True when `a` and `b` are the same pet, field by field. */
export const samePet = (a: Pet, b: Pet): boolean =>
  a.id === b.id && a.name === b.name && a.categoryId === b.categoryId && a.status === b.status;

/** True when `a` and `b` are the same key record, field by field. */
export const sameKeyRecord = (a: KeyRecord, b: KeyRecord): boolean =>
  a.scope === b.scope &&
  a.key === b.key &&
  a.fingerprint === b.fingerprint &&
  a.petId === b.petId &&
  a.expiresAt === b.expiresAt;

/** One text per scope and key, to look records up by. */
export const keyName = ({ scope, key }: { scope: string; key: string }): string => `${scope}\n${key}`;

/** The key record of an SQL row of `<table>_idempotency` (SQLite and Postgres name its columns alike). */
export const keyRecordOfRow = (row: Record<string, unknown>): KeyRecord => ({
  scope: String(row.scope),
  key: String(row.key),
  fingerprint: String(row.fingerprint),
  petId: Number(row.pet_id),
  expiresAt: Number(row.expires_at),
});

/**
 * The pets of `pets` not stored yet, or the id of the first whose id holds another pet.
 * `stored(pet)`: the pet stored at `pet.id`, or undefined.
 */
export function missingPets(
  pets: readonly Pet[],
  stored: (pet: Pet) => Pet | undefined,
): { missing: Pet[] } | { conflict: number } {
  const missing: Pet[] = [];
  for (const pet of pets) {
    const there = stored(pet);
    if (there === undefined) missing.push(pet);
    else if (!samePet(there, pet)) return { conflict: pet.id };
  }
  return { missing };
}

/**
 * The records of `records` that no live record holds yet, or the first whose scope and key a
 * different live record holds. `live(record)`: the unexpired record of its scope and key, or undefined.
 */
export function freshKeys(
  records: readonly KeyRecord[],
  live: (record: KeyRecord) => KeyRecord | undefined,
): { fresh: KeyRecord[] } | { conflict: KeyRecord } {
  const fresh: KeyRecord[] = [];
  for (const record of records) {
    const there = live(record);
    if (there === undefined) fresh.push(record);
    else if (!sameKeyRecord(there, record)) return { conflict: record };
  }
  return { fresh };
}

/** An import's mark as a backend stores it: JSON text. */
export const markText = (mark: ImportMark): string => JSON.stringify(mark);

/**
 * The mark of a stored text, checked for its shape: anything else is an invalid record at `where`
 * (an unfinished import whose mark cannot be read fails closed: creates stay refused).
 */
export function markOfText(text: unknown, backend: string, where: string): ImportMark {
  let value: unknown;
  try {
    value = JSON.parse(String(text));
  } catch {}
  const mark = value as Partial<ImportMark> | undefined;
  const isId = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (
    typeof mark?.input === "string" &&
    typeof mark.startedAt === "string" &&
    isId(mark.lastId) &&
    Array.isArray(mark.pets) &&
    mark.pets.every((range) => Array.isArray(range) && range.length === 2 && range.every(isId) && range[0] <= range[1])
  ) {
    return { input: mark.input, startedAt: mark.startedAt, lastId: mark.lastId as number, pets: mark.pets };
  }
  throw new InvalidRecordError(backend, where, "not an import's mark");
}
