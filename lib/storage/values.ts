/**
 * What every Keyv-backed storage shares: the Keyv that holds the pet values, and the checks of
 * what a backend hands back. Keyv is set to throw store errors (it swallows them by default,
 * which would turn a dead backend into "not found"), and data it cannot decode is kept as a
 * marker, so that it is reported as an invalid value (500) rather than as a dead backend (503).
 */
import Keyv, { type KeyvStoreAdapter } from "keyv";
import type { Pet } from "../schemas.ts";
import { isPet, MAX_ID } from "../schemas.ts";
import { InvalidRecordError } from "./failures.ts";
import type { ListPage } from "./port.ts";

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

/** Keyv's own decoder of each Keyv made here (its default: synchronous), for texts a backend read itself. */
const decoders = new WeakMap<Keyv<unknown>, (raw: string) => unknown>();

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
    decoders.set(values, decode as (raw: string) => unknown);
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

/**
 * How a store names its records in what it reports: the backend, and the real key (or table) of a
 * pet's value, of its index and of its id sequence, as an operator would look for them.
 * @example { backend: "redis", pet: (id) => `shop::${id}`, index: "shop:ids", sequence: "shop:seq" }
 */
export interface RecordNames {
  backend: string;
  pet(id: number): string;
  index: string;
  sequence: string;
}

/** What is wrong with a value that is not a Pet, for the logs (never for the client). */
function petProblem(value: unknown): string {
  if (typeof value !== "object" || value === null) return `a ${value === null ? "null" : typeof value}`;
  const fields = value as Record<string, unknown>;
  const wrong = ["id", "name", "categoryId", "status"].filter((field) => !isPet({ ...VALID, [field]: fields[field] }));
  return wrong.length > 0 ? `${wrong.join(", ")} missing or invalid` : "another shape";
}
const VALID: Pet = { id: 1, name: "x", categoryId: 1, status: "sold" };

/** A new object with a pet's four fields: the core hands pets to callers as they are, and a caller may change its own. */
export const copyPet = (pet: Pet): Pet => ({
  id: pet.id,
  name: pet.name,
  categoryId: pet.categoryId,
  status: pet.status,
});

/**
 * The Pet stored under `id`, checked for its shape (cheap: no schema parse): anything else
 * (undecodable, another shape, another id) is an `InvalidRecordError` naming its key, never passed on.
 */
export function toPet(value: unknown, id: number, names: RecordNames): Pet {
  if (value === undefined) return missingValue(id, names);
  if (isUndecodable(value)) throw new InvalidRecordError(names.backend, names.pet(id), "not valid JSON");
  if (!isPet(value)) {
    throw new InvalidRecordError(names.backend, names.pet(id), `not a valid Pet (${petProblem(value)})`);
  }
  if (value.id !== id) {
    throw new InvalidRecordError(names.backend, names.pet(id), `its id is ${String(value.id).slice(0, 20)}, not ${id}`);
  }
  return copyPet(value);
}

/**
 * The pet whose Keyv record a backend read itself (Keyv's stored text, or null/undefined when the
 * key is missing), decoded by this Keyv's own deserializer and checked as `toPet` checks it.
 * @example petOfKeyvText(7, '{"value":{"id":7,"name":"Rex","categoryId":1,"status":"sold"}}', values, names)
 */
export function petOfKeyvText(id: number, raw: unknown, values: Keyv<unknown>, names: RecordNames): Pet {
  return toPet(decodedValue(raw, values), id, names);
}

/** Slots of a store's cache of decoded texts (a power of two): see `makeReader`. */
const READ_SLOTS = 256;

/**
 * A store's reader of the texts it reads over and over (a polled page, bench P1-P3): the last text
 * decoded in each slot of ids is kept with its checked pet, so the very same text read again gives
 * a copy of its pet without being decoded or checked again. `decode` answers the pet and whether its
 * text may be kept (a Keyv text that expires one day may not: its pet then disappears).
 */
function makeReader(decode: (id: number, raw: string) => { pet: Pet; lasting: boolean }) {
  const slots: ({ id: number; raw: string; pet: Pet } | undefined)[] = new Array(READ_SLOTS).fill(undefined);
  return (id: number, raw: string): Pet => {
    const at = id & (READ_SLOTS - 1);
    const kept = slots[at];
    if (kept !== undefined && kept.id === id && kept.raw === raw) return copyPet(kept.pet);
    const { pet, lasting } = decode(id, raw);
    if (lasting) slots[at] = { id, raw, pet: copyPet(pet) };
    return pet;
  };
}

/** `petOfKeyvText` for one store's pages, each text decoded once while it stays the same (`makeReader`). */
export function makeKeyvPetReader(values: Keyv<unknown>, names: RecordNames): (id: number, raw: unknown) => Pet {
  const read = makeReader((id, raw) => {
    const data = decodeRecord(raw, values);
    const lasting = typeof (data as { expires?: unknown } | null)?.expires !== "number";
    return { pet: toPet(valueOfRecord(data), id, names), lasting };
  });
  return (id, raw) => (typeof raw === "string" ? read(id, raw) : petOfKeyvText(id, raw, values, names));
}

/**
 * The pet of a served text, the contract's JSON of a pet that a backend keeps beside its index
 * entry (SQLite's `pet` column), checked as `toPet` checks it. `id`: the one asked for, when
 * known; otherwise the text's own, which must be a valid id.
 */
export function petOfServedText(text: string, names: RecordNames, id?: number): Pet {
  const where = id === undefined ? names.index : `${names.index}:${id}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidRecordError(names.backend, where, "the served copy is not valid JSON");
  }
  const own = typeof value === "object" && value !== null ? (value as { id?: unknown }).id : undefined;
  if (id === undefined && !(typeof own === "number" && Number.isSafeInteger(own) && own >= 1)) {
    throw new InvalidRecordError(names.backend, where, "a served copy names no valid pet id");
  }
  const pet = id ?? (own as number);
  try {
    return toPet(value, pet, names);
  } catch (error) {
    // The copy is what is bad, not the pet's record: say so, with the copy's place.
    if (!(error instanceof InvalidRecordError)) throw error;
    throw new InvalidRecordError(names.backend, `${names.index}:${pet}`, `the served copy is ${error.reason}`);
  }
}

/** The id a served text starts with (`{"id":7,…` as creates write it), or undefined. */
function leadingId(text: string): number | undefined {
  if (!text.startsWith('{"id":')) return undefined;
  const id = Number(text.slice(6, text.indexOf(",", 6)));
  return Number.isSafeInteger(id) && id >= 1 ? id : undefined;
}

/**
 * `petOfServedText` for one store's pages, each text decoded once while it stays the same
 * (`makeReader`, by the id asked for or the one the text starts with). Whatever is not a kept
 * valid pet of the id asked for is answered by `petOfServedText` itself, its error included.
 */
export function makeServedTextReader(names: RecordNames): (text: string, id?: number) => Pet {
  const read = makeReader((_slot, raw) => ({ pet: petOfServedText(raw, names), lasting: true }));
  return (text, id) => {
    const slot = id ?? leadingId(text);
    if (slot !== undefined) {
      try {
        const pet = read(slot, text);
        if (id === undefined || pet.id === id) return pet;
      } catch {}
    }
    return petOfServedText(text, names, id);
  };
}

/** True when a string in `data` (a value, not a key, at any depth) starts with ":". */
function holdsColonText(data: unknown): boolean {
  if (typeof data === "string") return data.startsWith(":");
  if (typeof data !== "object" || data === null) return false;
  for (const key in data) if (holdsColonText((data as Record<string, unknown>)[key])) return true;
  return false;
}

/** Keyv's record in `raw`, decoded as Keyv's own decoder decodes it, or a marker for undecodable text. */
function decodeRecord(raw: string, values: Keyv<unknown>): unknown {
  try {
    // Keyv's decoder reads as JSON.parse does but for strings starting with ":" (Keyv's escape):
    // those texts go through it, the others skip its reviver (bench B1, B2).
    const data: unknown = JSON.parse(raw);
    return holdsColonText(data) ? (decoders.get(values) ?? JSON.parse)(raw) : data;
  } catch (error) {
    return { [UNDECODABLE]: error };
  }
}

/** The value of a decoded Keyv record: undefined for none or an expired one, the undecodable marker as it is. */
function valueOfRecord(data: unknown): unknown {
  if (isUndecodable(data)) return data;
  if (typeof data !== "object" || data === null) return undefined;
  const { value, expires } = data as { value?: unknown; expires?: unknown };
  if (typeof expires === "number" && expires < Date.now()) return undefined; // Keyv treats it as gone
  return value;
}

/** What Keyv would read from `raw`: the value, undefined for a missing or expired one, a marker for undecodable text. */
export function decodedValue(raw: unknown, values: Keyv<unknown>): unknown {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "string") return { [UNDECODABLE]: new Error(`a ${typeof raw} where text was stored`) };
  return valueOfRecord(decodeRecord(raw, values));
}

/** An id in the index whose value is gone: the data was changed outside this store. */
export function missingValue(id: number, names: RecordNames): never {
  throw new InvalidRecordError(
    names.backend,
    names.pet(id),
    "the pet is in the index but its value is missing or of another type",
  );
}

/** A newly assigned id, checked to be a safe integer: past 2^53-1 the store refuses to create. */
export function checkNewId(id: unknown, names: RecordNames): number {
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID) return id;
  throw sequenceExhausted(names, id);
}

/** The error for a sequence that cannot hand out another safe-integer id. */
export function sequenceExhausted(names: RecordNames, last?: unknown): InvalidRecordError {
  const got = last === undefined ? "" : ` (got ${String(last).slice(0, 24)})`;
  return new InvalidRecordError(
    names.backend,
    names.sequence,
    `the id sequence is exhausted or not an integer${got}: ids must stay at most ${MAX_ID}`,
  );
}

/** An id read back from an index, checked like a new one. */
export function indexedId(raw: unknown, names: RecordNames): number {
  const id = typeof raw === "string" ? Number(raw) : raw;
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1) return id;
  throw new InvalidRecordError(
    names.backend,
    names.index,
    `the index holds an invalid id (${String(raw).slice(0, 24)})`,
  );
}

/**
 * Reads one pet: visible only when its index entry exists. Both reads go out together; when the
 * value read raced ahead of a concurrent create that has since indexed the pet, it is read again
 * (the value is always written before the index entry).
 */
export async function readPet(
  id: number,
  names: RecordNames,
  isIndexed: () => Promise<boolean>,
  readValue: () => Promise<unknown>,
): Promise<Pet | undefined> {
  const [indexed, first] = await Promise.all([isIndexed(), readValue()]);
  if (!indexed) return undefined;
  return toPet(first === undefined ? await readValue() : first, id, names);
}

/**
 * The pets of `page` without those whose record cannot be decoded, each told to `page.onInvalid`
 * (a page that met one: the slow path). Rows are read in runs after the last one examined, so the
 * page still holds `page.limit` pets when the store has as many. `readRows(after, count)`: up to
 * `count` rows with ids above `after`, ascending, each with its id.
 * @example return readPageSkipping(page, readRows, (row) => petOf(row))
 */
export async function readPageSkipping<Row extends { id: number }>(
  page: ListPage,
  readRows: (after: number, count: number) => Promise<Row[]>,
  decode: (row: Row) => Pet,
): Promise<Pet[]> {
  const pets: Pet[] = [];
  let after = page.after;
  for (;;) {
    const wanted = page.limit - pets.length;
    const rows = await readRows(after, wanted);
    for (const row of rows) {
      try {
        pets.push(decode(row));
      } catch (error) {
        if (!(error instanceof InvalidRecordError) || page.onInvalid === undefined) throw error;
        page.onInvalid(error);
      }
    }
    const last = rows[rows.length - 1];
    if (rows.length < wanted || last === undefined || pets.length >= page.limit) return pets;
    after = last.id;
  }
}

/** The error of a call on a closed store (reported as storage_unavailable). */
export function storageClosed(kind: string): Error {
  return new Error(`${kind} storage: the store is closed`);
}

/**
 * The text Keyv stores for a pet whose id is not known yet (the atomic create takes it): the parts
 * before and after the id's digits, as this Keyv's own serializer writes them, so that a value
 * written around Keyv reads back through Keyv as any other.
 * @example const [head, tail] = keyvTextAround(values, data)
 */
export function keyvTextAround(values: Keyv<unknown>, data: Omit<Pet, "id">): [string, string] {
  const pet: Pet = { id: 0, name: data.name, categoryId: data.categoryId, status: data.status };
  const serialize = values.serialize;
  const text: unknown = serialize === undefined ? JSON.stringify({ value: pet }) : serialize({ value: pet });
  const head = '{"value":{"id":';
  if (typeof text !== "string" || !text.startsWith(`${head}0,`)) {
    throw new Error(`unexpected Keyv serialization: ${String(text).slice(0, 20)}`);
  }
  return [head, text.slice(head.length + 1)];
}
