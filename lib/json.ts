/**
 * JSON text the core writes by hand: strings escaped only when they need it, and pets in the
 * contract's key order with their length in UTF-8 bytes counted while they are written.
 */
import { isPlainJson } from "./chars.ts";
import type { Pet } from "./schemas.ts";
import { flat, utf8Length } from "./text.ts";

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

/** One pet's JSON text, in the contract's key order, its UTF-8 bytes beyond one per character, and the pet it was built from. */
interface PetText {
  id: number;
  name: string;
  categoryId: number;
  status: string;
  text: string;
  extra: number;
}

function petText(p: Pet): PetText {
  const plain = isPlainJson(p.name);
  const name = plain ? `"${p.name}"` : JSON.stringify(p.name);
  const extra = plain ? 0 : utf8Length(name) - name.length;
  return {
    id: p.id,
    name: p.name,
    categoryId: p.categoryId,
    status: p.status,
    text: `{"id":${p.id},"name":${name},"categoryId":${p.categoryId},"status":"${p.status}"}`,
    extra,
  };
}

/**
 * Slots of the cache of pet texts (a power of two; about 2.5 MB when all are filled). The cache is
 * direct-mapped: a pet's slot is its id modulo the size, and a newer pet takes the slot of an older
 * one. Memory stays bounded, a lookup is an array read (a Map lookup, hashing the id, cost several
 * times more, twenty times per page), and consecutive ids, which pages read, never collide.
 */
const CACHE_SLOTS = 16_384;

/** Slots of the pages kept (a power of two): at most 256 arrays of at most 100 pets, about 1.5 MB. */
const PAGE_SLOTS = 256;

/** A page's array text and the pet texts it was joined from. */
interface PageText {
  texts: PetText[];
  json: JsonText;
}

const EMPTY_ARRAY: JsonText = Object.freeze({ text: "[]", bytes: 2 });

/**
 * Serialises pets, whatever key order the storage returned. Each pet's text is built once and
 * cached in the slot of its id; a cached text serves only a pet with the same fields (a text is
 * made of nothing else), so a storage emptied and refilled, whose ids name other pets, is served
 * right. The comparisons are cheap: the storages hand the same name string for the same pet.
 * A page is then a join of flat strings, where building and flattening it costs several times more.
 */
export class PetJson {
  private readonly slots: (PetText | undefined)[] = new Array<PetText | undefined>(CACHE_SLOTS).fill(undefined);
  private readonly pages: (PageText | undefined)[] = new Array<PageText | undefined>(PAGE_SLOTS).fill(undefined);

  /** One pet, its text kept for the next answer that shows it. */
  one(pet: Pet): JsonText {
    const t = this.text(pet);
    return { text: t.text, bytes: t.text.length + t.extra };
  }

  /** A pet just created: its text is not kept, as most new pets are not read again soon. */
  created(pet: Pet): JsonText {
    const t = petText(pet);
    return { text: t.text, bytes: t.text.length + t.extra };
  }

  /**
   * A JSON array of pets. The last array built for each first id is kept, flat: a page asked for
   * again with the very same pets (the first page, polled) is served that text, neither joined
   * nor flattened again.
   */
  many(pets: readonly Pet[]): JsonText {
    const n = pets.length;
    if (n === 0) return EMPTY_ARRAY;
    const slot = (pets[0] as Pet).id & (PAGE_SLOTS - 1);
    const kept = this.pages[slot];
    let same = kept !== undefined && kept.texts.length === n;
    const texts = new Array<PetText>(n);
    for (let i = 0; i < n; i++) {
      const t = this.text(pets[i] as Pet);
      texts[i] = t;
      if (same && (kept as PageText).texts[i] !== t) same = false;
    }
    if (same) return (kept as PageText).json;
    let text = "[";
    let extra = 0;
    for (let i = 0; i < n; i++) {
      const t = texts[i] as PetText;
      text += i === 0 ? t.text : `,${t.text}`;
      extra += t.extra;
    }
    text += "]";
    const json = { text: flat(text), bytes: text.length + extra }; // flat once: a kept page is written many times
    this.pages[slot] = { texts, json };
    return json;
  }

  private text(p: Pet): PetText {
    const slot = p.id & (CACHE_SLOTS - 1); // ids past 2^31 wrap (ToInt32): still a slot
    const cached = this.slots[slot];
    if (
      cached !== undefined &&
      cached.id === p.id &&
      cached.name === p.name &&
      cached.categoryId === p.categoryId &&
      cached.status === p.status
    ) {
      return cached;
    }
    const t = petText(p);
    flat(t.text); // once, here, rather than at every write
    this.slots[slot] = t;
    return t;
  }
}
