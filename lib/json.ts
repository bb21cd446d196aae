/**
 * JSON text the core writes by hand: strings escaped only when they need it, and pets in the
 * contract's key order with their length in UTF-8 bytes counted while they are written.
 */
import { isPlainJson } from "./chars.ts";
import type { Pet } from "./schemas.ts";
import { utf8Length } from "./text.ts";

/** A JSON string literal for `s`: quoted as it is when nothing in it needs escaping. */
export function jsonString(s: string): string {
  return isPlainJson(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * JSON text with its length in UTF-8 bytes, counted while it is built: the usual case (ASCII
 * names) then costs no second pass over the text.
 */
export interface JsonText {
  text: string;
  bytes: number;
}

/**
 * One pet's JSON text, in the contract's key order, its UTF-8 bytes beyond one per character, the
 * pet it was built from, and its validator once one was asked for (lib/validators.ts fills in
 * `h1`, `h2`: (0, 0) until then, and `etag`).
 */
export interface PetText {
  id: number;
  name: string;
  categoryId: number;
  status: string;
  text: string;
  extra: number;
  h1: number;
  h2: number;
  etag: string | undefined;
}

/** The part of a pet's JSON text after its id, around its name already written as a JSON string. */
function petTail(name: string, data: Omit<Pet, "id" | "name">): string {
  return `,"name":${name},"categoryId":${data.categoryId},"status":"${data.status}"}`;
}

/**
 * A pet's JSON text, in the contract's key order, around its id: `head + id + tail`. The one
 * writer of a pet's text: answers, and the copies a backend serves (SQLite's), are made by it.
 */
export function petTextAround(data: Omit<Pet, "id">): [string, string] {
  return ['{"id":', petTail(jsonString(data.name), data)];
}

function petText(p: Pet): PetText {
  // A plain name is ASCII, one byte a character: only other names are counted again.
  const plain = isPlainJson(p.name);
  const name = plain ? `"${p.name}"` : JSON.stringify(p.name);
  const text = `{"id":${p.id}${petTail(name, p)}`;
  const extra = plain ? 0 : utf8Length(name) - name.length;
  return {
    id: p.id,
    name: p.name,
    categoryId: p.categoryId,
    status: p.status,
    text,
    extra,
    h1: 0,
    h2: 0,
    etag: undefined,
  };
}

/**
 * Slots of the cache of pet texts (a power of two). A pet's slot is its id modulo the size and a
 * newer pet takes an older one's: memory stays bounded, and consecutive ids, which pages read,
 * never collide.
 */
const CACHE_SLOTS = 16_384;

const EMPTY_ARRAY: JsonText = Object.freeze({ text: "[]", bytes: 2 });

/** True when `text` is `pet`'s JSON text: it has the pet's very fields (a pet's text is made of nothing else). */
export function isTextOf(text: PetText, pet: Pet): boolean {
  return (
    text.id === pet.id && text.name === pet.name && text.categoryId === pet.categoryId && text.status === pet.status
  );
}

/** The JSON array of kept pet texts, `bytes` long in UTF-8 (brackets and commas included). */
export function join(entries: readonly PetText[], bytes: number): JsonText {
  if (entries.length === 0) return EMPTY_ARRAY;
  let text = "[";
  for (let i = 0; i < entries.length; i++)
    text += i === 0 ? (entries[i] as PetText).text : `,${(entries[i] as PetText).text}`;
  return { text: `${text}]`, bytes };
}

/**
 * Serialises pets, whatever key order the storage returned. Each pet's text is built once and
 * kept in the slot of its id, one cache per store; a kept text serves only a pet with the same
 * fields (a text is made of nothing else), so a storage emptied and refilled, whose ids name
 * other pets, is served right.
 */
export class PetJson {
  private readonly slots: (PetText | undefined)[] = new Array<PetText | undefined>(CACHE_SLOTS).fill(undefined);

  /** One pet, its text kept for the next answer that shows it. */
  one(pet: Pet): JsonText {
    const t = this.text(pet);
    return { text: t.text, bytes: t.text.length + t.extra };
  }

  /** One pet's kept text, with what its validator needs (lib/validators.ts). */
  entry(pet: Pet): PetText {
    return this.text(pet);
  }

  /** A pet just created: its text is not kept, as most new pets are not read again soon. */
  created(pet: Pet): JsonText {
    const t = petText(pet);
    return { text: t.text, bytes: t.text.length + t.extra };
  }

  /** A JSON array of pets, joined in one piece (the answer is written as it is). */
  many(pets: readonly Pet[]): JsonText {
    const entries = new Array<PetText>(pets.length);
    let bytes = pets.length === 0 ? 2 : pets.length + 1;
    for (let i = 0; i < pets.length; i++) {
      const t = this.text(pets[i] as Pet);
      entries[i] = t;
      bytes += t.text.length + t.extra;
    }
    return join(entries, bytes);
  }

  private text(p: Pet): PetText {
    const slot = p.id & (CACHE_SLOTS - 1); // ids past 2^31 wrap (ToInt32): still a slot
    const cached = this.slots[slot];
    if (cached !== undefined && isTextOf(cached, p)) return cached;
    const t = petText(p);
    this.slots[slot] = t;
    return t;
  }
}
