/**
 * JSON text the core writes by hand: strings escaped only when they need it, and pets in the
 * contract's key order with their length in UTF-8 bytes counted while they are written.
 */
import type { Pet } from "./schemas.ts";
import { PET_TEXT, type StoredPet } from "./storage/port.ts";

/** Characters that are one UTF-8 byte and need no JSON escape: printable ASCII but `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string literal for `s`: quoted as it is when nothing in it needs escaping. */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * JSON text with its length in UTF-8 bytes, counted while it is built: the usual case (ASCII
 * names) then costs no second pass over the text, which `Buffer.byteLength` would need.
 */
export interface JsonText {
  text: string;
  bytes: number;
}

/** One pet's JSON text, in the contract's key order, and its UTF-8 bytes beyond one a character. */
interface PetText {
  id: number;
  text: string;
  extra: number;
}

/** Printable ASCII: one UTF-8 byte a character. */
const ASCII = /^[\x20-\x7e]*$/;

function petText(p: Pet): PetText {
  // The text the storage read, already in the contract's form: used as it is.
  const stored = (p as StoredPet)[PET_TEXT];
  if (stored !== undefined) {
    return { id: p.id, text: stored, extra: ASCII.test(stored) ? 0 : Buffer.byteLength(stored) - stored.length };
  }
  const plain = PLAIN.test(p.name);
  const name = plain ? `"${p.name}"` : JSON.stringify(p.name);
  const extra = plain ? 0 : Buffer.byteLength(name) - name.length;
  return {
    id: p.id,
    text: `{"id":${p.id},"name":${name},"categoryId":${p.categoryId},"status":"${p.status}"}`,
    extra,
  };
}

/**
 * Slots of the cache of pet texts (a power of two; about 2.5 MB when all are filled). The cache is
 * direct-mapped: a pet's slot is its id modulo the size, and a newer pet takes the slot of an older
 * one. Memory stays bounded, a lookup is an array read (a Map lookup, hashing the id, cost several
 * times more, twenty times a page), and consecutive ids, which pages read, never collide.
 */
const CACHE_SLOTS = 16_384;

/**
 * Serialises pets, whatever key order the storage returned. With `cacheById` (storage whose pets
 * never change: an id always names the same pet), each pet's text is built once: a page is then
 * a join of flat strings, where building and flattening it costs several times more.
 */
export class PetJson {
  private readonly slots: (PetText | undefined)[] | undefined;

  constructor(cacheById: boolean) {
    this.slots = cacheById ? new Array<PetText | undefined>(CACHE_SLOTS).fill(undefined) : undefined;
  }

  /** One pet; `cache: false` for a pet unlikely to be read again soon (a new one). */
  one(pet: Pet, cache = true): JsonText {
    const t = cache ? this.text(pet) : petText(pet);
    return { text: t.text, bytes: t.text.length + t.extra };
  }

  /** A JSON array of pets. */
  many(pets: readonly Pet[]): JsonText {
    let text = "[";
    let extra = 0;
    for (let i = 0; i < pets.length; i++) {
      const t = this.text(pets[i] as Pet);
      text += i === 0 ? t.text : `,${t.text}`;
      extra += t.extra;
    }
    text += "]";
    return { text, bytes: text.length + extra };
  }

  private text(p: Pet): PetText {
    const slots = this.slots;
    if (slots === undefined) return petText(p);
    const slot = p.id & (CACHE_SLOTS - 1); // ids past 2^31 wrap (ToInt32): still a slot
    const cached = slots[slot];
    if (cached !== undefined && cached.id === p.id) return cached;
    const t = petText(p);
    t.text.charCodeAt(0); // flattens the text once, here, rather than at every write
    slots[slot] = t;
    return t;
  }
}
