/**
 * What every Keyv-backed storage shares: the Keyv that holds the pet values, and the checks of
 * what a backend hands back. Keyv is set to throw store errors (it swallows them by default,
 * which would turn a dead backend into "not found"), and data it cannot decode is kept as a
 * marker, so that it is reported as an invalid value (500) rather than as a dead backend (503).
 */
import Keyv, { type KeyvStoreAdapter } from "keyv";
import type { PetStoreError } from "../errors.ts";
import { jsonString } from "../json.ts";
import type { Pet, PetStatus } from "../schemas.ts";
import { isPet, isPetName, MAX_ID } from "../schemas.ts";
import { invalidRecord } from "./failures.ts";

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

/** Keyv's key of pet `id`: how the logs name a pet's record. */
const petKey = (id: number) => `pets:${id}`;

/** What is wrong with a value that is not a Pet, for the logs (never for the client). */
function petProblem(value: unknown): string {
  if (typeof value !== "object" || value === null) return `a ${value === null ? "null" : typeof value}`;
  const fields = value as Record<string, unknown>;
  const wrong = ["id", "name", "categoryId", "status"].filter((field) => !isPet({ ...VALID, [field]: fields[field] }));
  return wrong.length > 0 ? `${wrong.join(", ")} missing or invalid` : "another shape";
}
const VALID: Pet = { id: 1, name: "x", categoryId: 1, status: "sold" };

/**
 * The Pet stored under `id`, checked for its shape (cheap: no schema parse): anything else
 * (undecodable, another shape, another id) is an `internal_error`, never passed on.
 */
export function toPet(value: unknown, id: number, kind: string): Pet {
  if (value === undefined) return missingValue(id, kind);
  if (isUndecodable(value)) throw invalidRecord(kind, petKey(id), "not valid JSON");
  if (!isPet(value)) throw invalidRecord(kind, petKey(id), `not a valid Pet (${petProblem(value)})`);
  if (value.id !== id) throw invalidRecord(kind, petKey(id), `its id is ${String(value.id).slice(0, 20)}, not ${id}`);
  return { id: value.id, name: value.name, categoryId: value.categoryId, status: value.status };
}

/**
 * The text Keyv stores for a pet when it is the contract's own JSON text: `{"value":` + the pet +
 * `}` (no expiry), with a name that neither JSON nor Keyv escapes (no quote, backslash or control
 * character; no leading ":", which Keyv doubles), ids of at most 16 digits. It is what every create
 * writes for such a name, and its fields are read by the expression, without a JSON parse.
 */
const CANONICAL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON never holds a raw control character; one here is refused
  /^\{"value":\{"id":([1-9][0-9]{0,15}),"name":"([^"\\\x00-\x1f:][^"\\\x00-\x1f]*)","categoryId":([1-9][0-9]{0,15}),"status":"(available|pending|sold)"\}\}$/;

/** A stored text already checked: its pet's fields (see `storedPet`). */
interface CheckedText {
  id: number;
  raw: string;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/**
 * Slots of the cache of checked texts (a power of two), direct-mapped by id as PetJson's cache of
 * pet texts, and small on purpose: it spares the check to the pets read over and over (a polled
 * first page), not to a whole store, so a page of a large store costs what one of a small store
 * does. A hit needs the very same text, so a slot can never serve another pet's fields: a pet
 * recreated under a reused id (after `clear()`, by any process) simply misses.
 */
const CHECKED_SLOTS = 256;
const checked: (CheckedText | undefined)[] = new Array<CheckedText | undefined>(CHECKED_SLOTS).fill(undefined);

/**
 * The pet whose value a backend read itself (Keyv's stored text, or null/undefined when the key is
 * missing), checked as `toPet` checks it. Text in the contract's form costs one regular expression
 * the first time (a text seen before, compared whole, costs none); any other text goes through
 * Keyv's own decoder.
 * @example storedPet(7, '{"value":{"id":7,"name":"Rex","categoryId":1,"status":"sold"}}', values, "redis")
 */
export function storedPet(id: number, raw: unknown, values: Keyv<unknown>, kind: string): Pet {
  if (typeof raw === "string") {
    const hit = checkedText(id, raw, CANONICAL);
    if (hit !== undefined) return { id, name: hit.name, categoryId: hit.categoryId, status: hit.status };
  }
  return toPet(decodedValue(raw, values), id, kind);
}

/**
 * The fields of `raw`, the stored text of pet `id`, when `pattern` (id, name, categoryId, status)
 * reads them and they are a valid pet's: from the cache when the very same text was seen last in
 * the id's slot, else by the pattern (and then kept). Undefined when the pattern does not read it.
 */
function checkedText(id: number, raw: string, pattern: RegExp): CheckedText | undefined {
  const slot = id & (CHECKED_SLOTS - 1);
  const hit = checked[slot];
  if (hit !== undefined && hit.id === id && hit.raw === raw) return hit;
  const match = pattern.exec(raw);
  if (match === null) return undefined;
  const categoryId = Number(match[3]);
  if (Number(match[1]) !== id || categoryId > MAX_ID || !isPetName(match[2] as string)) return undefined;
  const fields = { id, raw, name: match[2] as string, categoryId, status: match[4] as PetStatus };
  checked[slot] = fields;
  return fields;
}

/**
 * A pet's served text as a backend keeps it beside its index entry (SQLite's `pet` column): the
 * contract's JSON of the pet, `{"id":…,"name":…,"categoryId":…,"status":…}`. The same check as
 * `storedPet` without Keyv's envelope: a name that needs no escape costs one regular expression (a
 * text seen before none); any other text is parsed.
 */
const PET_TEXT =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON never holds a raw control character; one here is refused
  /^\{"id":([1-9][0-9]{0,15}),"name":"([^"\\\x00-\x1f]+)","categoryId":([1-9][0-9]{0,15}),"status":"(available|pending|sold)"\}$/;

/** The pet whose served text (see PET_TEXT) a backend read beside its index entry, checked as `toPet` checks it. */
export function servedPet(id: number, text: string, kind: string): Pet {
  const hit = checkedText(id, text, PET_TEXT);
  if (hit !== undefined) return { id, name: hit.name, categoryId: hit.categoryId, status: hit.status };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRecord(kind, `index:${id}`, "the served copy is not valid JSON");
  }
  return toPet(value, id, kind);
}

/**
 * `Number(text.slice(6, comma))`, an id of up to 15 digits read digit by digit: `Number()` of a
 * slice goes through V8's runtime, several times the cost for the usual id.
 */
function idBetween(text: string, comma: number): number {
  if (comma > 21) return Number(text.slice(6, comma));
  let id = 0;
  for (let i = 6; i < comma; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return Number(text.slice(6, comma));
    id = id * 10 + digit;
  }
  return id;
}

/** The pet whose served text (see PET_TEXT) a backend read, its id read from the text itself. */
export function servedPetOf(text: string, kind: string): Pet {
  const comma = text.indexOf(",");
  const id = text.startsWith('{"id":') && comma > 6 ? idBetween(text, comma) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw invalidRecord(kind, "index", "a served copy names no valid pet id");
  return servedPet(id, text, kind);
}

/** A pet's served text (see PET_TEXT) around its id, which the create takes: `head + id + tail`. */
export function petTextAround(data: Omit<Pet, "id">): [string, string] {
  const rest = JSON.stringify({ name: data.name, categoryId: data.categoryId, status: data.status });
  return ['{"id":', `,${rest.slice(1)}`];
}

/** What Keyv would read from `raw`: the value, undefined for a missing or expired one, a marker for undecodable text. */
function decodedValue(raw: unknown, values: Keyv<unknown>): unknown {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "string") return { [UNDECODABLE]: new Error(`a ${typeof raw} where text was stored`) };
  const decode = decoders.get(values) ?? JSON.parse;
  let data: unknown;
  try {
    data = decode(raw);
  } catch (error) {
    return { [UNDECODABLE]: error };
  }
  if (typeof data !== "object" || data === null) return undefined;
  const { value, expires } = data as { value?: unknown; expires?: unknown };
  if (typeof expires === "number" && expires < Date.now()) return undefined; // Keyv treats it as gone
  return value;
}

/** An id in the index whose value is gone: the data was changed outside this store. */
export function missingValue(id: number, kind: string): never {
  throw invalidRecord(kind, petKey(id), "the pet is in the index but its value is missing or of another type");
}

/** A newly assigned id, checked to be a safe integer: past 2^53-1 the store refuses to create. */
export function checkNewId(id: unknown, kind: string): number {
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID) return id;
  throw sequenceExhausted(kind, id);
}

/** The error for a sequence that cannot hand out another safe-integer id. */
export function sequenceExhausted(kind: string, last?: unknown): PetStoreError {
  const got = last === undefined ? "" : ` (got ${String(last).slice(0, 24)})`;
  return invalidRecord(
    kind,
    "sequence",
    `the id sequence is exhausted or not an integer${got}: ids must stay at most ${MAX_ID}`,
  );
}

/** An id read back from an index, checked like a new one. */
export function indexedId(raw: unknown, kind: string): number {
  const id = typeof raw === "string" ? Number(raw) : raw;
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1) return id;
  throw invalidRecord(kind, "index", `the index holds an invalid id (${String(raw).slice(0, 24)})`);
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

/** The error of a call on a closed store (reported as storage_unavailable). */
export function storageClosed(kind: string): Error {
  return new Error(`${kind} storage: the store is closed`);
}

/**
 * The text Keyv stores for a pet whose id is not known yet (the atomic create takes it): the parts
 * before and after the id's digits, as Keyv's own serializer writes them (`{"value":…}` with no
 * expiry), so that a value written around Keyv reads back through Keyv as any other. Built
 * directly when this Keyv's serializer writes what `keyvTextAround` does (checked once per Keyv):
 * its walk of the object cost a create about a microsecond. Synchronous: Keyv's default
 * serializer is. @example const [head, tail] = serializedPetAround(values, data)
 */
export function serializedPetAround(values: Keyv<unknown>, data: Omit<Pet, "id">): [string, string] {
  let direct = directKeyvText.get(values);
  if (direct === undefined) {
    direct = PROBES.every((probe) => sameText(keyvTextAround(probe), serializedByKeyv(values, probe)));
    directKeyvText.set(values, direct);
  }
  return direct ? keyvTextAround(data) : serializedByKeyv(values, data);
}

/** Per Keyv: true when its serializer writes a pet's value as `keyvTextAround` does. */
const directKeyvText = new WeakMap<Keyv<unknown>, boolean>();
/** Pets whose names Keyv's serializer treats apart: escapes, a leading ":" (which it doubles), other scripts. */
const PROBES: Omit<Pet, "id">[] = [
  { name: "Rex", categoryId: 1, status: "available" },
  { name: ':x"\\\u2028é🐕\u0001', categoryId: 9007199254740991, status: "sold" },
];

function sameText(a: [string, string], b: [string, string]): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

/** Keyv's default serializer's text of a pet's value: JSON, a string that starts with ":" given another ":". */
function keyvTextAround(data: Omit<Pet, "id">): [string, string] {
  const name = data.name.startsWith(":") ? `:${data.name}` : data.name;
  return ['{"value":{"id":', `,"name":${jsonString(name)},"categoryId":${data.categoryId},"status":"${data.status}"}}`];
}

/** The same text from Keyv's serializer itself. */
function serializedByKeyv(values: Keyv<unknown>, data: Omit<Pet, "id">): [string, string] {
  const pet: Pet = { id: 0, name: data.name, categoryId: data.categoryId, status: data.status };
  const serialize = values.serialize;
  const text: unknown = serialize === undefined ? JSON.stringify({ value: pet }) : serialize({ value: pet });
  const head = '{"value":{"id":';
  if (typeof text !== "string" || !text.startsWith(`${head}0,`)) {
    throw new Error(`unexpected Keyv serialization: ${String(text).slice(0, 20)}`);
  }
  return [head, text.slice(head.length + 1)];
}
