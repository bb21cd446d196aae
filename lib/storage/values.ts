/**
 * What every Keyv-backed storage shares: the Keyv that holds the pet values, and the checks of
 * what a backend hands back. Keyv is set to throw store errors (it swallows them by default,
 * which would turn a dead backend into "not found"), and data it cannot decode is kept as a
 * marker, so that it is reported as an invalid value (500) rather than as a dead backend (503).
 */
import Keyv, { type KeyvStoreAdapter } from "keyv";
import * as v from "valibot";
import { PetStoreError } from "../errors.ts";
import { MAX_ID, Pet } from "../schemas.ts";

const UNDECODABLE = Symbol("undecodable");

interface Undecodable {
  [UNDECODABLE]: unknown;
}

function isUndecodable(value: unknown): value is Undecodable {
  return typeof value === "object" && value !== null && UNDECODABLE in value;
}

export interface PetValuesOptions {
  /** Keyv's namespace. */
  namespace: string;
  /** False for stores that prefix keys themselves (@keyv/redis writes `ns::key`). */
  keyPrefix: boolean;
}

/** A Keyv on `store` that throws every store error and never throws on undecodable data. */
export function petValues(store: KeyvStoreAdapter, options: PetValuesOptions): Keyv<unknown> {
  const values = new Keyv<unknown>({
    store,
    namespace: options.namespace,
    useKeyPrefix: options.keyPrefix,
    throwOnErrors: true,
  });
  const decode = values.deserialize;
  if (decode !== undefined) {
    values.deserialize = async <Value>(raw: string) => {
      try {
        return await decode<Value>(raw);
      } catch (error) {
        return { value: { [UNDECODABLE]: error } as Value };
      }
    };
  }
  // Failures reach callers as rejections; an unheard "error" event must not crash the process.
  values.on("error", () => {});
  return values;
}

function invalid(kind: string, what: string, cause?: unknown): PetStoreError {
  // The client sees the table's generic message; the details go to the logs through `cause`.
  const detail = new Error(`${kind} storage: ${what}`, cause === undefined ? undefined : { cause });
  return new PetStoreError("internal_error", undefined, { cause: detail });
}

/**
 * The Pet stored under `id`, checked: anything else (undecodable, another shape, another id)
 * is an `internal_error`, never passed on.
 */
export function toPet(value: unknown, id: number, kind: string): Pet {
  if (value === undefined) return missingValue(id, kind);
  if (isUndecodable(value)) throw invalid(kind, `the stored value of pet ${id} is not valid JSON`, value[UNDECODABLE]);
  const parsed = v.safeParse(Pet, value);
  if (!parsed.success) {
    const issues = parsed.issues.map((i) => `${i.path?.map((p) => String(p.key)).join(".") || "value"}: ${i.message}`);
    throw invalid(kind, `the stored value of pet ${id} is not a valid Pet (${issues.join("; ")})`);
  }
  const pet = parsed.output;
  if (pet.id !== id) throw invalid(kind, `the value stored as pet ${id} says it is pet ${pet.id}`);
  return { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status };
}

/** An id in the index whose value is gone: the data was changed outside this store. */
export function missingValue(id: number, kind: string): never {
  throw invalid(kind, `pet ${id} is in the index but its value is missing`);
}

/** A newly assigned id, checked to be a safe integer: past 2^53-1 the store refuses to create. */
export function checkNewId(id: unknown, kind: string): number {
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID) return id;
  throw sequenceExhausted(kind, id);
}

/** The error for a sequence that cannot hand out another safe-integer id. */
export function sequenceExhausted(kind: string, last?: unknown): PetStoreError {
  const got = last === undefined ? "" : ` (got ${String(last)})`;
  return invalid(kind, `the id sequence is exhausted${got}: ids must stay at most ${MAX_ID}`);
}

/** An id read back from an index, checked like a new one. */
export function indexedId(raw: unknown, kind: string): number {
  const id = typeof raw === "string" ? Number(raw) : raw;
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1) return id;
  throw invalid(kind, `the index holds an invalid id (${String(raw)})`);
}

/**
 * Writes a new pet: the value first, then the index entries. A crash between the two leaves a
 * value that no list and no get can see (both go through the index), never a half-made pet.
 */
export async function writePet(
  values: Keyv<unknown>,
  pet: Pet,
  addToIndex: (pet: Pet) => Promise<unknown>,
): Promise<Pet> {
  await values.set(String(pet.id), pet);
  await addToIndex(pet);
  return pet;
}

/**
 * Reads one pet: visible only when its index entry exists. Both reads go out together; when the
 * value read raced ahead of a concurrent create that has since indexed the pet, it is read again
 * (the value is always written before the index entry).
 */
export async function readPet(
  id: number,
  kind: string,
  isIndexed: () => Promise<boolean>,
  readValue: () => Promise<unknown>,
): Promise<Pet | undefined> {
  const [indexed, first] = await Promise.all([isIndexed(), readValue()]);
  if (!indexed) return undefined;
  return toPet(first === undefined ? await readValue() : first, id, kind);
}

/** The pets of a page of ids read from an index, in that order. */
export async function readPets(values: Keyv<unknown>, ids: readonly number[], kind: string): Promise<Pet[]> {
  if (ids.length === 0) return [];
  const found = await values.getMany(ids.map(String));
  return ids.map((id, i) => toPet(found[i], id, kind));
}

/** The error of a call on a closed store (reported as storage_unavailable). */
export function storageClosed(kind: string): Error {
  return new Error(`${kind} storage: the store is closed`);
}

/**
 * The text Keyv stores for `pet` (its own serializer, `{"value":…}` with no expiry), so that a
 * value written by an atomic create around Keyv reads back through Keyv as any other.
 */
export async function serializedPet(values: Keyv<unknown>, pet: Pet): Promise<string> {
  const serialize = values.serialize;
  if (serialize === undefined) return JSON.stringify({ value: pet });
  return serialize({ value: pet });
}

/**
 * The text Keyv stores for a pet whose id is not known yet (a Redis script takes it): the parts
 * before and after the id's digits. @example const [head, tail] = await serializedPetAround(values, data)
 */
export async function serializedPetAround(values: Keyv<unknown>, data: Omit<Pet, "id">): Promise<[string, string]> {
  const text = await serializedPet(values, {
    id: 0,
    name: data.name,
    categoryId: data.categoryId,
    status: data.status,
  });
  const head = '{"value":{"id":';
  if (!text.startsWith(`${head}0,`)) throw new Error(`unexpected Keyv serialization: ${text.slice(0, 20)}`);
  return [head, text.slice(head.length + 1)];
}
